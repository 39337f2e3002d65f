import Foundation
import Testing

@testable import OpenCoreDataCore

/// The compiled-model writer: every model of the corpus (Xcode models, Apple's `.mom` files and the models Apple's
/// stores cached) archives in both of Apple's shapes and reads back the same, and the archives use the classes and
/// keys Apple's own archives use.
@Suite(.enabled(if: ModelCorpus.exists, "the corpus is not available"))
struct CompiledModelWriterTests {
    /// Every model source of the corpus, relative to its root.
    static let sources: [String] = {
        let versions = (ModelCorpus.modelVersions + ModelCorpus.legacyModelVersions).map(ModelCorpus.relativePath)
        let compiled = ModelCorpus.files { $0.pathExtension == "mom" }.map(ModelCorpus.relativePath)
        return versions + compiled + appleCaches
    }()

    /// The models Apple's SQLite stores cached (`Z_MODELCACHE`, inflated).
    static let appleCaches: [String] = ModelCorpus.files { $0.lastPathComponent.hasSuffix(".modelcache.bplist") }
        .map(ModelCorpus.relativePath)

    static func load(_ relativePath: String) throws -> NSManagedObjectModel {
        let url = ModelCorpus.root.appendingPathComponent(relativePath)
        if relativePath.hasSuffix(".bplist") {
            let model = NSManagedObjectModel()
            try CompiledModelReader.load(try Data(contentsOf: url), url: url, into: model)
            return model
        }
        return try NSManagedObjectModel(validatingContentsOf: url)
    }

    static func reread(_ data: Data) throws -> NSManagedObjectModel {
        let model = NSManagedObjectModel()
        try CompiledModelReader.load(data, url: URL(fileURLWithPath: "/written.mom"), into: model)
        return model
    }

    @Test func theCorpusHasModelsOfEveryKind() {
        #expect(Self.sources.count > 60)
        #expect(Self.appleCaches.count == 9)
    }

    @Test(arguments: sources)
    func writtenModelsReadBackTheSame(_ relativePath: String) throws {
        let model = try Self.load(relativePath)
        let expected = ModelSnapshot.lines(model)
        for style in [CompiledModelWriter.Style.compiledModel, .storeModelCache] {
            let reread = try Self.reread(try CompiledModelWriter.data(for: model, style: style))
            let difference = Self.difference(ModelSnapshot.lines(reread), expected)
            #expect(difference.isEmpty, "\(style): \(difference.joined(separator: "\n"))")
            #expect(reread.entityVersionHashesByName == model.entityVersionHashesByName)
        }
    }

    /// Apple's archives and the ones written here for the same model have the same classes with the same keys.
    @Test(
        arguments: appleCaches + ModelCorpus.files(where: { $0.pathExtension == "mom" }).map(ModelCorpus.relativePath))
    func archivesUseApplesClassesAndKeys(_ relativePath: String) throws {
        let url = ModelCorpus.root.appendingPathComponent(relativePath)
        let style: CompiledModelWriter.Style = relativePath.hasSuffix(".bplist") ? .storeModelCache : .compiledModel
        let written = try CompiledModelWriter.data(for: try Self.load(relativePath), style: style)
        let differences = ArchiveStructure.differences(
            written: try ArchiveStructure.classKeys(written),
            apple: try ArchiveStructure.classKeys(Data(contentsOf: url)))
        #expect(differences.isEmpty, "\(differences.joined(separator: "\n"))")
        // Foundation's own property list reader reads the archive too.
        var format = PropertyListSerialization.PropertyListFormat.xml
        let plist = try PropertyListSerialization.propertyList(from: written, options: [], format: &format)
        #expect(format == .binary)
        #expect((plist as? [String: Any])?["$archiver"] as? String == "NSKeyedArchiver")
    }

    /// A model set up in code with every kind of entity, property, flag, default value, predicate and request
    /// reads back the same from both shapes of archive.
    @Test(arguments: [CompiledModelWriter.Style.compiledModel, .storeModelCache])
    func everySettingReadsBack(_ style: CompiledModelWriter.Style) throws {
        let model = Self.everySettingModel()
        let reread = try Self.reread(try CompiledModelWriter.data(for: model, style: style))
        let difference = Self.difference(ModelSnapshot.lines(reread), ModelSnapshot.lines(model))
        #expect(difference.isEmpty, "\(difference.joined(separator: "\n"))")
        #expect(reread.entityVersionHashesByName == model.entityVersionHashesByName)
        let leaf = try #require(reread.entitiesByName["Leaf"])
        #expect(leaf.superentity?.superentity?.name == "Base")
        #expect(leaf.propertiesByName["children"]?.entity.name == "Base")
    }

