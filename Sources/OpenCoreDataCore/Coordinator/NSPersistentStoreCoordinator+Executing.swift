/// Executing requests through the coordinator, as `NSIncrementalStore`-era code does.
extension NSPersistentStoreCoordinator {
    /// Executes `request` for `context`: a fetch request returns its results as an array (the objects registered in
    /// `context`, or IDs, dictionaries or a count, per its `resultType`), a batch request its
    /// `NSPersistentStoreResult` (see `NSManagedObjectContext.execute(_:)`).
    ///
    /// ```swift
    /// let companies = try coordinator.execute(NSFetchRequest<Company>(entityName: "Company"), with: context)
    /// ```
    public func execute(_ request: NSPersistentStoreRequest, with context: NSManagedObjectContext) throws -> Any {
        if let fetch = request as? UntypedFetchRequestConvertible {
            return try context._execute(fetch._untyped)
        }
        switch request {
        case is NSBatchUpdateRequest, is NSBatchDeleteRequest, is NSBatchInsertRequest,
            is NSPersistentHistoryChangeRequest:
            return try context.execute(request)
        default:
            throw coreDataError(
                NSPersistentStoreUnsupportedRequestTypeError,
                "The coordinator executes fetch and batch requests; \(type(of: request)) is neither",
                userInfo: ["request": request])
        }
    }
}

/// A fetch request of any result type, as the untyped request the framework passes around.
protocol UntypedFetchRequestConvertible {
    var _untyped: NSFetchRequest<NSFetchRequestResult> { get }
}

extension NSFetchRequest: UntypedFetchRequestConvertible {}
