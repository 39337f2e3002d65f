// Apple's compound predicate with Apple's `LogicalType` raw values. An AND of no subpredicates is true and an OR of
// none is false, as on Apple platforms, which print them as TRUEPREDICATE and FALSEPREDICATE.

/// A predicate that combines other predicates with AND or OR, or negates one with NOT.
///
/// ```swift
/// let either = NSCompoundPredicate(orPredicateWithSubpredicates: [
///     NSPredicate(format: "age < 18"), NSPredicate(format: "age > 65"),
/// ])
/// either.predicateFormat  // age < 18 OR age > 65
/// ```
open class NSCompoundPredicate: NSPredicate, @unchecked Sendable {
    // @unchecked: immutable once made, as NSPredicate.
    /// The logical operators, with Apple's raw values.
    public enum LogicalType: UInt, Sendable {
        /// NOT: the single subpredicate does not hold.
        case not = 0
        /// AND: every subpredicate holds.
        case and = 1
        /// OR: at least one subpredicate holds.
        case or = 2
    }

    /// The logical operator.
    public let compoundPredicateType: LogicalType

    /// The subpredicates (`NSPredicate` instances).
    public let subpredicates: [Any]

    /// The subpredicates, typed, for evaluation.
    let predicates: [NSPredicate]

    /// Creates a compound predicate of `type` over `subpredicates`. A NOT predicate takes exactly one.
    public init(type: LogicalType, subpredicates: [NSPredicate]) {
        precondition(
            type != .not || subpredicates.count == 1,
            "A NOT compound predicate takes exactly one subpredicate, not \(subpredicates.count)")
        compoundPredicateType = type
        self.subpredicates = subpredicates
        predicates = subpredicates
        super.init(predicateKind: .subclass)
    }

    /// Creates a predicate that holds when every one of `subpredicates` holds (true when there are none).
    public convenience init(andPredicateWithSubpredicates subpredicates: [NSPredicate]) {
        self.init(type: .and, subpredicates: subpredicates)
    }

    /// Creates a predicate that holds when at least one of `subpredicates` holds (false when there are none).
    public convenience init(orPredicateWithSubpredicates subpredicates: [NSPredicate]) {
        self.init(type: .or, subpredicates: subpredicates)
    }

    /// Creates a predicate that holds when `predicate` does not.
    public convenience init(notPredicateWithSubpredicate predicate: NSPredicate) {
        self.init(type: .not, subpredicates: [predicate])
    }

    /// Decodes a compound predicate from its format string; evaluation stays disabled until `allowEvaluation()`.
    public required init(from decoder: any Decoder) throws {
        let parsed = try NSPredicate.decodeFormat(from: decoder)
        guard let compound = parsed as? NSCompoundPredicate else {
            let container = try decoder.singleValueContainer()
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "\(parsed.predicateFormat) is not a compound predicate")
        }
        compoundPredicateType = compound.compoundPredicateType
        subpredicates = compound.subpredicates
        predicates = compound.predicates
        super.init(predicateKind: .subclass)
        disallowEvaluation()
    }

    /// The format string: subpredicates joined by `AND`/`OR`, or `NOT` before one, with parentheses around nested
    /// compound predicates.
    open override var predicateFormat: String {
        PredicatePrinter.format(compound: self)
    }

    override func evaluateTree(_ object: Any?, in scope: PredicateScope) -> Bool {
        switch compoundPredicateType {
        case .and:
            for predicate in predicates where !predicate.evaluateChild(object, in: scope) { return false }
            return true
        case .or:
            for predicate in predicates where predicate.evaluateChild(object, in: scope) { return true }
            return false
        case .not:
            return !predicates[0].evaluateChild(object, in: scope)
        }
    }

    /// Enables evaluation of this predicate and its subpredicates.
    open override func allowEvaluation() {
        super.allowEvaluation()
        for predicate in predicates { predicate.allowEvaluation() }
    }

    /// Whether `object` is a compound predicate of the same type with equal subpredicates in the same order.
    open override func isEqual(_ object: Any?) -> Bool {
        if let other = object as? NSPredicate, case .decoded(let inner) = other.predicateKind { return isEqual(inner) }
        guard let other = object as? NSCompoundPredicate else { return false }
        return compoundPredicateType == other.compoundPredicateType
            && predicates.count == other.predicates.count
            && zip(predicates, other.predicates).allSatisfy { $0.isEqual($1) }
    }

    /// A hash consistent with `isEqual(_:)`.
    open override var hash: Int {
        var hasher = Hasher()
        hasher.combine(compoundPredicateType)
        for predicate in predicates { hasher.combine(predicate.hash) }
        return hasher.finalize()
    }

    /// Returns a copy with `$variables` replaced by the values in `variables`.
    open override func withSubstitutionVariables(_ variables: [String: Any]) -> Self {
        let result = NSCompoundPredicate(
            type: compoundPredicateType, subpredicates: predicates.map { $0.substituting(variables) })
        guard let typed = result as? Self else {
            preconditionFailure("\(type(of: self)) must override withSubstitutionVariables(_:)")
        }
        return typed
    }
}
