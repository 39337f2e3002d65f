// Walking a key path the way `valueForKeyPath:` does: one key at a time, each applied to the previous value, a key
// applied to a collection mapping over its elements, and an `@operator` folding the collection it is applied to
// with the rest of the path as its right-hand key path.

/// Key path traversal shared by the `KeyValueCoding` defaults, the predicate evaluator and sort descriptors.
enum KeyValueCodingPath {
    /// Splits a dotted key path into its keys, once, so that evaluation does not split it again per object.
    static func split(_ keyPath: String) -> [String] {
        // Most key paths are a single key, and without a "." byte there is no "." character to split at; the
        // general split walks the string by characters and builds substrings.
        guard keyPath.utf8.contains(UInt8(ascii: ".")) else { return [keyPath] }
        return keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }

    /// The value of `key` on `object`: through its `KeyValueCoding` conformance when it has one, by reflection
    /// otherwise. `nil` and `NSNull` have no values.
    @inline(__always)
    static func value(of object: Any?, forKey key: String) -> Any? {
        guard let object else { return nil }
        // Managed objects and dictionaries conform; try that before unwrapping optionals and nulls, which are rare.
        if let coding = object as? any KeyValueCoding { return coding.value(forKey: key) }
        guard let object = PredicateValueComparison.unwrap(object) else { return nil }
        if let coding = object as? any KeyValueCoding { return coding.value(forKey: key) }
        return KeyValueCodingReflection.value(of: object, forKey: key)
    }

    /// Follows `components` from `object`.
    static func value(of object: Any?, components: ArraySlice<String>) -> Any? {
        var current = object
        var rest = components
        while let key = rest.first {
            rest = rest.dropFirst()
            guard let receiver = PredicateValueComparison.unwrap(current) else { return nil }
            if key.hasPrefix("@") {
                if let collection = receiver as? any KeyValueCodingCollection {
                    return KeyValueCodingOperators.apply(key, to: collection, rightPath: rest)
                }
                if receiver is NSDictionary || receiver is [String: Any] {
                    current = value(of: receiver, forKey: key)
                    continue
                }
                return nil
            }
            current = value(of: receiver, forKey: key)
        }
        return PredicateValueComparison.unwrap(current)
    }

    /// A key applied to a collection: the collection of the elements' values for that key (operators included).
    static func map(_ collection: any KeyValueCodingCollection, key: String) -> Any? {
        if key.hasPrefix("@") {
            return KeyValueCodingOperators.apply(key, to: collection, rightPath: [])
        }
        let values = collection.keyValueCodingElements.map { value(of: $0, forKey: key) }
        return collection.keyValueCodingKind.make(values)
    }
}
