// Core Data's expression that runs a fetch: migration mappings use it as the source expression of an entity mapping
// (`FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Car", "TRUEPREDICATE"),
// $manager.sourceContext, NO)`). The expression tree knows nothing of contexts: the context it evaluates to answers
// through `PredicateFetchExecuting`, which `NSManagedObjectContext` adopts.

/// The expression type of a fetch request expression (50).
public let NSFetchRequestExpressionType = NSExpression.ExpressionType.fetchRequest

/// An expression that executes a fetch request in a managed object context and evaluates to the objects found, or to
/// their number.
///
/// `expression(forFetch:context:countOnly:)` makes one of this class. A Swift initializer cannot return a subclass,
/// so `NSExpression(format: "FETCH(…)")` makes a plain `NSExpression` whose `expressionType` is
/// `NSFetchRequestExpressionType`; it evaluates, prints and compares the same.
///
/// ```swift
/// let fetch = NSFetchRequestExpression.expression(
///     forFetch: NSExpression(forConstantValue: NSFetchRequest<NSManagedObject>(entityName: "Post")),
///     context: NSExpression(forConstantValue: context), countOnly: true)
/// fetch.expressionValue(with: nil, context: nil)  // the number of posts
/// ```
public final class NSFetchRequestExpression: NSExpression, @unchecked Sendable {
    // @unchecked: immutable once made, as NSExpression.
    /// An expression that fetches with the request `fetch` evaluates to (an `NSFetchRequest`) in the context
    /// `context` evaluates to (an `NSManagedObjectContext`); with `countOnly`, it evaluates to the count.
    public class func expression(forFetch fetch: NSExpression, context: NSExpression, countOnly countFlag: Bool)
        -> NSExpression
    {
        NSFetchRequestExpression(kind: .fetch(fetch, context: context, countOnly: countFlag))
    }

    override init(kind: Kind) {
        super.init(kind: kind)
    }

    public required init(from decoder: any Decoder) throws {
        try super.init(from: decoder)
    }

    /// The expression that evaluates to the fetch request.
    public var requestExpression: NSExpression {
        guard case .fetch(let request, _, _) = kind else { return self }
        return request
    }

    /// The expression that evaluates to the managed object context.
    public var contextExpression: NSExpression {
        guard case .fetch(_, let context, _) = kind else { return self }
        return context
    }

    /// Whether the expression evaluates to a count rather than to the objects.
    public var isCountOnlyRequest: Bool {
        guard case .fetch(_, _, let countOnly) = kind else { return false }
        return countOnly
    }
}

/// What a `FETCH(request, context, countOnly)` expression needs of the value its context expression evaluates to.
protocol PredicateFetchExecuting {
    /// The objects `request` finds (an array), or their number with `countOnly`. `request` is what the request
    /// expression evaluated to; something that is not a fetch request, or a fetch that fails, gives an empty result.
    func executeFetchExpression(_ request: Any?, countOnly: Bool) -> Any
}
