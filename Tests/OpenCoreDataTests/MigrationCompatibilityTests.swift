import Foundation
import OpenCoreDataShim
import Testing

/// Whether a model can open a store: the version hashes a store records against the model's, read without adding
/// the store, and what happens when they differ and nobody asked for migration.
@Suite(.enabled(if: SQLiteCorpus.isAvailable)) struct MigrationCompatibilityTests {
    /// Each of wibosco's stores was written with one model version; its metadata names that version and no other.
    @Test func eachCorpusStoreIsCompatibleWithTheVersionThatWroteItOnly() throws {
        let models = try MigrationCorpus.Wibosco.models()
        #expect(models.count == 4)
        for (index, store) in ["1", "2", "3", "WAL"].enumerated() {
            let url = SQLiteCorpus.root.appendingPathComponent(MigrationCorpus.Wibosco.store(store))
            let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: url)
            let compatible = models.indices.filter {
                models[$0].isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata)
            }
            #expect(compatible == [index], "store \(store)")
        }
    }

    /// Apple's framework refuses a store of another model version unless migration is asked for (134100), and the
    /// store is left exactly as it was: the rollback-journal store and the WAL store with its log.
    @Test(arguments: [("1", 3), ("WAL", 0)])
    func anIncompatibleStoreIsRefusedAndLeftByteIdentical(store: String, modelIndex: Int) throws {
        let directory = SQLiteTestDirectory()
        let url = try directory.copyCorpusStore(MigrationCorpus.Wibosco.store(store))
        let before = MigrationCorpus.contents(of: url)
        let model = try MigrationCorpus.Wibosco.models()[modelIndex]
        for options in [nil, [NSMigratePersistentStoresAutomaticallyOption: false]] as [[AnyHashable: Any]?] {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            #expect {
                try coordinator.addPersistentStore(
                    ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: options)
            } throws: { error in
                let error = error as NSError
                return error.domain == NSCocoaErrorDomain && error.code == NSPersistentStoreIncompatibleVersionHashError
                    && error.localizedDescription.contains("Migrate the store")
            }
            #expect(coordinator.persistentStores.isEmpty)
        }
        #expect(MigrationCorpus.contents(of: url) == before)
    }

    /// A version hash modifier marks a change the schema does not show, so a store written before it no longer
    /// opens; a renaming identifier changes no hash.
    @Test func aVersionHashModifierMakesAStoreIncompatibleARenamingIdentifierDoesNot() throws {
        func model(entityModifier: String? = nil, propertyModifier: String? = nil, renaming: String? = nil)
            -> NSManagedObjectModel
        {
            let title = NSAttributeDescription()
            title.name = "title"
            title.attributeType = .stringAttributeType
            title.versionHashModifier = propertyModifier
            title.renamingIdentifier = renaming
            let book = NSEntityDescription()
            book.name = "Book"
            book.versionHashModifier = entityModifier
            book.properties = [title]
            let model = NSManagedObjectModel()
            model.entities = [book]
            return model
        }
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        try SQLiteStack.close(try SQLiteStack.coordinator(model(), at: url))
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: url)
        #expect(model(renaming: "name").isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        for changed in [model(entityModifier: "2"), model(propertyModifier: "2")] {
            #expect(!changed.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
            #expect(throws: (any Error).self) { try SQLiteStack.coordinator(changed, at: url) }
        }
        try SQLiteStack.close(try SQLiteStack.coordinator(model(renaming: "name"), at: url))
    }

    /// Unset renaming identifiers answer the element's own name, as Apple documents for both.
    @Test func renamingIdentifiersDefaultToTheName() {
        let attribute = NSAttributeDescription()
        attribute.name = "title"
        let entity = NSEntityDescription()
        entity.name = "Book"
        #expect(attribute.renamingIdentifier == "title")
        #expect(entity.renamingIdentifier == "Book")
        entity.renamingIdentifier = "Volume"
        #expect(entity.renamingIdentifier == "Volume")
        #expect((entity.copy() as! NSEntityDescription).renamingIdentifier == "Volume")
    }

    /// Metadata is read and written without adding the store; the model's hashes stay, so the store still opens.
    @Test func metadataIsReadAndWrittenWithoutAddingTheStore() throws {
        let directory = SQLiteTestDirectory()
        let url = try directory.copyCorpusStore(MigrationCorpus.Wibosco.store("1"))
        var metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: url)
        #expect(metadata[NSStoreTypeKey] as? String == NSSQLiteStoreType)
        #expect(metadata[NSStoreUUIDKey] as? String == "292CEC8D-C7B1-4073-9B55-56A1A663FA59")
        metadata["lastImport"] = "2017-09-12"
        try NSPersistentStoreCoordinator.setMetadata(metadata, type: .sqlite, at: url)
        let reread = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            ofType: NSSQLiteStoreType, at: url, options: nil)
        #expect(reread["lastImport"] as? String == "2017-09-12")
        #expect(reread[NSStoreUUIDKey] as? String == "292CEC8D-C7B1-4073-9B55-56A1A663FA59")
        let coordinator = try SQLiteStack.coordinator(try MigrationCorpus.Wibosco.models()[0], at: url)
        #expect(coordinator.persistentStores.count == 1)
        try SQLiteStack.close(coordinator)
    }
}
