// Comparing by selector and sorting collections with a list of descriptors. Sorting reads each object's values once
// (not once per comparison), then sorts stably, as Foundation's `sortedArray(using:)` does.

extension NSSortDescriptor {
    /// The value an object sorts by.
    func value(of object: Any) -> Any? {
        if let swiftKeyPath {
            return PredicateValueComparison.unwrap(object[keyPath: swiftKeyPath])
        }
        guard !components.isEmpty else { return PredicateValueComparison.unwrap(object) }
        if components.count == 1, !components[0].hasPrefix("@") {
            return PredicateValueComparison.unwrap(KeyValueCodingPath.value(of: object, forKey: components[0]))
        }
        return KeyValueCodingPath.value(of: object, components: components[...])
    }

    /// Orders two values (already read at the key) in ascending terms.
    func compareValues(_ lhs: Any?, _ rhs: Any?) -> ComparisonResult {
        switch comparison {
        case .comparator(let comparator):
            switch (lhs, rhs) {
            case (nil, nil): return .orderedSame
            case (nil, _): return .orderedAscending
            case (_, nil): return .orderedDescending
            case (let a?, let b?): return comparator(a, b)
            }
        case .selector(let selector):
            return NSSortDescriptor.compare(lhs, rhs, selector: selector)
        }
    }

    /// Orders two values with a comparison selector. `nil` orders first; values of kinds that cannot be compared
    /// order by kind name, so that sorting stays consistent.
    static func compare(_ lhs: Any?, _ rhs: Any?, selector: Selector) -> ComparisonResult {
        let lhs = PredicateValueComparison.unwrap(lhs)
        let rhs = PredicateValueComparison.unwrap(rhs)
        guard let lhs else { return rhs == nil ? .orderedSame : .orderedAscending }
        guard let rhs else { return .orderedDescending }
        if let a = PredicateValueComparison.string(lhs), let b = PredicateValueComparison.string(rhs) {
            switch selector.name {
            case "compare:":
                return PredicateValueComparison.compareStrings(a, b, options: [])
            case "caseInsensitiveCompare:":
                return PredicateValueComparison.compareStrings(a, b, options: .caseInsensitive)
            case "localizedCompare:":
                return a.localizedCompare(b)
            case "localizedCaseInsensitiveCompare:":
                return a.localizedCaseInsensitiveCompare(b)
            case "localizedStandardCompare:":
                return a.localizedStandardCompare(b)
            default:
                break
            }
        }
        if let target = lhs as? any PredicateFunctionTarget, target.respondsToPredicateFunction(selector.name) {
            let result = target.performPredicateFunction(selector.name, arguments: [rhs])
            if let order = result as? ComparisonResult { return order }
            if let number = result.flatMap({ PredicateNumber($0) }) {
                let value = number.int64Value
                return value < 0 ? .orderedAscending : (value > 0 ? .orderedDescending : .orderedSame)
            }
        }
        if let order = PredicateValueComparison.compare(lhs, rhs) { return order }
        if let order = builtinOrder(lhs, rhs) { return order }
        let a = String(describing: type(of: lhs))
        let b = String(describing: type(of: rhs))
        return PredicateValueComparison.compareStrings(a, b, options: [])
    }

    /// Orders values `compare:` knows beyond numbers, strings and dates: booleans, UUIDs, URLs.
    private static func builtinOrder(_ lhs: Any, _ rhs: Any) -> ComparisonResult? {
        if let a = lhs as? URL, let b = rhs as? URL {
            return PredicateValueComparison.compareStrings(a.absoluteString, b.absoluteString, options: [])
        }
        return nil
    }
}

/// Sorting with several descriptors: the first decides, later ones break ties.
enum SortDescriptorSorting {
    static func sort(_ objects: [Any], using descriptors: [NSSortDescriptor]) -> [Any] {
        guard !descriptors.isEmpty, objects.count > 1 else { return objects }
        let keys: [[Any?]] = objects.map { object in descriptors.map { $0.value(of: object) } }
        let order = objects.indices.sorted { i, j in
            for (position, descriptor) in descriptors.enumerated() {
                var result = descriptor.compareValues(keys[i][position], keys[j][position])
                if !descriptor.ascending {
                    result =
                        result == .orderedAscending
                        ? .orderedDescending
                        : (result == .orderedDescending ? .orderedAscending : .orderedSame)
                }
                if result != .orderedSame { return result == .orderedAscending }
            }
            return false
        }
        return order.map { objects[$0] }
    }
}

extension Array {
    /// The elements sorted by `sortDescriptors`: the first descriptor decides, later ones break ties.
    ///
    /// ```swift
    /// people.sorted(using: [NSSortDescriptor(key: "lastName", ascending: true),
    ///                       NSSortDescriptor(key: "age", ascending: false)])
    /// ```
    public func sorted(using sortDescriptors: [NSSortDescriptor]) -> [Element] {
        SortDescriptorSorting.sort(self.map { $0 as Any }, using: sortDescriptors).map { $0 as! Element }
    }

    /// Sorts the array in place by `sortDescriptors`.
    public mutating func sort(using sortDescriptors: [NSSortDescriptor]) {
        self = sorted(using: sortDescriptors)
    }
}

extension Set {
    /// The elements as an array sorted by `sortDescriptors`.
    public func sorted(using sortDescriptors: [NSSortDescriptor]) -> [Element] {
        Array(self).sorted(using: sortDescriptors)
    }
}

extension NSArray {
    /// The array's elements sorted by `sortDescriptors`.
    public func sortedArray(using sortDescriptors: [NSSortDescriptor]) -> [Any] {
        SortDescriptorSorting.sort(self.map { $0 }, using: sortDescriptors)
    }
}

extension NSMutableArray {
    /// Sorts the array in place by `sortDescriptors`.
    public func sort(using sortDescriptors: [NSSortDescriptor]) {
        let sorted = SortDescriptorSorting.sort(self.map { $0 }, using: sortDescriptors)
        removeAllObjects()
        addObjects(from: sorted)
    }
}

extension NSSet {
    /// The set's elements as an array sorted by `sortDescriptors`.
    public func sortedArray(using sortDescriptors: [NSSortDescriptor]) -> [Any] {
        SortDescriptorSorting.sort(self.map { $0 }, using: sortDescriptors)
    }
}

extension NSOrderedSet {
    /// The ordered set's elements as an array sorted by `sortDescriptors`.
    public func sortedArray(using sortDescriptors: [NSSortDescriptor]) -> [Any] {
        SortDescriptorSorting.sort(self.map { $0 }, using: sortDescriptors)
    }
}