    @Test func whatCannotBeArchivedFailsNamingWhereItIs() throws {
        let model = Self.everySettingModel()
        let child = try #require(model.entitiesByName["Child"]?.attributesByName["name"])
        child._setValidationPredicates([NSPredicate { _, _ in true }], warnings: ["blocked"])
        #expect {
            try CompiledModelWriter.data(for: model, style: .storeModelCache)
        } throws: { error in
            let error = error as NSError
            return error.domain == NSCocoaErrorDomain && error.code == CocoaError.Code.coderInvalidValue.rawValue
                && error.userInfo["entity"] as? String == "Child" && error.userInfo["property"] as? String == "name"
                && error.localizedDescription.contains("block predicate")
        }
    }

    /// Entities three levels deep (the first abstract), every attribute type with a default value, every property
    /// flag, user info of several value types, validation predicates using every operator, derived and composite
    /// attributes, relationships of every kind, a fetched property, uniqueness constraints, fetch indexes,
    /// configurations, a fetch request template and version identifiers.
    static func everySettingModel() -> NSManagedObjectModel {
        func attribute(_ name: String, _ type: NSAttributeType, _ defaultValue: Any? = nil) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.defaultValue = defaultValue
            return attribute
        }
        let base = NSEntityDescription()
        base.name = "Base"
        base.managedObjectClassName = "BaseObject"
        base.isAbstract = true
        base.userInfo = ["note": "kept", "count": 3, "list": ["a", 2], "nested": ["key": "value"]]
        base.versionHashModifier = "2"
        base.renamingIdentifier = "OldBase"
        let number = attribute("number", .integer16AttributeType, 7)
        number.isOptional = false
        number.setValidationPredicates(
            [NSPredicate(format: "SELF >= 0"), NSPredicate(format: "SELF <= 100")],
            withValidationWarnings: ["too small", "too large"])
        let text = attribute("text", .stringAttributeType, "héllo ✓ \u{1F600}")
        text.preservesValueInHistoryOnDeletion = true
        text.allowsCloudEncryption = true
        text.isIndexedBySpotlight = true
        text.isStoredInExternalRecord = true
        text.versionHashModifier = "text2"
        text.renamingIdentifier = "title"
        text.userInfo = ["max": "20"]
        text.setValidationPredicates(
            [
                NSPredicate(format: "length >= 3 AND length <= 50"), NSPredicate(format: "SELF LIKE[c] 'a*'"),
                NSPredicate(format: "SELF BEGINSWITH[cd] 'a' OR SELF ENDSWITH[n] 'z'"),
                NSPredicate(format: "SELF MATCHES '.*' AND NOT SELF CONTAINS[c] 'x'"),
                NSPredicate(format: "SELF IN {'a', 'b', nil}"), NSPredicate(value: true), NSPredicate(value: false),
            ], withValidationWarnings: ["length", "like", "affixes", "matches", "in", "true", "false"])
        let binary = attribute("blob", .binaryDataAttributeType, Data((0..<20).map { UInt8($0) }))
        binary.allowsExternalBinaryDataStorage = true
        let transformable = attribute("colors", .transformableAttributeType)
        transformable.valueTransformerName = "NSSecureUnarchiveFromDataTransformer"
        transformable.attributeValueClassName = "NSArray"
        let transient = attribute("scratch", .doubleAttributeType, 2.5)
        transient.isTransient = true
        base.properties = [
            number, attribute("int32", .integer32AttributeType, Int32(-3)),
            attribute("int64", .integer64AttributeType, Int64.max),
            attribute("decimal", .decimalAttributeType, NSDecimalNumber(string: "-12.345")),
            attribute("float", .floatAttributeType, Float(1.5)), attribute("flag", .booleanAttributeType, true),
            attribute("date", .dateAttributeType, Date(timeIntervalSinceReferenceDate: 123_456.5)),
            attribute("uuid", .UUIDAttributeType, UUID(uuidString: "5443A63D-EF0E-44C2-B216-AE8B5ED2FD09")),
            attribute("uri", .URIAttributeType, URL(string: "https://example.com/a?b=c")),
            text, binary, transformable, transient,
        ]

        let middle = NSEntityDescription()
        middle.name = "Middle"
        let childCount = NSDerivedAttributeDescription()
        childCount.name = "childCount"
        childCount.attributeType = .integer64AttributeType
        childCount.derivationExpression = NSExpression(format: "children.@count")
        let canonicalName = NSDerivedAttributeDescription()
        canonicalName.name = "canonicalText"
        canonicalName.attributeType = .stringAttributeType
        canonicalName.derivationExpression = NSExpression(
            forFunction: "canonical:", arguments: [NSExpression(forKeyPath: "text")])
        middle.properties = [childCount, canonicalName]

        let leaf = NSEntityDescription()
        leaf.name = "Leaf"
        let size = NSCompositeAttributeDescription()
        size.name = "size"
        size.elements = [attribute("width", .doubleAttributeType), attribute("height", .doubleAttributeType, 1.0)]
        leaf.properties = [size]

        let child = NSEntityDescription()
        child.name = "Child"
        let name = attribute("name", .stringAttributeType)
        name.isIndexed = true
        let age = attribute("age", .integer32AttributeType, 0)
        age.setValidationPredicates(
            [
                NSPredicate(format: "SELF BETWEEN {1, 150}"), NSPredicate(format: "SELF > 0 AND SELF < 200"),
                NSPredicate(format: "SELF != 13"),
            ], withValidationWarnings: ["between", "range", "unlucky"])
        let children = NSRelationshipDescription()
        children.name = "children"
        children.maxCount = 10
        children.isOrdered = true
        children.deleteRule = .cascadeDeleteRule
        let parent = NSRelationshipDescription()
        parent.name = "parent"
        parent.maxCount = 1
        parent.minCount = 1
        parent.isOptional = false
        parent.deleteRule = .denyDeleteRule
        let favorite = NSRelationshipDescription()
        favorite.name = "favorite"
        favorite.maxCount = 1
        favorite.deleteRule = .noActionDeleteRule
        children.destinationEntity = child
        parent.destinationEntity = base
        favorite.destinationEntity = child
        children.inverseRelationship = parent
        parent.inverseRelationship = children
        base.properties = base.properties + [children, favorite]

        let siblings = NSFetchedPropertyDescription()
        siblings.name = "siblings"
        let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Child")
        request.predicate = NSPredicate(
            format: "parent == $FETCH_SOURCE.parent AND SELF != $FETCH_SOURCE AND ANY parent.children.age > 3 "
                + "AND ALL parent.children.name != 'x' AND SUBQUERY(parent.children, $c, $c.age > 5).@count > 0 "
                + "AND FUNCTION(name, 'uppercaseString') == 'A' AND age + 1 > 2 AND name == $NAME")
        request.sortDescriptors = [
            NSSortDescriptor(key: "name", ascending: true, selector: Selector("localizedStandardCompare:")),
            NSSortDescriptor(key: "age", ascending: false),
        ]
        request.fetchLimit = 5
        request.fetchOffset = 1
        request.fetchBatchSize = 20
        request.returnsDistinctResults = true
        request.includesPendingChanges = false
        siblings.fetchRequest = request
        child.properties = [name, age, parent, siblings]
        child.uniquenessConstraints = [["name", "parent"]]
        let byName = NSFetchIndexDescription(
            name: "byName", elements: [NSFetchIndexElementDescription(property: name, collationType: .binary)])
        let descending = NSFetchIndexElementDescription(property: age, collationType: .binary)
        descending.isAscending = false
        let byAge = NSFetchIndexDescription(name: "byAge", elements: [descending])
        byAge.partialIndexPredicate = NSPredicate(format: "age != nil")
        child.indexes = [byName, byAge]

        base.subentities = [middle]
        middle.subentities = [leaf]
        let model = NSManagedObjectModel()
        model.entities = [base, middle, leaf, child]
        model.setEntities([base, middle, leaf, child], forConfigurationName: "Main")
        model.setEntities([child], forConfigurationName: "Other")
        let template = NSFetchRequest<NSFetchRequestResult>(entityName: "Child")
        template.predicate = NSPredicate(format: "name == $NAME AND age IN {1, 2, 3}")
        template.resultType = .dictionaryResultType
        template.returnsDistinctResults = true
        model.setFetchRequestTemplate(template, forName: "ChildrenNamed")
        model.versionIdentifiers = ["1.0", "beta"]
        return model
    }

    /// The lines only one side has: `+` written, `-` original.
    static func difference(_ lines: [String], _ expected: [String]) -> [String] {
        let written = Set(lines)
        let original = Set(expected)
        return lines.filter { !original.contains($0) }.map { "+ " + $0 }
            + expected.filter { !written.contains($0) }.map { "- " + $0 }
    }
}
