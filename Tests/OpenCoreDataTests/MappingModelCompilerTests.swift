import Foundation
@_spi(ModelCompiler) import OpenCoreDataCore
import OpenCoreDataShim
import Testing

/// The mapping model compiler writes what Xcode's writes: a `.cdm` keyed archive of the `NSMappingModel`, with Apple's
/// classes and keys, that reads back as the mapping model Apple's compiler made of the same `.xcmappingmodel`; the
/// build plugin puts one among a target's resources for each mapping model.
@Suite struct MappingModelCompilerTests {
    /// Everything a mapping model says, to compare two of them: `MappingModelLoadingTests.summary` and the user info.
    static func details(_ mapping: NSMappingModel) -> [String] {
        let userInfo = mapping.entityMappings.map { entityMapping in
            var line = "\(entityMapping.name ?? ""): \(describe(entityMapping.userInfo))"
            for property in (entityMapping.attributeMappings ?? []) + (entityMapping.relationshipMappings ?? []) {
                line += " | \(property.name ?? ""): \(describe(property.userInfo))"
            }
            return line
        }
        return MappingModelLoadingTests.summary(mapping) + userInfo
    }

    private static func describe(_ userInfo: [AnyHashable: Any]?) -> String {
        (userInfo ?? [:]).map { "\($0.key)=\($0.value)" }.sorted().joined(separator: ",")
    }

    static func temporaryFile(_ name: String, in directory: SQLiteTestDirectory) -> URL {
        directory.url.appendingPathComponent(name)
    }

