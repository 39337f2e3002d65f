// Tests of the coredata tool: they do not build against Apple's Core Data.
#if !canImport(CoreData)

import Foundation
import OpenCoreData
import Testing

/// `coredata model --diff <v1> <v2>`: entities and properties added, removed, renamed and changed between two model
/// versions, with their version hashes.
@Suite struct ModelDiffCommandTests {
    /// An `.xcdatamodel` folder in `directory` with these entities (XML elements).
    static func model(_ name: String, _ entities: String, in directory: SQLiteTestDirectory) throws -> URL {
        let url = directory.url.appendingPathComponent(name + ".xcdatamodel")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try Data(
            """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            \(entities)
            </model>
            """.utf8
        ).write(to: url.appendingPathComponent("contents"))
        return url
    }

    static func lines(_ output: String) -> [String] {
        output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    @Test func versionsOfABundleAreComparedByName() throws {
        let bundle = try #require(Bundle.module.url(forResource: "Inventory", withExtension: "xcdatamodeld"))
        let (status, output) = try CoreDataTool.run(["model", bundle.path, "--diff", "Inventory", "Inventory 2"])
        #expect(status == 0, "\(output)")
        let versions = try NSManagedObjectModel.versionsOfModel(at: bundle)
        let (old, new) = (versions[0].model, versions[1].model)
        let hash = { (model: NSManagedObjectModel, entity: String) in
            model.entitiesByName[entity]?.versionHash.base64EncodedString() ?? "?"
        }
        let lines = Self.lines(output)
        #expect(lines.first == "Model Inventory → Inventory 2")
        #expect(lines.contains("+ entity Dock  hash \(hash(new, "Dock"))"))
        #expect(lines.contains("+ entity Warehouse  hash \(hash(new, "Warehouse"))"))
        #expect(lines.contains("~ entity Item  hash \(hash(old, "Item")) → \(hash(new, "Item"))"))
        let price = try #require(new.entitiesByName["Item"]?.propertiesByName["price"])
        #expect(
            lines.contains("    + attribute price: Decimal, optional  hash \(price.versionHash.base64EncodedString())"))
        #expect(lines.contains { $0.hasPrefix("    + relationship warehouse: → Warehouse, to-one, nullify") })
        #expect(!lines.contains { $0.contains(" name:") })
        #expect(
            lines.contains(
                "A store of Inventory opens with Inventory 2: no, the version hashes differ (a store needs migrating)"))
        #expect(lines.contains("Lightweight migration: can be inferred"))
    }

    /// Renaming identifiers make renames, not a removal and an addition; a type change shows both descriptions and
    /// both hashes; a change the hashes do not see (a default value) says so.
    @Test func renamesAndChangesOfTwoModelFiles() throws {
        let directory = SQLiteTestDirectory()
        let old = try Self.model(
            "People",
            """
            <entity name="Person" representedClassName="Person" syncable="YES">
                <attribute name="name" attributeType="String"/>
                <attribute name="age" optional="YES" attributeType="Integer 16" usesScalarValueType="YES"/>
                <attribute name="nickname" optional="YES" attributeType="String"/>
                <attribute name="score" optional="YES" attributeType="Double" defaultValueString="0"/>
            </entity>
            <entity name="Pet" representedClassName="Pet" syncable="YES">
                <attribute name="name" optional="YES" attributeType="String"/>
            </entity>
            """, in: directory)
        let new = try Self.model(
            "People 2",
            """
            <entity name="Human" representedClassName="Human" elementID="Person" syncable="YES">
                <attribute name="fullName" attributeType="String" elementID="name"/>
                <attribute name="age" optional="YES" attributeType="Integer 64" usesScalarValueType="YES"/>
                <attribute name="score" optional="YES" attributeType="Double" defaultValueString="1"/>
            </entity>
            <entity name="Pet" representedClassName="Pet" syncable="YES">
                <attribute name="name" optional="YES" attributeType="String"/>
            </entity>
            """, in: directory)
        let (status, output) = try CoreDataTool.run(["model", "--diff", old.path, new.path])
        #expect(status == 0, "\(output)")
        let before = try #require(NSManagedObjectModel(contentsOf: old))
        let after = try #require(NSManagedObjectModel(contentsOf: new))
        let property = { (model: NSManagedObjectModel, entity: String, name: String) in
            model.entitiesByName[entity]?.propertiesByName[name]?.versionHash.base64EncodedString() ?? "?"
        }
        let lines = Self.lines(output)
        #expect(lines.first == "Model People → People 2")
        #expect(lines.contains { $0.hasPrefix("~ entity Human (renamed from Person)  hash ") })
        #expect(
            lines.contains(
                "    ~ attribute age: Integer 16, optional → Integer 64, optional  hash "
                    + "\(property(before, "Person", "age")) → \(property(after, "Human", "age"))"))
        #expect(
            lines.contains(
                "    ~ attribute fullName: renamed from name  hash "
                    + "\(property(before, "Person", "name")) → \(property(after, "Human", "fullName"))"))
        #expect(lines.contains { $0.hasPrefix("    - attribute nickname: String, optional  hash ") })
        #expect(
            lines.contains(
                "    ~ attribute score: Double, default 0.0, optional → Double, default 1.0, optional  hash unchanged "
                    + property(after, "Human", "score")))
        #expect(lines.contains("= unchanged: Pet"))
        #expect(!lines.contains { $0.contains("entity Person") && !$0.contains("renamed") })
        #expect(lines.contains("Lightweight migration: can be inferred"))
    }

    @Test func identicalVersionsHaveNoDifferences() throws {
        let directory = SQLiteTestDirectory()
        let entity = "<entity name=\"A\" syncable=\"YES\"><attribute name=\"x\" attributeType=\"String\"/></entity>"
        let first = try Self.model("One", entity, in: directory)
        let second = try Self.model("Two", entity, in: directory)
        let (status, output) = try CoreDataTool.run(["model", "--diff", first.path, second.path])
        #expect(status == 0)
        #expect(output.contains("No differences: the versions have the same entities, properties and version hashes."))
    }

    @Test func theDiffNeedsTwoVersionsThatExist() throws {
        let bundle = try #require(Bundle.module.url(forResource: "Inventory", withExtension: "xcdatamodeld"))
        let (one, _) = try CoreDataTool.run(["model", bundle.path, "--diff", "Inventory"])
        #expect(one == 64)
        let (unknown, text) = try CoreDataTool.run(["model", bundle.path, "--diff", "Inventory", "Inventory 7"])
        #expect(unknown != 0)
        #expect(text.contains("No version named 'Inventory 7'"))
        let (missing, missingText) = try CoreDataTool.run([
            "model", "--diff", "/nonexistent/A.xcdatamodel", bundle.path,
        ])
        #expect(missing != 0)
        #expect(missingText.contains("A.xcdatamodel"))
    }
}

#endif
