import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL
import StoreConformance
import Testing

/// `NSPersistentStoreRemoteChangeNotificationPostOptionKey`: a store posts `.NSPersistentStoreRemoteChange` for the
/// commits of every coordinator and process to it, through PostgreSQL's LISTEN/NOTIFY.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, Comment(rawValue: PostgreSQLTestServer.skipMessage)))
struct PostgreSQLRemoteChangeTests {
    @Test func aCommitOfAnotherCoordinatorIsPosted() throws {
        let url = try #require(PostgreSQLTestServer.newURL())
        defer { PostgreSQLTestServer.drop(url) }
        let writer = NSPersistentStoreCoordinator(managedObjectModel: ConformanceModel.shared)
        try writer.addPersistentStore(ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: nil)
        let watcher = NSPersistentStoreCoordinator(managedObjectModel: ConformanceModel.shared)
        let store = try watcher.addPersistentStore(
            ofType: PostgreSQLStoreType, configurationName: nil, at: url,
            options: [NSPersistentStoreRemoteChangeNotificationPostOptionKey: true])
        defer { try? watcher.remove(store) }

        let posted = DispatchSemaphore(value: 0)
        let seen = LockedValue<[String]>([])
        let observer = NotificationCenter.default.addObserver(
            forName: .NSPersistentStoreRemoteChange, object: watcher, queue: nil
        ) { note in
            seen.withLock { $0.append(note.userInfo?[NSStoreUUIDKey] as? String ?? "") }
            posted.signal()
        }
        defer { NotificationCenter.default.removeObserver(observer) }

        let context = NSManagedObjectContext.conformance(writer)
        try context.run {
            context.make("Person", ["name": "seen elsewhere"])
            try context.save()
        }
        #expect(posted.wait(timeout: .now() + 10) == .success)
        #expect(seen.withLock { $0 }.first == store.identifier)
    }

    @Test func aStoreWithoutTheOptionPostsNothing() throws {
        let url = try #require(PostgreSQLTestServer.newURL())
        defer { PostgreSQLTestServer.drop(url) }
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: ConformanceModel.shared)
        try coordinator.addPersistentStore(ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: nil)
        let posted = LockedValue(0)
        let observer = NotificationCenter.default.addObserver(
            forName: .NSPersistentStoreRemoteChange, object: coordinator, queue: nil
        ) { _ in posted.withLock { $0 += 1 } }
        defer { NotificationCenter.default.removeObserver(observer) }
        let context = NSManagedObjectContext.conformance(coordinator)
        try context.run {
            context.make("Person", ["name": "unseen"])
            try context.save()
        }
        Thread.sleep(forTimeInterval: 0.5)
        #expect(posted.withLock { $0 } == 0)
    }
}
