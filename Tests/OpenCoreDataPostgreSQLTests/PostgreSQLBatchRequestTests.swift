import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL
import StoreConformance
import Testing

/// Batch requests as other processes see them: two coordinators stand for two processes on one database.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, Comment(rawValue: PostgreSQLTestServer.skipMessage)))
struct PostgreSQLBatchRequestTests {
    /// A store at a new schema with the conformance data, and a second coordinator on it that posts remote changes.
    final class Stores {
        let url: URL
        let writer: NSPersistentStoreCoordinator
        let watcher: NSPersistentStoreCoordinator
        let watched: NSPersistentStore

        init() throws {
            PostgreSQLStore.register()
            url = try #require(PostgreSQLTestServer.newURL())
            writer = NSPersistentStoreCoordinator(managedObjectModel: ConformanceModel.shared)
            try writer.addPersistentStore(ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: nil)
            try ConformanceData.populate(NSManagedObjectContext.conformance(writer))
            watcher = NSPersistentStoreCoordinator(managedObjectModel: ConformanceModel.shared)
            watched = try watcher.addPersistentStore(
                ofType: PostgreSQLStoreType, configurationName: nil, at: url,
                options: [NSPersistentStoreRemoteChangeNotificationPostOptionKey: true])
        }

        deinit {
            try? watcher.remove(watched)
            PostgreSQLTestServer.drop(url)
        }

        /// Runs `body` in a context of the writer, and waits until the watcher posts a remote change for it.
        func expectRemoteChange(_ body: (NSManagedObjectContext) throws -> Void) throws {
            let posted = DispatchSemaphore(value: 0)
            let observer = NotificationCenter.default.addObserver(
                forName: .NSPersistentStoreRemoteChange, object: watcher, queue: nil
            ) { _ in posted.signal() }
            defer { NotificationCenter.default.removeObserver(observer) }
            let context = NSManagedObjectContext.conformance(writer)
            try context.run { try body(context) }
            #expect(posted.wait(timeout: .now() + 10) == .success)
        }
    }

    @Test func aBatchUpdateIsAConflictForAnotherProcessAndIsPosted() throws {
        let stores = try Stores()
        let reader = NSManagedObjectContext.conformance(stores.watcher)
        var bob: NSManagedObject?
        try reader.run {
            bob = try ConformanceData.one(reader, "Employee", "name", "Bob")
            #expect(bob?.value(forKey: "salary") as? Double == 80)
        }
        try stores.expectRemoteChange { context in
            let update = NSBatchUpdateRequest(entityName: "Employee")
            update.predicate = NSPredicate(format: "department.name == %@", "R&D")
            update.propertiesToUpdate = ["salary": 100]
            update.resultType = .updatedObjectsCountResultType
            let result = try #require(try context.execute(update) as? NSBatchUpdateResult)
            #expect((result.result as? NSNumber)?.intValue == 2)
        }
        try reader.run {
            bob?.setValue(29, forKey: "age")
            #expect(throws: (any Error).self) { try reader.save() }
            // The merge policy that keeps the store's values takes the batch update's salary.
            reader.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
            try reader.save()
            reader.refreshAllObjects()
            #expect(bob?.value(forKey: "salary") as? Double == 100)
            #expect((bob?.value(forKey: "age") as? NSNumber)?.intValue == 29)
        }
    }

    @Test func aBatchDeleteWithALimitDeletesTheFirstRowsAndIsPosted() throws {
        let stores = try Stores()
        try stores.expectRemoteChange { context in
            let fetch = NSFetchRequest<NSFetchRequestResult>(entityName: "Person")
            fetch.sortDescriptors = [NSSortDescriptor(key: "age", ascending: true)]
            fetch.fetchLimit = 2
            let delete = NSBatchDeleteRequest(fetchRequest: fetch)
            delete.resultType = .resultTypeCount
            let result = try #require(try context.execute(delete) as? NSBatchDeleteResult)
            #expect((result.result as? NSNumber)?.intValue == 2)
        }
        let context = NSManagedObjectContext.conformance(stores.watcher)
        try context.run {
            // Quinn (19) and Dee (23) were the youngest.
            let names = try context.values("Person", "name")
            #expect(names == ["Ann", "Bob", "Cid", "Paula", "Émile"])
        }
    }

