// In-memory evaluation of comparison predicates with Foundation's semantics: ANY/ALL range over the left-hand
// collection, IN and CONTAINS work on collections and on strings, BETWEEN is inclusive, the string operators
// honour [c] and [d], and a comparison with values that cannot be compared is false rather than an error.

extension NSComparisonPredicate {
    func evaluateComparison(_ object: Any?, in scope: PredicateScope) -> Bool {
        let lhs = leftExpression.value(object, in: scope)
        if comparisonPredicateModifier == .direct, let rightConstant,
            let result = compareWithConstant(lhs, rightConstant)
        {
            return result
        }
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

    /// The common case of a key compared with a constant (`age > 30`), without classifying the constant again.
    /// `nil` for the operators that take the general path.
    @inline(__always)
    private func compareWithConstant(_ lhs: Any?, _ right: PredicateValueComparison.Classified) -> Bool? {
        let type = predicateOperatorType
        switch type {
        case .equalTo, .notEqualTo, .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo: break
        default: return nil
        }
        guard let lhs = PredicateValueComparison.unwrap(lhs) else { return type == .notEqualTo }
        let left = PredicateValueComparison.classify(lhs)
        switch type {
        case .equalTo: return PredicateValueComparison.isEqual(left, right, options: options)
        case .notEqualTo: return !PredicateValueComparison.isEqual(left, right, options: options)
        default: break
        }
        guard let order = PredicateValueComparison.compare(left, right, options: options) else { return false }
        switch type {
        case .lessThan: return order == .orderedAscending
        case .lessThanOrEqualTo: return order != .orderedDescending
        case .greaterThan: return order == .orderedDescending
        default: return order != .orderedAscending
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
    /// for `nil`. A key path through two to-many relationships (`ANY departments.employees.name`) gives a set of
    /// sets; its members are flattened, so that the predicate ranges over every employee as the SQL store's joins
    /// do.
    static func elements(of value: Any?) -> [Any]? {
        guard let value = PredicateValueComparison.unwrap(value) else { return nil }
        guard let collection = value as? any KeyValueCodingCollection else { return [value] }
        let members = collection.keyValueCodingElements
        guard collection.keyValueCodingKind != .array,
            members.contains(where: { $0 is any KeyValueCodingCollection })
        else { return members }
        var flattened: [Any] = []
        for element in members {
            if let nested = elements(of: element) { flattened.append(contentsOf: nested) }
        }
        return flattened
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
            if let found = PredicateStringFolding.asciiFind(prefix, in: string, options: options, anchor: .start) {
                return found
            }
            return fold(string, options).utf8.starts(with: fold(prefix, options).utf8)
        case .endsWith:
            guard let (string, suffix) = strings(lhs, rhs), !suffix.isEmpty else { return false }
            if let found = PredicateStringFolding.asciiFind(suffix, in: string, options: options, anchor: .end) {
                return found
            }
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
            if substring.isEmpty { return false }
            if let found = PredicateStringFolding.asciiFind(substring, in: string, options: options, anchor: .anywhere)
            {
                return found
            }
            if !options.isDisjoint(with: [.caseInsensitive, .diacriticInsensitive]),
                let found = PredicateStringFolding.latinContains(string, substring, options: options)
            {
                return found
            }
            return fold(string, options).contains(fold(substring, options))
        }
        guard let elements = PredicateValueComparison.elements(container) else { return false }
        guard let element = PredicateValueComparison.unwrap(element) else {
            return elements.contains { PredicateValueComparison.unwrap($0) == nil }
        }
        let wanted = PredicateValueComparison.classify(element)
        for candidate in elements {
            guard let candidate = PredicateValueComparison.unwrap(candidate) else { continue }
            if PredicateValueComparison.isEqual(PredicateValueComparison.classify(candidate), wanted, options: options)
            {
                return true
            }
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
