import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL
import StoreConformance
import Testing

/// `destroyPersistentStore(at:type:options:)` for a `postgres://` URL drops the store's schema.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, Comment(rawValue: PostgreSQLTestServer.skipMessage)))
struct PostgreSQLDestroyStoreTests {
    @Test func destroyingTheStoreDropsItsSchema() throws {
        PostgreSQLStore.register()
        let url = try #require(PostgreSQLTestServer.newURL())
        defer { PostgreSQLTestServer.drop(url) }
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: ConformanceModel.shared)
        try coordinator.addPersistentStore(ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: nil)
        let context = NSManagedObjectContext.conformance(coordinator)
        try context.run {
            context.make("Person", ["name": "Ann"])
            try context.save()
        }
        try coordinator.destroyPersistentStore(
            at: url, type: NSPersistentStore.StoreType(rawValue: PostgreSQLStoreType), options: nil)
        #expect(coordinator.persistentStores.isEmpty)

        let reopened = NSPersistentStoreCoordinator(managedObjectModel: ConformanceModel.shared)
        try reopened.addPersistentStore(ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: nil)
        let fresh = NSManagedObjectContext.conformance(reopened)
        try fresh.run {
            let count = try fresh.count(for: NSFetchRequest<NSManagedObject>(entityName: "Person"))
            #expect(count == 0)
        }
    }
}
