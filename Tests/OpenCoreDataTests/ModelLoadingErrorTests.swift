#if !canImport(CoreData)
import Foundation
import OpenCoreDataShim
import Testing

/// Bad model files: `init?(contentsOf:)` gives `nil`, `init(validatingContentsOf:)` an error in Core Data's
/// domain naming the file, entity, property and line; nothing crashes.
@Suite struct ModelLoadingErrorTests {
    static func contents(_ body: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" sourceLanguage="Swift">
        \(body)
        </model>
        """
    }

    static let company = """
        <entity name="Company" representedClassName="Company">
            <attribute name="name" attributeType="String"/>
            <relationship name="employees" optional="YES" toMany="YES" deletionRule="Cascade" \
        destinationEntity="Employee" inverseName="company" inverseEntity="Employee"/>
        </entity>
        """

    /// Writes a one-version model and returns the error loading it gives, after checking that the failable
    /// initializer gives `nil`.
    func loadingError(_ body: String, file: String = "Model.xcdatamodel/contents") throws -> NSError {
        let directory = try ModelScratchDirectory()
        let url = try directory.write(Self.contents(body), to: file).deletingLastPathComponent()
        #expect(NSManagedObjectModel(contentsOf: url) == nil)
        let error = try #require(throws: NSError.self) { try NSManagedObjectModel(validatingContentsOf: url) }
        #expect(error.domain == NSCocoaErrorDomain)
        #expect((error.userInfo[NSFilePathErrorKey] as? String)?.hasPrefix(directory.url.path) == true)
        #expect(error.localizedDescription.contains(directory.url.path))
        return error
    }

    @Test func aValidModelLoads() throws {
        let directory = try ModelScratchDirectory()
        let body =
            Self.company + """
                <entity name="Employee" representedClassName="Employee">
                    <relationship name="company" optional="YES" maxCount="1" deletionRule="Nullify" \
                destinationEntity="Company" inverseName="employees" inverseEntity="Company"/>
                </entity>
                """
        let url = try directory.write(Self.contents(body), to: "Model.xcdatamodel/contents").deletingLastPathComponent()
        let model = try #require(NSManagedObjectModel(contentsOf: url))
        #expect(
            model.entitiesByName["Company"]?.relationshipsByName["employees"]?.inverseRelationship?.name == "company")
    }

    @Test func malformedXML() throws {
        let error = try loadingError(
            "<entity name=\"Company\"><attribute name=\"name\" attributeType=\"String\"></entity>")
        #expect(error.code == NSCoreDataError)
        #expect(error.userInfo["line"] as? Int != nil)
        #expect(error.localizedDescription.contains("malformed XML"))
    }

    /// A processing instruction without data (`<?xm?>`, as a damaged declaration reads) crashes Foundation's XML
    /// parser on Linux: such a file is refused before it is parsed, in a model, a mapping model and an XML property
    /// list alike.
    @Test func aProcessingInstructionWithoutDataIsRefused() throws {
        let directory = try ModelScratchDirectory()
        let damaged = Self.contents(Self.company).replacingOccurrences(
            of: #"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>"#, with: "<?xm?>")
        let url = try directory.write(damaged, to: "Model.xcdatamodel/contents").deletingLastPathComponent()
        let error = try #require(throws: NSError.self) { try NSManagedObjectModel(validatingContentsOf: url) }
        #expect(error.code == NSCoreDataError)
        #expect(error.userInfo["line"] as? Int == 1)
        #expect(error.localizedDescription.contains("<?xm?>"))

        let inside = try loadingError("<entity name=\"Company\"><?pi?></entity>")
        #expect(inside.userInfo["line"] as? Int == 3)

        let plist = #"<?xml version="1.0"?><plist version="1.0"><dict><?p?></dict></plist>"#
        let mom = try directory.write(plist, to: "Compiled.mom")
        #expect(NSManagedObjectModel(contentsOf: mom) == nil)
        let mapping = try directory.write(plist, to: "Mapping.xcmappingmodel/xcmapping.xml").deletingLastPathComponent()
        #expect(NSMappingModel(contentsOf: mapping) == nil)
        #expect(throws: NSError.self) { try NSMappingModel(validatingContentsOf: mapping) }
    }

    @Test func notAModel() throws {
        let directory = try ModelScratchDirectory()
        let url = try directory.write("<?xml version=\"1.0\"?><plist><dict/></plist>", to: "Model.xcdatamodel/contents")
            .deletingLastPathComponent()
        let error = try #require(throws: NSError.self) { try NSManagedObjectModel(validatingContentsOf: url) }
        #expect(error.code == NSCoreDataError)
        #expect(error.localizedDescription.contains("not a Core Data model"))
    }

    @Test func unknownAttributeType() throws {
        let error = try loadingError(
            "<entity name=\"Company\"><attribute name=\"founded\" attributeType=\"Timestamp\"/></entity>")
        #expect(error.code == NSCoreDataError)
        #expect(error.userInfo["entity"] as? String == "Company")
        #expect(error.userInfo["property"] as? String == "founded")
        #expect(error.localizedDescription.contains("entity 'Company', property 'founded'"))
        #expect(error.localizedDescription.contains("unknown attribute type 'Timestamp'"))
    }

    @Test func missingDestination() throws {
        let error = try loadingError(Self.company)
        #expect(error.code == NSCoreDataError)
        #expect(error.userInfo["entity"] as? String == "Company")
        #expect(error.userInfo["property"] as? String == "employees")
        #expect(error.localizedDescription.contains("destination entity 'Employee' is not in the model"))
    }

    @Test func missingInverse() throws {
        let error = try loadingError(Self.company + "<entity name=\"Employee\"/>")
        #expect(error.userInfo["entity"] as? String == "Company")
        #expect(error.userInfo["property"] as? String == "employees")
        #expect(error.localizedDescription.contains("inverse relationship 'company' does not exist"))
    }

    @Test func inheritanceCycle() throws {
        let error = try loadingError(
            """
            <entity name="A" parentEntity="C"/>
            <entity name="B" parentEntity="A"/>
            <entity name="C" parentEntity="B"/>
            """)
        #expect(error.code == NSCoreDataError)
        #expect(error.userInfo["entity"] as? String == "A")
        #expect(error.localizedDescription.contains("A → C → B → A"))
    }

    @Test func missingParent() throws {
        let error = try loadingError("<entity name=\"Manager\" parentEntity=\"Employee\"/>")
        #expect(error.userInfo["entity"] as? String == "Manager")
        #expect(error.localizedDescription.contains("parent entity 'Employee' is not in the model"))
    }

    @Test func duplicateNames() throws {
        let entities = try loadingError("<entity name=\"Company\"/><entity name=\"Company\"/>")
        #expect(entities.localizedDescription.contains("two entities are named 'Company'"))
        let properties = try loadingError(
            """
            <entity name="Company"><attribute name="name" attributeType="String"/>\
            <attribute name="name" attributeType="String"/></entity>
            """)
        #expect(properties.userInfo["property"] as? String == "name")
    }

    @Test func reservedPropertyNames() throws {
        let error = try loadingError(
            "<entity name=\"Company\"><attribute name=\"description\" attributeType=\"String\"/></entity>")
        #expect(error.code == NSCoreDataError)
        #expect(error.userInfo["property"] as? String == "description")
        #expect(error.localizedDescription.contains("NSManagedObject already uses it"))
    }

    @Test func badValuesNameTheirProperty() throws {
        let number = try loadingError(
            "<entity name=\"Company\"><attribute name=\"size\" attributeType=\"Integer 16\" defaultValueString=\"big\"/></entity>"
        )
        #expect(number.userInfo["property"] as? String == "size")
        #expect(number.localizedDescription.contains("default value 'big' is not a valid Integer 16"))
        let bound = try loadingError(
            "<entity name=\"Company\"><attribute name=\"size\" attributeType=\"Double\" minValueString=\"x\"/></entity>"
        )
        #expect(bound.userInfo["property"] as? String == "size")
        let rule = try loadingError(
            """
            <entity name="Company"><relationship name="parent" maxCount="1" deletionRule="Explode" \
            destinationEntity="Company"/></entity>
            """)
        #expect(rule.localizedDescription.contains("unknown deletion rule 'Explode'"))
        let predicate = try loadingError(
            """
            <entity name="Company"><fetchedProperty name="rivals" optional="YES">\
            <fetchRequest name="fetchedPropertyFetchRequest" entity="Company" predicateString="name ==="/>\
            </fetchedProperty></entity>
            """)
        #expect(predicate.userInfo["property"] as? String == "rivals")
        #expect(predicate.userInfo[NSUnderlyingErrorKey] != nil)
    }

    @Test func missingCurrentVersion() throws {
        let directory = try ModelScratchDirectory()
        try directory.write(Self.contents("<entity name=\"A\"/>"), to: "Model.xcdatamodeld/Model.xcdatamodel/contents")
        try directory.write(
            Self.contents("<entity name=\"B\"/>"), to: "Model.xcdatamodeld/Model 2.xcdatamodel/contents")
        let bundle = directory.url.appendingPathComponent("Model.xcdatamodeld")
        #expect(NSManagedObjectModel(contentsOf: bundle) == nil)
        let error = try #require(throws: NSError.self) { try NSManagedObjectModel(validatingContentsOf: bundle) }
        #expect(error.code == NSCoreDataError)
        #expect(error.localizedDescription.contains("no .xccurrentversion"))
        // Every version stays available, for migration.
        let versions = try NSManagedObjectModel.versionsOfModel(at: bundle)
        #expect(versions.map(\.name) == ["Model", "Model 2"])
        #expect(try NSManagedObjectModel.currentVersionNameOfModel(at: bundle) == nil)

        try directory.write(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>Model 3.xcdatamodel</string></dict></plist>
            """, to: "Model.xcdatamodeld/.xccurrentversion")
        let wrong = try #require(throws: NSError.self) { try NSManagedObjectModel(validatingContentsOf: bundle) }
        #expect(wrong.localizedDescription.contains("'Model 3.xcdatamodel' is not in the bundle"))

