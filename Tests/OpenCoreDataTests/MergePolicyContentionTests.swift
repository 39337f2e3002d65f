import Foundation
import OpenCoreData
import Testing

/// A row that does some work when a merge policy gives it the store's values (as an object recomputing what it
/// derives from them would): time in which, were conflicts resolved outside the store's write lock, other writers
/// would save again and make the retry conflict anew.
final class ContendedRow: NSManagedObject {
    override func awakeFromSnapshotEvents(_ flags: NSSnapshotEventType) {
        super.awakeFromSnapshotEvents(flags)
        if flags.contains(.mergePolicy) { Thread.sleep(forTimeInterval: 0.002) }
    }
}

/// Many contexts saving the same rows at once, on one coordinator or on two coordinators of one file (as two
/// processes would): a trump policy settles every conflict, and the error policy reports every one, and neither
/// loses an update.
@Suite struct MergePolicyContentionTests {
    static let writers = 8
    static let rows = 4
    static let rounds = 15

    /// A row with one counter per writer: each writer changes only its own, so that a merge by property keeps
    /// every writer's latest value and a lost update shows.
    static func model() -> NSManagedObjectModel {
        let row = NSEntityDescription()
        row.name = "Row"
        row.managedObjectClassName = NSStringFromClass(ContendedRow.self)
        row.properties = [NSAttributeDescription](
            (0..<writers).map { index in
                let attribute = NSAttributeDescription()
                attribute.name = "counter\(index)"
                attribute.attributeType = .integer64AttributeType
                attribute.defaultValue = 0
                return attribute
            })
        let model = NSManagedObjectModel()
        model.entities = [row]
        return model
    }

    /// The writers' contexts, spread over `coordinators` coordinators of one new file holding the rows.
    static func contexts(coordinators: Int, directory: SQLiteTestDirectory) throws -> [NSManagedObjectContext] {
        let url = directory.store()
        let model = model()
        let stacks = try (0..<coordinators).map { _ in try SQLiteStack.coordinator(model, at: url) }
        let setUp = SQLiteStack.context(stacks[0])
        try setUp.performAndWait {
            for _ in 0..<rows { _ = NSEntityDescription.insertNewObject(forEntityName: "Row", into: setUp) }
            try setUp.save()
        }
        return (0..<writers).map { SQLiteStack.context(stacks[$0 % coordinators]) }
    }

    /// Every writer sets its counter of every row to the round's number, round after round, and saves; `onError`
    /// says whether to retry a save that threw.
    static func run(
        _ contexts: [NSManagedObjectContext], onError: @escaping @Sendable (NSError, NSManagedObjectContext) -> Bool
    ) {
        // Every writer reads the rows before any writes: all but the first to save start out of date.
        // (Each writer's objects are used on its context's queue only.)
        let rowsOfWriter = Locked(
            contexts.map { context in
                context.performAndWait {
                    (try? context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Row"))) ?? []
                }
            })
        #expect(rowsOfWriter.withLock { $0.map(\.count) } == Array(repeating: Self.rows, count: contexts.count))
        // One thread per writer, all at once (a dispatch pool would run only as many as there are cores).
        let done = DispatchGroup()
        for writer in contexts.indices {
            done.enter()
            Thread {
                defer { done.leave() }
                write(writer)
            }.start()
        }
        done.wait()

        @Sendable func write(_ writer: Int) {
            let context = contexts[writer]
            let rows = rowsOfWriter.withLock { $0[writer] }
            context.performAndWait {
                for round in 1...Int64(rounds) {
                    for row in rows { row.setValue(round, forKey: "counter\(writer)") }
                    while true {
                        do {
                            try context.save()
                            break
                        } catch {
                            guard onError(error as NSError, context) else { return }
                        }
                    }
                }
            }
        }
    }

    /// The counters as a new coordinator reads them from the file.
    static func counters(_ directory: SQLiteTestDirectory) throws -> [[Int64]] {
        let context = SQLiteStack.context(try SQLiteStack.coordinator(model(), at: directory.store()))
        return try context.performAndWait {
            try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Row")).map { row in
                (0..<writers).map { row.value(forKey: "counter\($0)") as? Int64 ?? -1 }
            }
        }
    }

    static var everyUpdate: [[Int64]] {
        Array(repeating: Array(repeating: Int64(rounds), count: writers), count: rows)
    }

    @Test(arguments: [1, 2])
    func trumpPoliciesNeverThrowAndLoseNoUpdate(coordinators: Int) throws {
        for policy in [NSMergePolicy.mergeByPropertyObjectTrump, .mergeByPropertyStoreTrump] {
            let directory = SQLiteTestDirectory()
            let contexts = try Self.contexts(coordinators: coordinators, directory: directory)
            for context in contexts { context.mergePolicy = policy }
            let thrown = Locked<[Int]>([])
            Self.run(contexts) { error, _ in
                thrown.withLock { $0.append(error.code) }
                return false
            }
            #expect(thrown.withLock { $0 } == [], "\(policy.mergeType)")
            #expect(try Self.counters(directory) == Self.everyUpdate, "\(policy.mergeType)")
        }
    }

    @Test(arguments: [1, 2])
    func theErrorPolicyReportsEveryConflictAndLosesNoUpdate(coordinators: Int) throws {
        let directory = SQLiteTestDirectory()
        let contexts = try Self.contexts(coordinators: coordinators, directory: directory)
        let reported = Locked(0)
        let unexpected = Locked<[Int]>([])
        Self.run(contexts) { error, context in
            let conflicts = error.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSMergeConflict] ?? []
            guard error.domain == NSCocoaErrorDomain, error.code == NSManagedObjectMergeError, !conflicts.isEmpty
            else {
                unexpected.withLock { $0.append(error.code) }
                return false
            }
            reported.withLock { $0 += conflicts.count }
            // The application's answer to the error: take the store's values, keep its own change, save again.
            for conflict in conflicts { context.refresh(conflict.sourceObject, mergeChanges: true) }
            return true
        }
        #expect(unexpected.withLock { $0 } == [])
        #expect(try Self.counters(directory) == Self.everyUpdate)
        // Writers that changed rows others had saved since they read them conflicted at least once.
        #expect(reported.withLock { $0 } > 0)
    }
}
