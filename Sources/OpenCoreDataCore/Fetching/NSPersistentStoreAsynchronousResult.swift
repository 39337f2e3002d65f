/// The result of a request that completes later (an `NSAsynchronousFetchRequest`): its context, its progress, the
/// error it failed with, and a way to cancel it.
open class NSPersistentStoreAsynchronousResult: NSPersistentStoreResult, @unchecked Sendable {
    // @unchecked: `_operationError` is set on the context's queue before the completion block runs there; the rest is
    // constant (`Progress` is thread-safe).
    let _context: NSManagedObjectContext
    let _progress: Progress?
    var _operationError: Error?

    init(context: NSManagedObjectContext, progress: Progress?) {
        _context = context
        _progress = progress
        super.init()
    }

    /// The context the request runs in (and whose queue its completion block runs on).
    open var managedObjectContext: NSManagedObjectContext { _context }

    /// Why the request failed, once it has: its error, or `CocoaError.userCancelled` if it was cancelled.
    open var operationError: Error? { _operationError }

    /// The request's progress: its unit count is the number of results, completed as they are loaded.
    open var progress: Progress? { _progress }

    /// Cancels the request: it stops before its next batch of results, and completes with
    /// `CocoaError.userCancelled` and no results.
    open func cancel() {
        _progress?.cancel()
    }
}
