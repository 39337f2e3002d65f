import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL
import StoreConformance
import Testing

/// Several coordinators — standing for processes, as they share nothing but the server — writing the same row at
/// once: optimistic locking loses no update, and a trump merge policy settles every conflict.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, Comment(rawValue: PostgreSQLTestServer.skipMessage)))
struct PostgreSQLContentionTests {
    static let writers = 4
    static let updatesPerWriter = 25

    /// Coordinators on one new store, with one saved `Item` whose `int64` is 0.
    func sharedRow() throws -> (URL, [NSPersistentStoreCoordinator]) {
        let url = try #require(PostgreSQLTestServer.newURL())
        let coordinators = (0..<Self.writers).map { _ in
            NSPersistentStoreCoordinator(managedObjectModel: ConformanceModel.shared)
        }
        for coordinator in coordinators {
            try coordinator.addPersistentStore(
                ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: nil)
        }
        let context = NSManagedObjectContext.conformance(coordinators[0])
        try context.run {
            context.make("Item", ["int64": 0, "string": "shared"])
            try context.save()
        }
        return (url, coordinators)
    }

    /// Runs `body` for each writer on a thread of its own, and holds them until every one has called its `ready`,
    /// so that they all start from the same version of the row.
    static func runWriters(_ body: @escaping @Sendable (Int, () -> Void) -> Void) {
        let group = DispatchGroup()
        let waiting = NSCondition()
        let arrived = LockedValue(0)
        for writer in 0..<writers {
            group.enter()
            Thread.detachNewThread {
                body(writer) {
                    waiting.lock()
                    arrived.withLock { $0 += 1 }
                    waiting.broadcast()
                    while arrived.withLock({ $0 }) < writers { waiting.wait() }
                    waiting.unlock()
                }
                group.leave()
            }
        }
        group.wait()
    }

    @Test func incrementsFromEveryWriterAreAllKept() throws {
        let (url, coordinators) = try sharedRow()
        defer { PostgreSQLTestServer.drop(url) }
        let failures = LockedValue<[String]>([])
        let conflicts = LockedValue(0)
        let start = Date()
        Self.runWriters { writer, ready in
            let context = NSManagedObjectContext.conformance(coordinators[writer])
            context.performAndWait {
                do {
                    let item = try #require(try context.objects("Item").first)
                    ready()
                    for _ in 0..<Self.updatesPerWriter {
                        // Read, add one, save; on a conflict read again and retry: the error policy loses nothing.
                        while true {
                            let value = (item.value(forKey: "int64") as? NSNumber)?.int64Value ?? 0
                            item.setValue(value + 1, forKey: "int64")
                            do {
                                try context.save()
                                break
                            } catch let error as NSError where error.code == NSManagedObjectMergeError {
                                conflicts.withLock { $0 += 1 }
                                context.refresh(item, mergeChanges: false)
                            }
                        }
                    }
                } catch {
                    failures.withLock { $0.append("writer \(writer): \(error)") }
                }
            }
        }
        let seconds = Date().timeIntervalSince(start)
        #expect(failures.withLock { $0 } == [])
        let reader = NSManagedObjectContext.conformance(coordinators[0])
        try reader.run {
            let total = try reader.objects("Item").first?.value(forKey: "int64") as? NSNumber
            #expect(total?.intValue == Self.writers * Self.updatesPerWriter)
        }
        let saves = Self.writers * Self.updatesPerWriter
        print(
            """
            PostgreSQL contention: \(Self.writers) coordinators × \(Self.updatesPerWriter) increments of one row: \
            \(saves) saves, \(conflicts.withLock { $0 }) conflicts retried, \(Int(Double(saves) / seconds)) saves/s
            """)
    }

    @Test func aTrumpPolicyNeverGivesUpUnderContention() throws {
        let (url, coordinators) = try sharedRow()
        defer { PostgreSQLTestServer.drop(url) }
        let failures = LockedValue<[String]>([])
        Self.runWriters { writer, ready in
            let context = NSManagedObjectContext.conformance(coordinators[writer])
            context.mergePolicy = NSMergePolicy(merge: .mergeByPropertyObjectTrumpMergePolicyType)
            context.performAndWait {
                do {
                    let item = try #require(try context.objects("Item").first)
                    ready()
                    for index in 0..<Self.updatesPerWriter {
                        item.setValue("writer \(writer), update \(index)", forKey: "string")
                        try context.save()
                    }
                } catch {
                    failures.withLock { $0.append("writer \(writer): \(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 } == [])
        let reader = NSManagedObjectContext.conformance(coordinators[0])
        try reader.run {
            let last = try reader.objects("Item").first?.value(forKey: "string") as? String
            #expect(last?.hasSuffix("update \(Self.updatesPerWriter - 1)") == true)
        }
    }
}
