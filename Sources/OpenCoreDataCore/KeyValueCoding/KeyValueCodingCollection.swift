// Key-value coding treats arrays, sets and ordered sets alike whatever their element type: a key applied to one
// maps over its elements and a collection operator folds them. Swift cannot ask "is this any Array?" of an `Any`
// without naming the element type, so the collection kinds conform to this internal protocol instead.

/// A collection that key-value coding maps over: `Array`, `Set`, `NSArray`, `NSSet`, `NSOrderedSet`.
protocol KeyValueCodingCollection {
    /// The elements, in order for ordered collections.
    var keyValueCodingElements: [Any] { get }
    /// The number of elements.
    var keyValueCodingCount: Int { get }
    /// What a key applied to the collection gives back: arrays give arrays, sets give sets, ordered sets give
    /// ordered sets.
    var keyValueCodingKind: KeyValueCodingCollectionKind { get }
}

/// The shape of collection a key-value coding result takes.
enum KeyValueCodingCollectionKind {
    case array
    case set
    case orderedSet

    /// Builds a result of this kind from mapped values: arrays keep `NSNull` for missing values (as `NSArray`
    /// does), sets and ordered sets drop them (as `NSSet` does).
    func make(_ values: [Any?]) -> Any {
        switch self {
        case .array:
            return values.map { $0 ?? NSNull() }
        case .set:
            var set = Set<AnyHashable>()
            set.reserveCapacity(values.count)
            for case let value? in values { set.insert(KeyValueCodingHashing.hashable(value)) }
            return set
        case .orderedSet:
            let result = NSMutableOrderedSet()
            for case let value? in values { result.add(value) }
            return result
        }
    }
}

extension Array: KeyValueCodingCollection {
    var keyValueCodingElements: [Any] { map { $0 as Any } }
    var keyValueCodingCount: Int { count }
    var keyValueCodingKind: KeyValueCodingCollectionKind { .array }
}

extension Set: KeyValueCodingCollection {
    var keyValueCodingElements: [Any] { map { $0 as Any } }
    var keyValueCodingCount: Int { count }
    var keyValueCodingKind: KeyValueCodingCollectionKind { .set }
}

extension NSArray: KeyValueCodingCollection {
    var keyValueCodingElements: [Any] { map { $0 } }
    var keyValueCodingCount: Int { count }
    var keyValueCodingKind: KeyValueCodingCollectionKind { .array }
}

extension NSSet: KeyValueCodingCollection {
    var keyValueCodingElements: [Any] { map { $0 } }
    var keyValueCodingCount: Int { count }
    var keyValueCodingKind: KeyValueCodingCollectionKind { .set }
}

extension NSOrderedSet: KeyValueCodingCollection {
    var keyValueCodingElements: [Any] { map { $0 } }
    var keyValueCodingCount: Int { count }
    var keyValueCodingKind: KeyValueCodingCollectionKind { .orderedSet }
}

/// Puts arbitrary values into sets: hashable values as themselves, other class instances by identity. Foundation
/// objects that bridge (`NSNumber`, `NSString`, `NSDate`) go in as their Swift values, so that a set built from
/// `NSNumber`s equals one built from `Int`s, as it does on Apple platforms.
enum KeyValueCodingHashing {
    private static let null = NSNull()

    static func hashable(_ value: Any) -> AnyHashable {
        if type(of: value) is AnyObject.Type {
            if let number = value as? NSNumber {
                switch PredicateNumber(number: number) {
                case .int(let v): return AnyHashable(Int(truncatingIfNeeded: v))
                case .uint(let v): return AnyHashable(v)
                case .double(let v): return v == v.rounded() && abs(v) < 1e18 ? AnyHashable(Int(v)) : AnyHashable(v)
                case .decimal(let v): return AnyHashable(v)
                }
            }
            if let string = value as? NSString { return AnyHashable(string as String) }
            if let date = value as? NSDate { return AnyHashable(date as Date) }
            // Every NSNull equals every other, but Foundation on Linux hashes each instance apart, which breaks a
            // set holding two of them: they all stand as one.
            if value is NSNull { return AnyHashable(null) }
        }
        if let hashable = value as? AnyHashable { return hashable }
        if type(of: value) is AnyObject.Type { return AnyHashable(ObjectIdentifier(value as AnyObject)) }
        return AnyHashable(String(reflecting: value))
    }
}
