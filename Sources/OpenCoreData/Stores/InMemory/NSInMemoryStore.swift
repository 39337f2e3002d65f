/// The in-memory store (`NSInMemoryStoreType`): an atomic store that never reads or writes a file. Its objects
/// live as long as the store is part of its coordinator.
final class NSInMemoryStore: NSAtomicStore, @unchecked Sendable {
    private var nextKey: Int64 = 1

    override var type: String { NSInMemoryStoreType }

    override func newReferenceObject(for managedObject: NSManagedObject) -> Any {
        defer { nextKey += 1 }
        return NSNumber(value: nextKey)
    }
}