        try directory.write(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>Model 2.xcdatamodel</string></dict></plist>
            """, to: "Model.xcdatamodeld/.xccurrentversion")
        let model = try NSManagedObjectModel(validatingContentsOf: bundle)
        #expect(model.entities.map(\.name) == ["B"])
    }

    @Test func missingFiles() throws {
        let directory = try ModelScratchDirectory()
        for name in ["Nothing.xcdatamodeld", "Nothing.xcdatamodel", "Nothing.momd", "Nothing.mom"] {
            let url = directory.url.appendingPathComponent(name)
            #expect(NSManagedObjectModel(contentsOf: url) == nil)
            let error = try #require(throws: NSError.self) { try NSManagedObjectModel(validatingContentsOf: url) }
            #expect(error.domain == NSCocoaErrorDomain)
            #expect(error.code == NSFileReadNoSuchFileError || error.code == NSCoreDataError, "\(name)")
            #expect(error.localizedDescription.contains(name))
        }
        let other = try directory.write("hello", to: "notes.txt")
        #expect(NSManagedObjectModel(contentsOf: other) == nil)
    }

    /// Xcode 3's binary models load; a damaged one fails with a message.
    @Test func xcode3BinaryModels() throws {
        let recipes = try #require(ModelCorpus.modelBundles.first { $0.lastPathComponent == "Recipes.xcdatamodeld" })
        let model = try NSManagedObjectModel(validatingContentsOf: recipes)
        #expect(Set(model.entitiesByName.keys) == ["Image", "Ingredient", "Recipe", "RecipeType"])
        let ingredients = try #require(model.entitiesByName["Recipe"]?.relationshipsByName["ingredients"])
        #expect(ingredients.isToMany && ingredients.deleteRule == .cascadeDeleteRule)
        #expect(ingredients.inverseRelationship?.name == "recipe")
        let name = try #require(model.entitiesByName["Ingredient"]?.attributesByName["name"])
        #expect(name.attributeType == .stringAttributeType && !name.isOptional)
        #expect(name.defaultValue as? String == "Ingredient Name")
        #expect(try NSManagedObjectModel.versionsOfModel(at: recipes).map(\.name) == ["Recipes", "Recipes 2"])

        let directory = try ModelScratchDirectory()
        let copy = directory.url.appendingPathComponent("Old.xcdatamodel")
        try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
        let original = try Data(contentsOf: recipes.appendingPathComponent("Recipes.xcdatamodel/elements"))
        try original.prefix(original.count / 2).write(to: copy.appendingPathComponent("elements"))
        let error = try #require(throws: NSError.self) { try NSManagedObjectModel(validatingContentsOf: copy) }
        #expect(error.code == NSCoreDataError)
        #expect(error.localizedDescription.contains("elements"))
    }

    /// A file nesting 70,000 elements is refused while it is read, before a tree that deep exists to be walked or
    /// released.
    @Test func deeplyNestedXMLIsRefused() throws {
        let depth = 70_000
        let body =
            "<entity name=\"Deep\">" + String(repeating: "<userInfo>", count: depth)
            + String(repeating: "</userInfo>", count: depth) + "</entity>"
        let error = try loadingError(body)
        #expect(error.code == NSCoreDataError)
        #expect(error.localizedDescription.contains("nest more than"), "\(error.localizedDescription)")
    }

    /// A binary property list (the container of compiled models) whose arrays each hold the next, 200,000 deep.
    static func nestedPropertyList(depth: Int) -> Data {
        var bytes = Array("bplist00".utf8)
        var offsets: [Int] = []
        for index in 0..<depth {
            offsets.append(bytes.count)
            if index == depth - 1 {
                bytes.append(0xA0)
            } else {
                bytes.append(0xA1)
                bytes += withUnsafeBytes(of: UInt32(index + 1).bigEndian, Array.init)
            }
        }
        let table = bytes.count
        for offset in offsets { bytes += withUnsafeBytes(of: UInt32(offset).bigEndian, Array.init) }
        bytes += [0, 0, 0, 0, 0, 0, 4, 4]
        for field in [UInt64(depth), 0, UInt64(table)] { bytes += withUnsafeBytes(of: field.bigEndian, Array.init) }
        return Data(bytes)
    }

    @Test func deeplyNestedCompiledModelsAreRefused() throws {
        let directory = try ModelScratchDirectory()
        let url = directory.url.appendingPathComponent("Deep.mom")
        try Self.nestedPropertyList(depth: 200_000).write(to: url)
        let error = try #require(throws: NSError.self) { try NSManagedObjectModel(validatingContentsOf: url) }
        #expect(error.code == NSCoreDataError)
        #expect(error.localizedDescription.contains("nest more than"), "\(error.localizedDescription)")
    }

    static let mutations = 300

    /// Writes `times` copies of `source` with a few random bytes changed to `destination` and loads the model
    /// folder each time: loading may fail, never crash.
    static func mutate(_ source: URL?, into destination: URL, times: Int) throws {
        let original = Array(try Data(contentsOf: try #require(source)))
        try FileManager.default.createDirectory(
            at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<times {
            var bytes = original
            for _ in 0..<3 {
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            try Data(bytes).write(to: destination)
            _ = NSManagedObjectModel(contentsOf: destination.deletingLastPathComponent())
        }
    }

    /// A compiled model cut short or with flipped bytes fails to load, never crashes; nor do damaged Xcode files.
    @Test func damagedCompiledModels() throws {
        let momd = try #require(ModelCorpus.compiledModels.first { $0.lastPathComponent == "SampleModel.momd" })
        let original = try Data(contentsOf: momd.appendingPathComponent("SampleModel.mom"))
        let directory = try ModelScratchDirectory()
        let url = directory.url.appendingPathComponent("Damaged.mom")
        var rejected = 0
        for length in stride(from: 0, to: original.count, by: 97) {
            try original.prefix(length).write(to: url)
            if NSManagedObjectModel(contentsOf: url) == nil { rejected += 1 }
        }
        #expect(rejected == (original.count + 96) / 97)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            var bytes = Array(original)
            for _ in 0..<4 {
                let index = Int.random(in: 0..<bytes.count, using: &generator)
                bytes[index] = UInt8.random(in: 0...255, using: &generator)
            }
            try Data(bytes).write(to: url)
            _ = NSManagedObjectModel(contentsOf: url)
        }
        try Self.mutate(
            ModelCorpus.modelBundles.first { $0.lastPathComponent == "Recipes.xcdatamodeld" }?
                .appendingPathComponent("Recipes.xcdatamodel/elements"),
            into: directory.url.appendingPathComponent("Old.xcdatamodel/elements"), times: Self.mutations)
        try Self.mutate(
            ModelCorpus.modelVersions.first { $0.lastPathComponent == "momcTests 2.xcdatamodel" }?
                .appendingPathComponent("contents"),
            into: directory.url.appendingPathComponent("New.xcdatamodel/contents"), times: Self.mutations)
        try Data("bplist00 but not really".utf8).write(to: url)
        let error = try #require(throws: NSError.self) { try NSManagedObjectModel(validatingContentsOf: url) }
        #expect(error.code == NSCoreDataError)
        #expect(error.localizedDescription.contains("not a compiled model"))
    }
}
#endif
