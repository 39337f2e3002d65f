/// A context executes the fetch of a `FETCH(request, context, countOnly)` expression (`NSFetchRequestExpression`), as
/// a migration mapping's source expression asks.
extension NSManagedObjectContext: PredicateFetchExecuting {
    func executeFetchExpression(_ request: Any?, countOnly: Bool) -> Any {
        guard let request = request as? any NSFetchRequestUntyping else { return countOnly ? NSNumber(value: 0) : [] }
        let untyped = request._untypedRequest
        if countOnly { return NSNumber(value: (try? count(for: untyped)) ?? 0) }
        return (try? fetch(untyped)) ?? []
    }
}

/// Any `NSFetchRequest<T>` as the untyped request the context executes.
protocol NSFetchRequestUntyping {
    var _untypedRequest: NSFetchRequest<NSFetchRequestResult> { get }
}

extension NSFetchRequest: NSFetchRequestUntyping {
    var _untypedRequest: NSFetchRequest<NSFetchRequestResult> { _untyped }
}
