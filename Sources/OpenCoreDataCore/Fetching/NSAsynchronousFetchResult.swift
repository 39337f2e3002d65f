/// What an `NSAsynchronousFetchRequest` gives back at once, and to its completion block once the fetch is done.
///
/// ```swift
/// let result = try context.execute(asynchronous) as? NSAsynchronousFetchResult<Company>
/// result?.progress?.totalUnitCount  // the number of companies, once known
/// ```
open class NSAsynchronousFetchResult<ResultType>: NSPersistentStoreAsynchronousResult, @unchecked Sendable {
    // @unchecked: `_finalResult` is set on the context's queue before the completion block runs there, then only read.
    let _request: NSAsynchronousFetchRequest<ResultType>
    var _finalResult: [ResultType]?

    init(request: NSAsynchronousFetchRequest<ResultType>, context: NSManagedObjectContext, progress: Progress?) {
        _request = request
        super.init(context: context, progress: progress)
    }

    /// The request this is the result of.
    open var fetchRequest: NSAsynchronousFetchRequest<ResultType> { _request }

    /// The results, once the fetch has completed; `nil` before, and if it failed or was cancelled.
    open var finalResult: [ResultType]? { _finalResult }
}
