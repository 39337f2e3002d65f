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
