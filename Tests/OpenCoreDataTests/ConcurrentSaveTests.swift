import Foundation
import OpenCoreDataShim
import Testing

/// Contexts on their own queues, on two coordinators of one store file, insert and update at once: every insert
/// arrives, and no increment of a shared counter is lost (optimistic locking through `Z_OPT`, with retries). CI runs
/// this suite again under ThreadSanitizer.
@Suite struct ConcurrentSaveTests {
    static let workers = 4
    static let rounds = 15

    @Test func concurrentSavesLoseNothing() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let model = SQLiteSampleModel.make()
        let coordinators = try (0..<2).map { _ in try SQLiteStack.coordinator(model, at: url) }
        let setup = SQLiteStack.context(coordinators[0])
        try setup.performAndWait {
            let counter = NSEntityDescription.insertNewObject(forEntityName: "Item", into: setup)
            counter.setValue("counter", forKey: "name")
            counter.setValue(Int64(0), forKey: "int64")
            try setup.save()
        }
        let failures = FailureLog()
        DispatchQueue.concurrentPerform(iterations: Self.workers) { worker in
            let context = SQLiteStack.context(coordinators[worker % 2])
            context.stalenessInterval = 0
            context.performAndWait {
                for round in 0..<Self.rounds {
                    for number in 0..<5 {
                        let owner = NSEntityDescription.insertNewObject(forEntityName: "Owner", into: context)
                        owner.setValue("worker \(worker) round \(round) #\(number)", forKey: "name")
                    }
                    // The counter is read fresh and incremented; a conflict with another worker's save is retried.
                    var attempts = 0
                    while true {
                        attempts += 1
                        do {
                            let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
                            request.predicate = NSPredicate(format: "name == 'counter'")
                            let counter = try context.fetch(request)[0]
                            context.refresh(counter, mergeChanges: false)
                            let value = counter.value(forKey: "int64") as? Int64 ?? 0
                            counter.setValue(value + 1, forKey: "int64")
                            try context.save()
                            break
                        } catch let error as NSError where error.code == NSManagedObjectMergeError && attempts < 1_000 {
                            context.rollback()
                            for number in 0..<5 {
                                let owner = NSEntityDescription.insertNewObject(forEntityName: "Owner", into: context)
                                owner.setValue("worker \(worker) round \(round) #\(number)", forKey: "name")
                            }
                        } catch {
                            failures.record("worker \(worker) round \(round): \(error)")
                            return
                        }
                    }
                }
            }
        }
        #expect(failures.entries.isEmpty, "\(failures.entries.prefix(3))")
        let check = SQLiteStack.context(coordinators[1])
        try check.performAndWait {
            let owners = try check.count(for: NSFetchRequest<NSManagedObject>(entityName: "Owner"))
            #expect(owners == Self.workers * Self.rounds * 5)
            let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
            request.predicate = NSPredicate(format: "name == 'counter'")
            let counter = try check.fetch(request)[0]
            check.refresh(counter, mergeChanges: false)
            #expect(counter.value(forKey: "int64") as? Int64 == Int64(Self.workers * Self.rounds))
        }
    }

    /// Failures recorded from several threads.
    final class FailureLog: @unchecked Sendable {
        private let lock = NSLock()
        private var recorded: [String] = []

        func record(_ entry: String) {
            lock.lock()
            recorded.append(entry)
            lock.unlock()
        }

        var entries: [String] {
            lock.lock()
            defer { lock.unlock() }
            return recorded
        }
    }
}
