/// The in-memory store (`NSInMemoryStoreType`): an atomic store that never reads or writes a file. Its objects
/// live as long as the store is part of its coordinator.
final class NSInMemoryStore: NSAtomicStore, @unchecked Sendable {
    // @unchecked: `lastKeys` changes only in `newReferenceObject(for:)`, which the coordinator calls inside the store's
    // serialization.
    /// The last key given out, per root entity: objects of an inheritance hierarchy share one sequence, as rows
    /// of one table do in the SQLite store.
    private var lastKeys: [String: Int64] = [:]

    override var type: String { NSInMemoryStoreType }

    override func newReferenceObject(for managedObject: NSManagedObject) -> Any {
        var root = managedObject.entity
        while let parent = root.superentity { root = parent }
        let key = (lastKeys[root.name ?? ""] ?? 0) + 1
        lastKeys[root.name ?? ""] = key
        return NSNumber(value: key)
    }
}