    /// Xcode compiled the corpus's V2toV3.cdm from the V2toV3.xcmappingmodel beside it; compiling the same file here
    /// gives a mapping model equal to Apple's — names, types, policies, hashes, source fetches, value expressions.
    @Test(.enabled(if: SQLiteCorpus.isAvailable))
    func compilingGivesTheMappingModelApplesCompilerMade() throws {
        let directory = SQLiteTestDirectory()
        let output = Self.temporaryFile("V2toV3.cdm", in: directory)
        try MappingModelCompiler.compile(MigrationCorpus.SampleModel.xcodeMapping, to: output)
        let ours = try NSMappingModel(validatingContentsOf: output)
        let apples = try NSMappingModel(validatingContentsOf: MigrationCorpus.SampleModel.compiledMapping)
        #expect(ours.entityMappings.count == 5)
        #expect(Self.details(ours) == Self.details(apples))
        #expect(
            ours.entityMappings.map(\.sourceEntityVersionHash) == apples.entityMappings.map(\.sourceEntityVersionHash))
        #expect(
            ours.entityMappings.map(\.destinationEntityVersionHash)
                == apples.entityMappings.map(\.destinationEntityVersionHash))
        // Xcode leaves the Custom Policy field as typed, without the module.
        #expect(
            ours.entityMappingsByName["CarToCar"]?.entityMigrationPolicyClassName
                == "REPLACE_AT_RUNTIME.V2to3MakerPolicy")
        // Found for the compiled model versions it maps between, as Apple's is.
        let version2 = try MigrationCorpus.SampleModel.model("SampleModel2")
        let version3 = try MigrationCorpus.SampleModel.model("SampleModel3")
        let bundle = try #require(Bundle(url: directory.url))
        #expect(NSMappingModel(from: [bundle], forSourceModel: version2, destinationModel: version3) != nil)
    }

    /// The archive has the classes and keys of Apple's, and the same objects: printed as a tree (references followed,
    /// dictionaries by key), the two archives are the same but for which arrays are mutable — Apple's compiler
    /// archives the arguments of functions it parsed from text as mutable arrays, which no reader tells apart.
    @Test(.enabled(if: SQLiteCorpus.isAvailable))
    func theArchiveHasApplesClassesKeysAndObjects() throws {
        let directory = SQLiteTestDirectory()
        let output = Self.temporaryFile("V2toV3.cdm", in: directory)
        try MappingModelCompiler.compile(MigrationCorpus.SampleModel.xcodeMapping, to: output)
        let ours = try Data(contentsOf: output)
        let apples = try Data(contentsOf: MigrationCorpus.SampleModel.compiledMapping)
        #expect(try ArchiveStructure.classKeys(ours) == ArchiveStructure.classKeys(apples))
        let same = ["NSMutableArray": "NSArray"]
        let ourTree = try ArchiveStructure.tree(ours, sameClass: same)
        let appleTree = try ArchiveStructure.tree(apples, sameClass: same)
        #expect(ourTree.count == appleTree.count)
        #expect(CompiledModelWriterTests.difference(ourTree, appleTree) == [])
        #expect(ourTree == appleTree)
        #expect(ourTree.first == "NSMappingModel")
    }

    /// Every mapping model of the corpus compiles, and the compiled file reads as the mapping model itself does —
    /// user info included (wibosco's and BookMigration's carry some).
    @Test(.enabled(if: SQLiteCorpus.isAvailable))
    func everyCorpusMappingModelCompilesToWhatItSays() throws {
        let directory = SQLiteTestDirectory()
        var mappings = (2...5).map { MigrationCorpus.Moody.mapping(from: $0) }
        mappings += ["Model1_to_Model2", "Model2_to_Model3", "Model2_to_Model3_User"].map {
            MigrationCorpus.BookMigration.mapping($0)
        }
        mappings += ["Migration1to2", "Migration2to3"].map { MigrationCorpus.Wibosco.mapping($0) }
        mappings.append(MigrationCorpus.SampleModel.xcodeMapping)
        var sawUserInfo = false
        for source in mappings {
            let output = Self.temporaryFile(source.deletingPathExtension().lastPathComponent + ".cdm", in: directory)
            let compiled = try MappingModelCompiler.compile(source, to: output)
            let reread = try NSMappingModel(validatingContentsOf: output)
            let original = try NSMappingModel(validatingContentsOf: source)
            #expect(Self.details(reread) == Self.details(original), "\(source.lastPathComponent)")
            #expect(Self.details(compiled) == Self.details(original), "\(source.lastPathComponent)")
            #expect(
                reread.entityMappings.allSatisfy { $0.sourceEntityName == nil || $0.sourceEntityVersionHash != nil })
            sawUserInfo =
                sawUserInfo
                || reread.entityMappings.contains { mapping in
                    mapping.userInfo != nil
                        || ((mapping.attributeMappings ?? []) + (mapping.relationshipMappings ?? [])).contains {
                            $0.userInfo != nil
                        }
                }
        }
        #expect(sawUserInfo)
    }

    /// A mapping model from a file is untrusted: what does not read, or does not fit its own model versions, throws
    /// a Core Data error naming the file, and leaves what was at the destination as it was.
    @Test(.enabled(if: SQLiteCorpus.isAvailable))
    func aMappingModelThatDoesNotCompileWritesNothing() throws {
        let directory = SQLiteTestDirectory()
        let output = Self.temporaryFile("Out.cdm", in: directory)
        let previous = Data("what was there".utf8)
        try previous.write(to: output)
        let folder = directory.url.appendingPathComponent("Broken.xcmappingmodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let original = try String(
            contentsOf: MigrationCorpus.SampleModel.xcodeMapping.appendingPathComponent("xcmapping.xml"),
            encoding: .utf8)
        let damaged = [
            "<database><object",
            "\u{FF}\u{FE}<<<",
            String(original.prefix(original.count / 2)),
            // An entity mapping whose destination entity the destination model lacks.
            original.replacingOccurrences(
                of: #"<attribute name="destinationname" type="string">Maker</attribute>"#,
                with: #"<attribute name="destinationname" type="string">Manufacturer</attribute>"#),
        ]
        for text in damaged {
            try Data(text.utf8).write(to: folder.appendingPathComponent("xcmapping.xml"))
            #expect {
                try MappingModelCompiler.compile(folder, to: output)
            } throws: { error in
                let error = error as NSError
                return error.domain == NSCocoaErrorDomain && error.code == NSCoreDataError
                    && error.localizedDescription.contains(folder.lastPathComponent)
            }
            #expect(try Data(contentsOf: output) == previous)
        }
        #expect {
            try MappingModelCompiler.compile(directory.url.appendingPathComponent("Missing.xcmappingmodel"), to: output)
        } throws: { ($0 as NSError).code == NSFileReadNoSuchFileError }
        #expect {
            try MappingModelCompiler.compile(MigrationCorpus.SampleModel.compiledMapping, to: output)
        } throws: { ($0 as NSError).code == NSCoreDataError }
        #expect(try Data(contentsOf: output) == previous)
    }

    /// Without the copies of its model versions that Xcode's editor embeds, a mapping model is compiled against the
    /// versions its paths name, looked for in the folders above it; when they are not there, the error says where
    /// they were looked for.
    @Test(.enabled(if: SQLiteCorpus.isAvailable))
    func withoutEmbeddedModelsTheVersionsAreFoundByTheirPaths() throws {
        let directory = SQLiteTestDirectory()
        let project = directory.url.appendingPathComponent("Project/Tests", isDirectory: true)
        let folder = project.appendingPathComponent("Mappings/V2toV3.xcmappingmodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var text = try String(
            contentsOf: MigrationCorpus.SampleModel.xcodeMapping.appendingPathComponent("xcmapping.xml"),
            encoding: .utf8)
        for key in ["sourcemodeldata", "destinationmodeldata"] {
            let start = try #require(text.range(of: "<attribute name=\"\(key)\""))
            let end = try #require(text.range(of: "</attribute>", range: start.upperBound..<text.endIndex))
            text.removeSubrange(start.lowerBound..<end.upperBound)
        }
        try Data(text.utf8).write(to: folder.appendingPathComponent("xcmapping.xml"))
        let output = Self.temporaryFile("V2toV3.cdm", in: directory)
        #expect {
            try MappingModelCompiler.compile(folder, to: output)
        } throws: { error in
            let message = (error as NSError).localizedDescription
            return (error as NSError).code == NSCoreDataError && message.contains("SampleModel2.xcdatamodel")
                && message.contains("Xcode")
        }
        #expect(!FileManager.default.fileExists(atPath: output.path))

        // The editor recorded `Tests/SampleModel.xcdatamodeld/…`, relative to the project.
        try FileManager.default.copyItem(
            at: ModelCorpus.root.appendingPathComponent(
                "momd/alemar11__CoreDataPlus/SampleModel/source_at_c42926a/SampleModel.xcdatamodeld"),
            to: project.appendingPathComponent("SampleModel.xcdatamodeld"))
        try MappingModelCompiler.compile(folder, to: output)
        let apples = try NSMappingModel(validatingContentsOf: MigrationCorpus.SampleModel.compiledMapping)
        #expect(Self.details(try NSMappingModel(validatingContentsOf: output)) == Self.details(apples))
    }

    /// What the build plugin compiled from `Resources/Inventory1to2.xcmappingmodel` (a mapping model from
    /// `Inventory` to `Inventory 2` of `Resources/Inventory.xcdatamodeld`, without embedded model copies, whose `sku`
    /// mapping is `$source.name`) is found the way Apple-platform code finds a mapping model, and migrates a store.
    @Test func thePluginCompilesTheTargetsMappingModelsIntoItsResources() throws {
        let url = try #require(Bundle.module.url(forResource: "Inventory1to2", withExtension: "cdm"))
        let mapping = try #require(NSMappingModel(contentsOf: url))
        #expect(mapping.entityMappings.map(\.name) == ["ItemToItem", "Warehouse", "Dock"])
        #expect(
            mapping.entityMappings.map(\.mappingType) == [
                .copyEntityMappingType, .addEntityMappingType, .addEntityMappingType,
            ])
        let item = try #require(mapping.entityMappingsByName["ItemToItem"])
        let values = Dictionary(
            uniqueKeysWithValues: (item.attributeMappings ?? []).map {
                ($0.name ?? "", $0.valueExpression?.description)
            })
        #expect(values["name"] == "$source.name")
        #expect(values["quantity"] == "$source.quantity")
        #expect(values["sku"] == "$source.name")
        #expect(values["price"] == .some(nil))

        let momd = try #require(Bundle.module.url(forResource: "Inventory", withExtension: "momd"))
        let versions = try NSManagedObjectModel.versionsOfModel(at: momd)
        let (version1, version2) = (versions[0].model, versions[1].model)
        #expect(item.sourceEntityVersionHash == version1.entitiesByName["Item"]?.versionHash)
        #expect(item.destinationEntityVersionHash == version2.entitiesByName["Item"]?.versionHash)
        let found = try #require(
            NSMappingModel(from: [Bundle.module], forSourceModel: version1, destinationModel: version2))
        #expect(found.entityMappings.map(\.name) == mapping.entityMappings.map(\.name))

        let directory = SQLiteTestDirectory()
        let source = directory.store("Inventory.sqlite")
        let coordinator = try SQLiteStack.coordinator(version1, at: source)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            for (name, quantity) in [("BOX-1", 3), ("CUP-22", 7)] {
                let object = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
                object.setValue(name, forKey: "name")
                object.setValue(quantity, forKey: "quantity")
            }
            try context.save()
        }
        for store in coordinator.persistentStores { try coordinator.remove(store) }
        let destination = directory.store("Inventory 2.sqlite")
        try NSMigrationManager(sourceModel: version1, destinationModel: version2).migrateStore(
            from: source, type: .sqlite, mapping: mapping, to: destination, type: .sqlite)
        let migrated = SQLiteStack.context(try SQLiteStack.coordinator(version2, at: destination))
        let rows = try migrated.performAndWait {
            try migrated.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item")).map {
                "\($0.value(forKey: "name") ?? "") \($0.value(forKey: "quantity") ?? "") \($0.value(forKey: "sku") ?? "")"
            }.sorted()
        }
        #expect(rows == ["BOX-1 3 BOX-1", "CUP-22 7 CUP-22"])
    }
}
