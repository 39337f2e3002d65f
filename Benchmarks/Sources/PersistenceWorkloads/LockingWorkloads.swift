import Foundation
import OpenCoreData

/// Fetches beside a long save (issue 23: each store serializes its own calls, and the SQLite store reads beside a
/// save in WAL mode). One coordinator holds two SQLite stores, `Items` and `Families` (two configurations of the
/// benchmark model). A reader context looks items up by serial, one fetch at a time, while — depending on the case —
/// nothing else happens, or a writer context on another thread saves 100,000 rows into the other store, or into the
/// same store. What is measured is the reader's time: with one lock for the whole coordinator (as before), it would
/// include most of the save.
public enum LockingWorkloads {
    public enum Case: String, CaseIterable, Sendable {
        /// The reader alone.
        case alone
        /// A save of 1,000 parents × 100 children into the `Families` store runs meanwhile.
        case besideSaveToOtherStore = "other-store"
        /// A save of 100,000 items into the `Items` store, the one being read, runs meanwhile.
        case besideSaveToSameStore = "same-store"
    }

    /// How many lookups the reader makes.
    public static let lookups = 2_000
    static let preloadedItems = 10_000

    /// A coordinator with both stores, in a directory of its own; the `Items` store holds 10,000 items.
    public final class Stores: @unchecked Sendable {
        // @unchecked: `coordinator` is thread-safe; the rest is constant.
        public let coordinator: NSPersistentStoreCoordinator
        let directory: URL

        public init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("Locking-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let model = BenchmarkModel.make()
            let entities = model.entitiesByName
            model.setEntities([entities["Item"]!], forConfigurationName: "Items")
            model.setEntities([entities["Parent"]!, entities["Child"]!], forConfigurationName: "Families")
            coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            for name in ["Items", "Families"] {
                try coordinator.addPersistentStore(
                    ofType: NSSQLiteStoreType, configurationName: name,
                    at: directory.appendingPathComponent("\(name).sqlite"), options: nil)
            }
            let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            try context.performAndWait {
                for index in 0..<LockingWorkloads.preloadedItems {
                    OpenCoreDataLibrary.insertItem(Fixture.item(index), into: context)
                }
                try context.save()
            }
        }

        deinit { try? FileManager.default.removeItem(at: directory) }
    }

    /// Runs `kind` once, calling `readerStarts` and `readerEnds` around the reader's lookups (a benchmark measures
    /// between them); returns the reader's time and how many items it found.
    public static func run(
        _ kind: Case, on stores: Stores, readerStarts: () -> Void = {}, readerEnds: () -> Void = {}
    ) throws -> (reading: Duration, found: Int) {
        let writerStarted = DispatchSemaphore(value: 0)
        let writerDone = DispatchSemaphore(value: 0)
        let writerError = LockedError()
        if kind != .alone {
            let coordinator = stores.coordinator
            Thread {
                let writer = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
                writer.persistentStoreCoordinator = coordinator
                writer.performAndWait {
                    do {
                        if kind == .besideSaveToSameStore {
                            for index in 0..<100_000 {
                                OpenCoreDataLibrary.insertItem(
                                    Fixture.item(LockingWorkloads.preloadedItems + index), into: writer)
                            }
                        } else {
                            OpenCoreDataLibrary.insertParents(1_000, childrenEach: 100, into: writer)
                        }
                        writerStarted.signal()
                        try writer.save()
                    } catch {
                        writerStarted.signal()
                        writerError.set(error)
                    }
                }
                writerDone.signal()
            }.start()
            // The reader starts when the writer has made its objects and is about to save: the save is what it
            // reads beside.
            writerStarted.wait()
        }
        let reader = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        reader.persistentStoreCoordinator = stores.coordinator
        let clock = ContinuousClock()
        var found = 0
        readerStarts()
        let reading = try clock.measure {
            try reader.performAndWait {
                let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
                for lookup in 0..<lookups {
                    request.predicate = NSPredicate(format: "serial == %lld", Int64(lookup % preloadedItems))
                    found += try reader.fetch(request).count
                    reader.reset()
                }
            }
        }
        readerEnds()
        if kind != .alone {
            writerDone.wait()
            if let error = writerError.error { throw error }
            try undoWrites(of: kind, in: stores)
        }
        return (reading, found)
    }

    /// Deletes what the writer saved, so that every iteration starts from the same stores.
    static func undoWrites(of kind: Case, in stores: Stores) throws {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = stores.coordinator
        try context.performAndWait {
            let request: NSFetchRequest<NSFetchRequestResult>
            switch kind {
            case .alone: return
            case .besideSaveToSameStore:
                request = NSFetchRequest(entityName: "Item")
                request.predicate = NSPredicate(format: "serial >= %lld", Int64(preloadedItems))
                _ = try context.execute(NSBatchDeleteRequest(fetchRequest: request))
            case .besideSaveToOtherStore:
                for entity in ["Child", "Parent"] {
                    _ = try context.execute(NSBatchDeleteRequest(fetchRequest: NSFetchRequest(entityName: entity)))
                }
            }
        }
    }

    final class LockedError: @unchecked Sendable {
        // @unchecked: `value` is touched under `lock` only.
        private let lock = NSLock()
        private var value: Error?
        var error: Error? { lock.withLock { value } }
        func set(_ error: Error) { lock.withLock { value = error } }
    }
}
