import Foundation
import OpenCoreDataShim
import Testing

/// Deep inheritance chains: every entity gets the version hash it has when computed alone (the coordinator computes
/// them all at once, superentities first), and the SQLite store numbers, stores and fetches every level.
@Suite struct ModelHierarchyTests {
    static let depth = 120

    /// `Level0 ← Level1 ← … ← Level<depth - 1>`. Each level declares `value<n>` (transient on two levels of three);
    /// if `redeclaring`, every tenth level declares `value0` again, transient on every twentieth, so that hashes see
    /// inherited, transient and redeclared properties. Level 5 adds a to-one `peer` to `Level0`.
    static func chain(depth: Int = depth, redeclaring: Bool = true) -> NSManagedObjectModel {
        var entities: [NSEntityDescription] = []
        for level in 0..<depth {
            let entity = NSEntityDescription()
            entity.name = "Level\(level)"
            var properties: [NSPropertyDescription] = []
            let value = NSAttributeDescription()
            value.name = "value\(level)"
            value.attributeType = level % 2 == 0 ? .stringAttributeType : .integer64AttributeType
            value.isTransient = level % 3 != 0
            properties.append(value)
            if redeclaring, level > 0, level % 10 == 0 {
                let redeclared = NSAttributeDescription()
                redeclared.name = "value0"
                redeclared.attributeType = .stringAttributeType
                redeclared.isTransient = level % 20 == 0
                redeclared.isOptional = level % 30 != 0
                properties.append(redeclared)
            }
            if level == 5 {
                let peer = NSRelationshipDescription()
                peer.name = "peer"
                peer.maxCount = 1
                properties.append(peer)
            }
            entity.properties = properties
            if let parent = entities.last { parent.subentities = [entity] }
            entities.append(entity)
        }
        (entities[5].propertiesByName["peer"] as? NSRelationshipDescription)?.destinationEntity = entities[0]
        let model = NSManagedObjectModel()
        model.entities = entities
        return model
    }

    @Test func everyLevelHasTheVersionHashItHasWhenComputedAlone() throws {
        let model = Self.chain()
        // An editable copy computes each hash on its own, from its superentity's down; the coordinator freezes the
        // model and computes them all at once.
        let alone = try #require(model.copy() as? NSManagedObjectModel)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        #expect(coordinator.managedObjectModel === model)
        for level in [0, 1, 5, 9, 10, 20, 30, 59, 60, Self.depth - 1] {
            let name = "Level\(level)"
            let frozen = try #require(model.entitiesByName[name]?.versionHash)
            #expect(frozen == alone.entitiesByName[name]?.versionHash, "\(name)")
        }
        #expect(model.entityVersionHashesByName == alone.entityVersionHashesByName)
        #expect(Set(model.entityVersionHashesByName.values).count == Self.depth)
    }

    @Test func aSQLiteStoreNumbersStoresAndFetchesEveryLevel() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let coordinator = try SQLiteStack.coordinator(Self.chain(redeclaring: false), at: url)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            for level in 0..<Self.depth {
                let object = NSEntityDescription.insertNewObject(forEntityName: "Level\(level)", into: context)
                object.setValue("level \(level)", forKey: "value0")
            }
            try context.save()
        }
        try SQLiteStack.close(coordinator)
        // One table for the hierarchy, entities numbered from the root down.
        let numbers = try RawSQLite.query(url, "SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY ORDER BY Z_ENT")
        #expect(numbers.count == Self.depth)
        #expect(
            numbers.last == [
                .integer(Int64(Self.depth)), .text("Level\(Self.depth - 1)"), .integer(Int64(Self.depth - 1)),
            ])
        #expect(try RawSQLite.query(url, "SELECT COUNT(*) FROM ZLEVEL0") == [[.integer(Int64(Self.depth))]])

        let reopened = try SQLiteStack.coordinator(Self.chain(redeclaring: false), at: url)
        let reader = SQLiteStack.context(reopened)
        try reader.performAndWait {
            for level in [0, 1, 70, Self.depth - 1] {
                let request = NSFetchRequest<NSManagedObject>(entityName: "Level\(level)")
                let kinds = try reader.fetch(request).compactMap { $0.value(forKey: "value0") as? String }
                #expect(Set(kinds) == Set((level..<Self.depth).map { "level \($0)" }), "Level\(level)")
                request.includesSubentities = false
                #expect(try reader.fetch(request).map(\.entity.name) == ["Level\(level)"])
            }
        }
    }

    /// A hierarchy shares one table, and SQLite allows 2,000 columns in one: a wider hierarchy is refused with an
    /// error that says so, before any table is made.
    @Test func aHierarchyWiderThanSQLiteAllowsIsRefusedWithTheReason() throws {
        func entity(_ name: String, attributes: Int) -> NSEntityDescription {
            let entity = NSEntityDescription()
            entity.name = name
            entity.properties = (0..<attributes).map { index in
                let attribute = NSAttributeDescription()
                attribute.name = "\(name.lowercased())\(index)"
                attribute.attributeType = .integer64AttributeType
                return attribute
            }
            return entity
        }
        let parent = entity("Parent", attributes: 1_000)
        let child = entity("Child", attributes: 1_000)
        parent.subentities = [child]
        let model = NSManagedObjectModel()
        model.entities = [parent, child]
        let directory = SQLiteTestDirectory()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        #expect {
            try coordinator.addPersistentStore(
                ofType: NSSQLiteStoreType, configurationName: nil, at: directory.store(), options: nil)
        } throws: { error in
            let message = (error as NSError).userInfo[NSLocalizedDescriptionKey] as? String ?? ""
            return (error as NSError).domain == NSCocoaErrorDomain && message.contains("ZPARENT")
                && message.contains("2003 columns")
        }
        #expect(coordinator.persistentStores.isEmpty)
    }
}
