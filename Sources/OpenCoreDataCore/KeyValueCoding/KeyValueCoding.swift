// Foundation on Linux has no key-value coding: `NSObject` answers neither `value(forKey:)` nor
// `value(forKeyPath:)`. Predicates, sort descriptors and Core Data's own API read values by key, so OpenCoreData
// declares the protocol here; managed objects, dictionaries and collections conform, and every other Swift value
// is read by reflection.

/// Read access to a value's properties by name, as Foundation's key-value coding gives on Apple platforms.
///
/// Predicates and sort descriptors read the values they compare through this protocol. Managed objects, dictionaries
/// with `String` keys, arrays and sets conform already. Any other type may conform and answer its own keys; a type
/// that adopts the protocol without implementing `value(forKey:)` is read by reflection, so a plain struct needs
/// only the declaration:
///
/// ```swift
/// struct Person: KeyValueCoding { var name: String; var age: Int }
/// let adults = people.filter { NSPredicate(format: "age >= 18").evaluate(with: $0) }
/// ```
///
/// Values that do not conform at all are read by reflection too.
public protocol KeyValueCoding {
    /// Returns the value of the property named `key`, or `nil` when it has none (or no such property exists).
    func value(forKey key: String) -> Any?

    /// Returns the value reached by following the dotted `keyPath` (`"department.manager.name"`), applying
    /// collection operators such as `@count` or `@sum.salary` where they appear.
    func value(forKeyPath keyPath: String) -> Any?
}

extension KeyValueCoding {
    /// Reads the stored property named `key` by reflection, searching superclasses too.
    public func value(forKey key: String) -> Any? {
        KeyValueCodingReflection.value(of: self, forKey: key)
    }

    /// Follows `keyPath` one key at a time, mapping over collections and applying collection operators.
    public func value(forKeyPath keyPath: String) -> Any? {
        KeyValueCodingPath.value(of: self, components: KeyValueCodingPath.split(keyPath)[...])
    }
}
