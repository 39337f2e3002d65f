import Foundation
import OpenCoreDataShim
import Testing

/// Which models open which stores.
@Suite struct SQLiteModelCompatibilityTests {
    static func owners(optionalName: Bool, extra: Bool = false) -> NSManagedObjectModel {
        SQLiteCorpusModels.model([
            .init(
                name: "Owner",
                properties: [.attribute("name", .stringAttributeType, optional: optionalName)]
                    + (extra ? [.attribute("age", .integer16AttributeType)] : []))
        ])
    }

    @Test func aStoreWrittenHereOpensOnlyWithAModelOfTheSameVersionHashes() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        try SQLiteStack.close(try SQLiteStack.coordinator(Self.owners(optionalName: true), at: url))
        let before = try Data(contentsOf: url)
        // Same tables and columns, but a property changed: Apple's framework refuses such a store, and so does
        // this one, because the version hashes in the store are this release's own.
        for model in [Self.owners(optionalName: false), Self.owners(optionalName: true, extra: true)] {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            #expect {
                try coordinator.addPersistentStore(
                    ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
            } throws: { error in
                (error as NSError).code == NSPersistentStoreIncompatibleVersionHashError
            }
        }
        #expect(try Data(contentsOf: url) == before)
        try SQLiteStack.close(try SQLiteStack.coordinator(Self.owners(optionalName: true), at: url))
    }
}

/// The whole set of entity version hashes decides: an entity the store has and the model lacks (its rows would be
/// out of reach), or the other way round, makes them incompatible.
@Suite struct EntitySetCompatibilityTests {
    static func model(_ names: [String]) -> NSManagedObjectModel {
        SQLiteCorpusModels.model(names.map { .init(name: $0, properties: [.attribute("name", .stringAttributeType)]) })
    }

    static func metadata(_ model: NSManagedObjectModel) -> [String: Any] {
        [NSStoreTypeKey: NSSQLiteStoreType, NSStoreModelVersionHashesKey: model.entityVersionHashesByName]
    }

    @Test func metadataWithAnEntityTheModelLacksOrLackingOneOfItsIsIncompatible() {
        let owners = Self.model(["Owner"])
        let both = Self.model(["Owner", "Pet"])
        #expect(owners.isConfiguration(withName: nil, compatibleWithStoreMetadata: Self.metadata(owners)))
        #expect(!owners.isConfiguration(withName: nil, compatibleWithStoreMetadata: Self.metadata(both)))
        #expect(!both.isConfiguration(withName: nil, compatibleWithStoreMetadata: Self.metadata(owners)))
    }

    @Test func aConfigurationsStoreRecordsTheWholeModelAndIsCompatibleWithIt() {
        let model = Self.model(["Owner", "Pet"])
        model.setEntities([model.entitiesByName["Pet"]!], forConfigurationName: "Pets")
        // A store records the hashes of its coordinator's whole model, whichever configuration it holds.
        #expect(model.isConfiguration(withName: "Pets", compatibleWithStoreMetadata: Self.metadata(model)))
        #expect(
            !model.isConfiguration(withName: "Pets", compatibleWithStoreMetadata: Self.metadata(Self.model(["Owner"]))))
    }

    @Test func aStoreWithAnEntityTheModelLacksIsRefusedWithBothHashSetsAtHand() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let both = Self.model(["Owner", "Pet"])
        let written = try SQLiteStack.coordinator(both, at: url)
        let context = SQLiteStack.context(written)
        try context.performAndWait {
            NSEntityDescription.insertNewObject(forEntityName: "Pet", into: context).setValue("Rex", forKey: "name")
            try context.save()
        }
        try SQLiteStack.close(written)
        let before = try Data(contentsOf: url)

        let owners = Self.model(["Owner"])
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: owners)
        var caught: NSError?
        do {
            try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
        } catch {
            caught = error as NSError
        }
        let error = try #require(caught)
        #expect(error.domain == NSCocoaErrorDomain)
        #expect(error.code == NSPersistentStoreIncompatibleVersionHashError)
        // Apple's userInfo: the store's metadata, with its hashes, and the reason; the model's are its own.
        let metadata = try #require(error.userInfo["metadata"] as? [String: Any])
        let stored = try #require(metadata[NSStoreModelVersionHashesKey] as? [String: Any])
        #expect(Set(stored.keys) == ["Owner", "Pet"])
        #expect(Set(owners.entityVersionHashesByName.keys) == ["Owner"])
        #expect(error.userInfo["reason"] as? String != nil)
        #expect(coordinator.persistentStores.isEmpty)
        #expect(try Data(contentsOf: url) == before)

        // The other way round: a model with an entity the store lacks.
        let three = Self.model(["Owner", "Pet", "Vet"])
        #expect {
            try NSPersistentStoreCoordinator(managedObjectModel: three).addPersistentStore(
                ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
        } throws: { error in
            (error as NSError).code == NSPersistentStoreIncompatibleVersionHashError
        }
        #expect(try Data(contentsOf: url) == before)
    }

    @Test func lightweightMigrationDropsTheEntityTheModelNoLongerHas() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let written = try SQLiteStack.coordinator(Self.model(["Owner", "Pet"]), at: url)
        let context = SQLiteStack.context(written)
        try context.performAndWait {
            NSEntityDescription.insertNewObject(forEntityName: "Owner", into: context).setValue("Ann", forKey: "name")
            NSEntityDescription.insertNewObject(forEntityName: "Pet", into: context).setValue("Rex", forKey: "name")
            try context.save()
        }
        try SQLiteStack.close(written)

        let owners = Self.model(["Owner"])
        let coordinator = try SQLiteStack.coordinator(
            owners, at: url,
            options: [NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true])
        defer { try? SQLiteStack.close(coordinator) }
        let migrated = SQLiteStack.context(coordinator)
        try migrated.performAndWait {
            let names = try migrated.fetch(NSFetchRequest<NSManagedObject>(entityName: "Owner")).compactMap {
                $0.value(forKey: "name") as? String
            }
            #expect(names == ["Ann"])
        }
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            ofType: NSSQLiteStoreType, at: url, options: nil)
        #expect(owners.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
    }
}