    @Test func aBatchInsertIsPostedAndItsKeysDoNotCollideWithAnotherProcess() throws {
        let stores = try Stores()
        var inserted: [NSManagedObjectID] = []
        try stores.expectRemoteChange { context in
            let insert = NSBatchInsertRequest(
                entityName: "Note", objects: (0..<12_000).map { ["text": "note \($0)"] })
            insert.resultType = .objectIDs
            let result = try #require(try context.execute(insert) as? NSBatchInsertResult)
            inserted = try #require(result.result as? [NSManagedObjectID])
        }
        #expect(inserted.count == 12_000)
        let other = NSManagedObjectContext.conformance(stores.watcher)
        try other.run {
            let note = other.make("Note", ["text": "saved by the other process"])
            try other.save()
            let keys = Set(inserted.map { $0.uriRepresentation().lastPathComponent })
            #expect(!keys.contains(note.objectID.uriRepresentation().lastPathComponent))
            #expect(keys.count == 12_000)
            let count = try other.count(for: NSFetchRequest<NSManagedObject>(entityName: "Note"))
            #expect(count == 12_001)
        }
    }

    @Test func anotherProcessSavesNewObjectsWhileABatchInsertRuns() throws {
        let stores = try Stores()
        let otherSaved = DispatchSemaphore(value: 0)
        let context = NSManagedObjectContext.conformance(stores.writer)
        try context.run {
            var produced = 0
            let insert = NSBatchInsertRequest(entityName: "Note") { (dictionary: NSMutableDictionary) in
                guard produced < 12_000 else { return true }
                produced += 1
                dictionary["text"] = "batch \(produced)"
                if produced == 7_000 {
                    // Halfway through the batch's transaction, another process saves a note: it must not wait for
                    // keys until the batch commits.
                    let other = NSManagedObjectContext.conformance(stores.watcher)
                    other.perform {
                        other.make("Note", ["text": "saved meanwhile"])
                        if (try? other.save()) != nil { otherSaved.signal() }
                    }
                    #expect(otherSaved.wait(timeout: .now() + 10) == .success)
                }
                return false
            }
            insert.resultType = .count
            let result = try #require(try context.execute(insert) as? NSBatchInsertResult)
            #expect((result.result as? NSNumber)?.intValue == 12_000)
        }
        let check = NSManagedObjectContext.conformance(stores.watcher)
        try check.run {
            let count = try check.count(for: NSFetchRequest<NSManagedObject>(entityName: "Note"))
            #expect(count == 12_001)
        }
    }

    @Test func aBatchInsertThatFailsPartwayWritesNothingAndTheContextStaysUsable() throws {
        let stores = try Stores()
        let context = NSManagedObjectContext.conformance(stores.writer)
        try context.run {
            // The 6,000th note holds a NUL character, which PostgreSQL's text cannot: the first 5,000 went out in an
            // earlier statement of the same transaction.
            let objects: [[String: Any]] = (1...6_000).map { ["text": $0 == 6_000 ? "nul \u{0} here" : "note \($0)"] }
            #expect {
                _ = try context.execute(NSBatchInsertRequest(entityName: "Note", objects: objects))
            } throws: { error in
                (error as NSError).domain == NSCocoaErrorDomain
                    && "\(error)".contains("NUL character")
            }
            let afterFailure = try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Note"))
            #expect(afterFailure == 0)
            let retried = NSBatchInsertRequest(entityName: "Note", objects: Array(objects.dropLast()))
            retried.resultType = .count
            let result = try #require(try context.execute(retried) as? NSBatchInsertResult)
            #expect((result.result as? NSNumber)?.intValue == 5_999)
        }
    }
}
