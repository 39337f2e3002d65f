/// What `NSManagedObjectContext.execute(_:)` gives back: the outcome of a batch request (`NSBatchUpdateResult`,
/// `NSBatchDeleteResult`, `NSBatchInsertResult`) or of an asynchronous fetch.
///
/// ```swift
/// let result = try context.execute(request) as? NSBatchDeleteResult
/// let deleted = result?.result as? [NSManagedObjectID] ?? []
/// ```
open class NSPersistentStoreResult: NSObject, @unchecked Sendable {
    // @unchecked: no state of its own; subclasses hold constants set by the store that made them.
    public override init() {
        super.init()
    }
}
