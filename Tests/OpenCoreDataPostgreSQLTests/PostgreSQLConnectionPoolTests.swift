import Foundation
import OpenCoreData
import StoreConformance
import Testing

@testable import OpenCoreDataPostgreSQL

/// Fetches from several contexts on several threads read at once, each through a connection of the store's pool,
/// with the right results; the pool stays within its bound and replaces connections the server ended.
///
/// The store's connections carry an `application_name` of the test's own, so that a connection of the test finds
/// them in `pg_stat_activity`: how many the store opened tells how many of its requests ran at once, as the pool
/// opens another connection only when every one it has is busy.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, Comment(rawValue: PostgreSQLTestServer.skipMessage)))
struct PostgreSQLConnectionPoolTests {
    static let itemCount = 2_000
    static let readers = 4
    static let fetchesPerReader = 12

    /// A store at a new schema whose connections carry `applicationName` (and `query` as further URL query items),
    /// holding `itemCount` items.
    func stack(_ applicationName: String, query: [URLQueryItem] = [], options: [AnyHashable: Any]? = nil) throws
        -> (NSPersistentStoreCoordinator, URL)
    {
        var components = URLComponents(
            url: try #require(PostgreSQLTestServer.newURL()), resolvingAgainstBaseURL: false)!
        components.queryItems =
            (components.queryItems ?? []) + [URLQueryItem(name: "application_name", value: applicationName)] + query
        let url = try #require(components.url)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: ConformanceModel.shared)
        try coordinator.addPersistentStore(
            ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: options)
        let context = NSManagedObjectContext.conformance(coordinator)
        try context.run {
            for index in 0..<Self.itemCount {
                context.make("Item", ["int64": index, "string": "item \(index)"])
            }
            try context.save()
        }
        return (coordinator, url)
    }

    /// A connection of the test's own to the server.
    func administration() throws -> PostgreSQLConnection {
        try PostgreSQLConnection(PostgreSQLConfiguration(url: try #require(PostgreSQLTestServer.url)))
    }

    /// The server's connections named `applicationName`.
    func connections(_ applicationName: String) throws -> Int {
        let result = try administration().query(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", [applicationName])
        return Int(result.int64(0, 0) ?? 0)
    }

    /// Each reader, on a thread of its own with a private-queue context of its own, fetches the items whose `int64`
    /// is below 1,000 again and again, starting together; returns what went wrong.
    func readTogether(_ coordinator: NSPersistentStoreCoordinator) -> [String] {
        let failures = LockedValue<[String]>([])
        let group = DispatchGroup()
        let start = NSCondition()
        let arrived = LockedValue(0)
        for reader in 0..<Self.readers {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                start.lock()
                arrived.withLock { $0 += 1 }
                start.broadcast()
                while arrived.withLock({ $0 }) < Self.readers { start.wait() }
                start.unlock()
                let context = NSManagedObjectContext.conformance(coordinator)
                context.performAndWait {
                    do {
                        for _ in 0..<Self.fetchesPerReader {
                            let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
                            request.predicate = NSPredicate(format: "int64 < 1000 AND string BEGINSWITH %@", "item")
                            let items = try context.fetch(request)
                            let values = Set(items.compactMap { ($0.value(forKey: "int64") as? NSNumber)?.intValue })
                            if items.count != 1_000 || values != Set(0..<1_000) {
                                failures.withLock { $0.append("reader \(reader) read \(values.count) items") }
                            }
                            context.reset()
                        }
                    } catch {
                        failures.withLock { $0.append("reader \(reader): \(error)") }
                    }
                }
            }
        }
        group.wait()
        return failures.withLock { $0 }
    }

    @Test func fetchesFromSeveralContextsReadAtOnceThroughConnectionsOfTheirOwn() throws {
        let name = "pool-" + UUID().uuidString
        let (coordinator, url) = try stack(name)
        defer { PostgreSQLTestServer.drop(url) }
        #expect(try connections(name) == 1)
        #expect(readTogether(coordinator).isEmpty)
        // The write connection and at least one reading connection: a fetch ran beside another call. Never more
        // than the default bound.
        let opened = try connections(name)
        #expect(opened >= 2)
        #expect(opened <= PostgreSQLConnectionPool.defaultMaximumSize)
        let store = try #require(coordinator.persistentStores.first as? PostgreSQLStore)
        #expect(store.readers.openCount == opened - 1)
    }

    @Test func thePoolSizeOfTheURLBoundsTheConnections() throws {
        let name = "pool-" + UUID().uuidString
        let (coordinator, url) = try stack(name, query: [URLQueryItem(name: "pool_size", value: "2")])
        defer { PostgreSQLTestServer.drop(url) }
        #expect(readTogether(coordinator).isEmpty)
        #expect(try connections(name) <= 2)
    }

    @Test func aPoolOfOneReadsThroughTheWriteConnectionOnly() throws {
        let name = "pool-" + UUID().uuidString
        let (coordinator, url) = try stack(
            name, options: [NSPersistentStoreConnectionPoolMaxSizeKey: NSNumber(value: 1)])
        defer { PostgreSQLTestServer.drop(url) }
        #expect(readTogether(coordinator).isEmpty)
        #expect(try connections(name) == 1)
    }

    @Test func connectionsTheServerEndedAreReplaced() throws {
        let name = "pool-" + UUID().uuidString
        let (coordinator, url) = try stack(name)
        defer { PostgreSQLTestServer.drop(url) }
        #expect(readTogether(coordinator).isEmpty)
        // What a restart of the server looks like to the store: every connection of it ends.
        let ended = try administration().query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", [name])
        #expect(ended.rowCount >= 2)
        #expect(readTogether(coordinator).isEmpty)
        #expect(try connections(name) >= 2)
        // And the store still saves.
        let context = NSManagedObjectContext.conformance(coordinator)
        try context.run {
            context.make("Item", ["int64": -1, "string": "after"])
            try context.save()
            #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Item")) == Self.itemCount + 1)
        }
    }

    @Test func aPoolSizeThatIsNoWholeNumberIsAnError() throws {
        let url = try #require(PostgreSQLTestServer.newURL())
        defer { PostgreSQLTestServer.drop(url) }
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        components.queryItems = (components.queryItems ?? []) + [URLQueryItem(name: "pool_size", value: "0")]
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: ConformanceModel.shared)
        do {
            try coordinator.addPersistentStore(
                ofType: PostgreSQLStoreType, configurationName: nil, at: components.url!, options: nil)
            Issue.record("a pool_size of 0 should not open")
        } catch let error as NSError {
            #expect(error.domain == NSCocoaErrorDomain)
            #expect(error.code == NSPersistentStoreOpenError)
            #expect(error.localizedDescription.contains("pool_size"))
        }
        do {
            try coordinator.addPersistentStore(
                ofType: PostgreSQLStoreType, configurationName: nil, at: url,
                options: [NSPersistentStoreConnectionPoolMaxSizeKey: "many"])
            Issue.record("a pool size of \"many\" should not open")
        } catch let error as NSError {
            #expect(error.code == NSPersistentStoreOpenError)
            #expect(error.localizedDescription.contains("NSPersistentStoreConnectionPoolMaxSizeKey"))
        }
        #expect(coordinator.persistentStores.isEmpty)
    }
}
