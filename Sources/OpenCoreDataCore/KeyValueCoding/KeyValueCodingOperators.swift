// Foundation's collection operators. Their result types follow Foundation: `@count` gives an `NSNumber`, `@sum` and
// `@avg` give an `NSDecimalNumber` (an `NSNumber` subclass), `@min`/`@max` give the extreme element value itself,
// the object operators give arrays (sets when applied to a set), `@…OfSets` give sets.

/// The `@count`, `@sum`, `@avg`, `@min`, `@max` and `@…UnionOf…` collection operators.
enum KeyValueCodingOperators {
    /// Applies `operator` (with its `@`) to `collection`, reading each element's value at `rightPath`. Returns `nil`
    /// for an unknown operator.
    static func apply(
        _ operator: String,
        to collection: any KeyValueCodingCollection,
        rightPath: ArraySlice<String>
    ) -> Any? {
        if `operator` == "@count" {
            return NSNumber(value: collection.keyValueCodingCount)
        }
        let elements = collection.keyValueCodingElements
        let values: [Any?] =
            rightPath.isEmpty
            ? elements.map { PredicateValueComparison.unwrap($0) }
            : elements.map { KeyValueCodingPath.value(of: $0, components: rightPath) }
        switch `operator` {
        case "@sum":
            return NSDecimalNumber(decimal: sum(values))
        case "@avg":
            guard !values.isEmpty else { return nil }
            return NSDecimalNumber(decimal: sum(values) / Decimal(values.count))
        case "@min":
            return extreme(values, keeping: .orderedAscending)
        case "@max":
            return extreme(values, keeping: .orderedDescending)
        case "@distinctUnionOfObjects":
            return union(values.compactMap { $0 }, distinct: true, kind: collection.keyValueCodingKind)
        case "@unionOfObjects":
            return union(values.compactMap { $0 }, distinct: false, kind: collection.keyValueCodingKind)
        case "@distinctUnionOfArrays":
            return union(flatten(values), distinct: true, kind: .array)
        case "@unionOfArrays":
            return union(flatten(values), distinct: false, kind: .array)
        case "@distinctUnionOfSets", "@unionOfSets":
            return union(flatten(values), distinct: true, kind: .set)
        default:
            return nil
        }
    }

    /// The sum of the numeric values, `nil` counting as zero.
    static func sum(_ values: [Any?]) -> Decimal {
        var total = Decimal(0)
        for case let value? in values {
            if let number = PredicateNumber(value) { total += number.decimalValue }
        }
        return total
    }

    private static func extreme(_ values: [Any?], keeping order: ComparisonResult) -> Any? {
        var best: Any?
        for case let value? in values {
            guard let current = best else {
                best = value
                continue
            }
            if PredicateValueComparison.compare(value, current) == order { best = value }
        }
        return best
    }

    private static func flatten(_ values: [Any?]) -> [Any] {
        var result: [Any] = []
        for case let value? in values {
            if let collection = value as? any KeyValueCodingCollection {
                result.append(contentsOf: collection.keyValueCodingElements)
            } else {
                result.append(value)
            }
        }
        return result
    }

    private static func union(_ values: [Any], distinct: Bool, kind: KeyValueCodingCollectionKind) -> Any {
        switch kind {
        case .set:
            return Set(values.map(KeyValueCodingHashing.hashable))
        case .array, .orderedSet:
            guard distinct else { return values }
            var seen = Set<AnyHashable>()
            return values.filter { seen.insert(KeyValueCodingHashing.hashable($0)).inserted }
        }
    }
}
