import Foundation
import OpenCoreData
import StoreConformance
import Testing

@testable import OpenCoreDataPostgreSQL

/// A server that goes away, and a save the server refuses: an error with the server's message, nothing half-written,
/// and a context and store that go on working.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, Comment(rawValue: PostgreSQLTestServer.skipMessage)))
struct PostgreSQLRecoveryTests {
    /// A store at a new schema whose connection carries `applicationName`, so that the test can find it on the server.
    func stack(applicationName: String) throws -> (NSPersistentStoreCoordinator, URL) {
        var components = URLComponents(
            url: try #require(PostgreSQLTestServer.newURL()), resolvingAgainstBaseURL: false)!
        components.queryItems =
            (components.queryItems ?? []) + [URLQueryItem(name: "application_name", value: applicationName)]
        let url = try #require(components.url)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: ConformanceModel.shared)
        try coordinator.addPersistentStore(ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: nil)
        return (coordinator, url)
    }

    /// A connection of the test's own to the server, for what a store must not be able to do.
    func administration() throws -> PostgreSQLConnection {
        try PostgreSQLConnection(PostgreSQLConfiguration(url: try #require(PostgreSQLTestServer.url)))
    }

    @Test func aConnectionTheServerEndedIsMadeAgainAtTheNextSave() throws {
        let name = "recovery-" + UUID().uuidString
        let (coordinator, url) = try stack(applicationName: name)
        defer { PostgreSQLTestServer.drop(url) }
        let context = NSManagedObjectContext.conformance(coordinator)
        try context.run {
            context.make("Person", ["name": "before"])
            try context.save()
        }
        // What a restart of the server looks like to the store: its connection ends.
        let ended = try administration().query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", [name])
        #expect(ended.rowCount == 1)
        try context.run {
            context.make("Person", ["name": "after"])
            try context.save()
            let names = try context.values("Person", "name")
            #expect(names == ["after", "before"])
        }
    }

    @Test func aSaveTheServerRefusesWritesNothingAndLeavesTheContextUsable() throws {
        let (coordinator, url) = try stack(applicationName: "refused-" + UUID().uuidString)
        defer { PostgreSQLTestServer.drop(url) }
        let schema = try #require(
            URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "schema" }?.value)
        // A table taken away behind the store's back: the save's insert into it fails on the server.
        try administration().execute("DROP TABLE \"\(schema)\".\"ZPROJECT\"")
        let context = NSManagedObjectContext.conformance(coordinator)
        var project: NSManagedObject?
        try context.run {
            context.make("Person", ["name": "kept in the context"])
            project = context.make("Project", ["title": "refused"])
            do {
                try context.save()
                Issue.record("the save should have failed")
            } catch let error as NSError {
                #expect(error.domain == NSCocoaErrorDomain)
                #expect(error.code == NSPersistentStoreSaveError)
                #expect(error.localizedDescription.contains("ZPROJECT"))
                #expect(error.localizedDescription.contains("does not exist"))
            }
        }
        // Nothing of the save reached the store: not even the person, whose table is fine.
        let reader = NSManagedObjectContext.conformance(coordinator)
        try reader.run {
            let count = try reader.count(for: NSFetchRequest<NSManagedObject>(entityName: "Person"))
            #expect(count == 0)
        }
        // The context goes on: without the project, the person saves.
        try context.run {
            context.delete(try #require(project))
            try context.save()
        }
        try reader.run {
            let names = try reader.values("Person", "name")
            #expect(names == ["kept in the context"])
        }
    }
}
