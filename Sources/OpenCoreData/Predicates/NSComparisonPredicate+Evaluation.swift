// In-memory evaluation of comparison predicates with Foundation's semantics: ANY/ALL range over the left-hand
// collection, IN and CONTAINS work on collections and on strings, BETWEEN is inclusive, the string operators
// honour [c] and [d], and a comparison with values that cannot be compared is false rather than an error.

extension NSComparisonPredicate {
    func evaluateComparison(_ object: Any?, in scope: PredicateScope) -> Bool {
        let lhs = leftExpression.value(object, in: scope)
        let rhs = rightExpression.value(object, in: scope)
        switch comparisonPredicateModifier {
        case .direct:
            return compare(lhs, rhs)
        case .any:
            guard let elements = PredicateComparisonOperator.elements(of: lhs) else { return false }
            for element in elements where compare(element, rhs) { return true }
            return false
        case .all:
            guard let elements = PredicateComparisonOperator.elements(of: lhs) else { return true }
            for element in elements where !compare(element, rhs) { return false }
            return true
        }
    }

    @inline(__always)
    private func compare(_ lhs: Any?, _ rhs: Any?) -> Bool {
        if predicateOperatorType == .customSelector, let customSelector {
            return PredicateFunctionDispatch.compare(lhs, rhs, selector: customSelector)
        }
        return PredicateComparisonOperator.evaluate(predicateOperatorType, lhs, rhs, options: options)
    }
}

/// The comparison operators applied to two values. `package` so that the SQL generator's tests can check that SQL
/// and memory agree.
package enum PredicateComparisonOperator {
    /// The elements an `ANY`/`ALL` modifier ranges over: a collection's elements, a lone value as itself, nothing
    /// for `nil`.
    static func elements(of value: Any?) -> [Any]? {
        guard let value = PredicateValueComparison.unwrap(value) else { return nil }
        if let collection = value as? any KeyValueCodingCollection { return collection.keyValueCodingElements }
        return [value]
    }

    /// Whether `lhs` and `rhs` satisfy `type` with `options`.
    package static func evaluate(
        _ type: NSComparisonPredicate.Operator,
        _ lhs: Any?,
        _ rhs: Any?,
        options: NSComparisonPredicate.Options
    ) -> Bool {
        switch type {
        case .equalTo:
            return PredicateValueComparison.isEqual(lhs, rhs, options: options)
        case .notEqualTo:
            return !PredicateValueComparison.isEqual(lhs, rhs, options: options)
        case .lessThan:
            return PredicateValueComparison.compare(lhs, rhs, options: options) == .orderedAscending
        case .lessThanOrEqualTo:
            guard let order = PredicateValueComparison.compare(lhs, rhs, options: options) else { return false }
            return order != .orderedDescending
        case .greaterThan:
            return PredicateValueComparison.compare(lhs, rhs, options: options) == .orderedDescending
        case .greaterThanOrEqualTo:
            guard let order = PredicateValueComparison.compare(lhs, rhs, options: options) else { return false }
            return order != .orderedAscending
        case .matches:
            guard let (string, pattern) = strings(lhs, rhs) else { return false }
            return PredicateRegularExpression.matches(string, pattern: pattern, options: options)
        case .like:
            guard let (string, pattern) = strings(lhs, rhs) else { return false }
            return PredicateLikeMatcher.matches(string, pattern: pattern, options: options)
        case .beginsWith:
            // An empty prefix or suffix matches nothing, as with NSString's hasPrefix:.
            guard let (string, prefix) = strings(lhs, rhs), !prefix.isEmpty else { return false }
            return fold(string, options).utf8.starts(with: fold(prefix, options).utf8)
        case .endsWith:
            guard let (string, suffix) = strings(lhs, rhs), !suffix.isEmpty else { return false }
            return fold(string, options).utf8.reversed().starts(with: fold(suffix, options).utf8.reversed())
        case .in:
            return contains(rhs, lhs, options: options)
        case .contains:
            return contains(lhs, rhs, options: options)
        case .between:
            guard let bounds = PredicateValueComparison.elements(PredicateValueComparison.unwrap(rhs)),
                bounds.count == 2,
                let low = PredicateValueComparison.compare(lhs, bounds[0], options: options),
                let high = PredicateValueComparison.compare(lhs, bounds[1], options: options)
            else { return false }
            return low != .orderedAscending && high != .orderedDescending
        case .customSelector:
            return false
        }
    }

    /// Whether `container` (a collection, a dictionary's values, or a string) contains `element`.
    static func contains(_ container: Any?, _ element: Any?, options: NSComparisonPredicate.Options) -> Bool {
        guard let container = PredicateValueComparison.unwrap(container) else { return false }
        if let string = PredicateValueComparison.string(container) {
            guard let element = PredicateValueComparison.unwrap(element),
                let substring = PredicateValueComparison.string(element)
            else { return false }
            return substring.isEmpty ? false : fold(string, options).contains(fold(substring, options))
        }
        guard let elements = PredicateValueComparison.elements(container) else { return false }
        for candidate in elements where PredicateValueComparison.isEqual(candidate, element, options: options) {
            return true
        }
        return false
    }

    @inline(__always)
    private static func strings(_ lhs: Any?, _ rhs: Any?) -> (String, String)? {
        guard let lhs = PredicateValueComparison.unwrap(lhs), let rhs = PredicateValueComparison.unwrap(rhs),
            let left = PredicateValueComparison.string(lhs), let right = PredicateValueComparison.string(rhs)
        else { return nil }
        return (left, right)
    }

    @inline(__always)
    private static func fold(_ string: String, _ options: NSComparisonPredicate.Options) -> String {
        PredicateStringFolding.fold(string, options: options)
    }
}
