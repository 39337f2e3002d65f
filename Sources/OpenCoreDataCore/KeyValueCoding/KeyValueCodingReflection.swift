// Plain Swift structs and classes have no key-value coding; their stored properties are found by reflection, the
// way Foundation finds an Objective-C object's accessors. Only reading is possible: a `Mirror` cannot write.
//
// Searching a mirror's children by label builds every child before the one wanted, so where each key lives in each
// type is remembered: later reads build only that child.

/// Reads stored properties by name through `Mirror`, searching superclass mirrors too.
enum KeyValueCodingReflection {
    /// Where a key's stored property is: how many superclass mirrors up, which child, and whether it is a property
    /// wrapper's storage (`_key`).
    private struct Location {
        var depth: Int
        var index: Int
        var wrapped: Bool
    }

    private static let cache = LocationCache()

    /// The value of the stored property named `key` (or of the property wrapper backing it), `subject` itself for
    /// `"self"`, or `nil` when there is no such property.
    static func value(of subject: Any, forKey key: String) -> Any? {
        if key == "self" { return subject }
        let type = ObjectIdentifier(Swift.type(of: subject))
        let location: Location?
        if let cached = cache.location(of: key, in: type) {
            location = cached
        } else {
            location = search(subject, forKey: key)
            cache.store(location, of: key, in: type)
        }
        guard let location else { return nil }
        var mirror = Mirror(reflecting: subject)
        for _ in 0..<location.depth {
            guard let superclassMirror = mirror.superclassMirror else { return nil }
            mirror = superclassMirror
        }
        let children = mirror.children
        guard location.index < children.count else { return nil }
        let child = children[children.index(children.startIndex, offsetBy: location.index)]
        return read(child.value, wrapped: location.wrapped)
    }

    private static func search(_ subject: Any, forKey key: String) -> Location? {
        var mirror: Mirror? = Mirror(reflecting: subject)
        var depth = 0
        while let current = mirror {
            for (index, child) in current.children.enumerated() {
                guard let label = child.label else { continue }
                if label == key { return Location(depth: depth, index: index, wrapped: false) }
                if label.utf8.count == key.utf8.count + 1, label.hasPrefix("_"), label.dropFirst() == key {
                    return Location(depth: depth, index: index, wrapped: true)
                }
            }
            mirror = current.superclassMirror
            depth += 1
        }
        return nil
    }

    /// A property wrapper stores `_key`; its wrapped value is the property's value.
    private static func read(_ value: Any, wrapped: Bool) -> Any? {
        guard wrapped else { return PredicateValueComparison.unwrap(value) }
        let wrapper = Mirror(reflecting: value)
        if let inner = wrapper.children.first(where: { $0.label == "wrappedValue" }) {
            return PredicateValueComparison.unwrap(inner.value)
        }
        return PredicateValueComparison.unwrap(value)
    }

    /// Key locations by type, shared by every thread.
    private final class LocationCache: @unchecked Sendable {
        // @unchecked: `locations` is touched under `lock` only.
        private let lock = NSLock()
        /// `.some(nil)` records that a type has no such key.
        private var locations: [ObjectIdentifier: [String: Location?]] = [:]

        func location(of key: String, in type: ObjectIdentifier) -> Location?? {
            lock.lock()
            defer { lock.unlock() }
            guard let keys = locations[type], let entry = keys[key] else { return nil }
            return .some(entry)
        }

        func store(_ location: Location?, of key: String, in type: ObjectIdentifier) {
            lock.lock()
            defer { lock.unlock() }
            // Keys may come from users' predicates: remember at most a bounded number of absent ones per type.
            if location == nil, locations[type, default: [:]].count >= 256 { return }
            locations[type, default: [:]][key] = .some(location)
        }
    }
}
