/// A fetch that runs after the block that starts it, on the context's queue, loading its results a batch at a time
/// with progress reporting and cancellation, and then calls its completion block with them.
///
/// ```swift
/// let overall = Progress(totalUnitCount: 1)
/// overall.becomeCurrent(withPendingUnitCount: 1)
/// let request = NSAsynchronousFetchRequest(fetchRequest: NSFetchRequest<Company>(entityName: "Company")) { result in
///     show(result.finalResult ?? [])
/// }
/// let result = try context.execute(request) as? NSAsynchronousFetchResult<Company>
/// overall.resignCurrent()
/// // later: result?.cancel()
/// ```
///
/// The progress (the result's `progress`, a child of the progress current when the request is executed) counts the
/// results. The context must have a queue (`.privateQueueConcurrencyType` or `.mainQueueConcurrencyType`).
open class NSAsynchronousFetchRequest<ResultType>: NSPersistentStoreRequest, @unchecked Sendable {
    // @unchecked: as NSPersistentStoreRequest: configured, then executed; not changed while executing.
    let _fetchRequest: NSFetchRequest<ResultType>
    let _completionBlock: ((NSAsynchronousFetchResult<ResultType>) -> Void)?

    /// How many results to expect, for the progress until the fetch knows; 0 if unknown.
    open var estimatedResultCount = 0

    /// A request that runs `request` and calls `blk` with its result, on the context's queue.
    public init(
        fetchRequest request: NSFetchRequest<ResultType>,
        completionBlock blk: ((NSAsynchronousFetchResult<ResultType>) -> Void)? = nil
    ) {
        _fetchRequest = request
        _completionBlock = blk
        super.init()
    }

    /// The fetch request that is run.
    open var fetchRequest: NSFetchRequest<ResultType> { _fetchRequest }

    /// The block called with the result once the fetch has completed, failed or been cancelled.
    open var completionBlock: ((NSAsynchronousFetchResult<ResultType>) -> Void)? { _completionBlock }

    open override var requestType: NSPersistentStoreRequestType { .fetchRequestType }

    open override func copy(with zone: NSZone? = nil) -> Any {
        let copy = NSAsynchronousFetchRequest(fetchRequest: _fetchRequest, completionBlock: _completionBlock)
        copy.estimatedResultCount = estimatedResultCount
        copy.affectedStores = affectedStores
        return copy
    }
}
