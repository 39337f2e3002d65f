// Foundation's collections and dictionaries answer key-value coding on Apple platforms: a dictionary looks the key
// up, a collection maps the key over its elements. The same conformances here.

extension Dictionary: KeyValueCoding {
    /// The value stored under `key` (for dictionaries keyed by `String`, `AnyHashable` or `NSString`); keys starting
    /// with `@` name the dictionary's own properties (`@count`, `@allKeys`, `@allValues`), as with `NSDictionary`.
    public func value(forKey key: String) -> Any? {
        if key.hasPrefix("@") {
            return KeyValueCodingDictionary.property(String(key.dropFirst()), of: self as NSDictionary)
        }
        // String keys are the common case; a metatype comparison avoids a dynamic cast per lookup.
        let typedKey: Key
        if Key.self == String.self {
            typedKey = unsafeBitCast(key, to: Key.self)
        } else if let converted = key as? Key {
            typedKey = converted
        } else {
            return nil
        }
        guard let value = self[typedKey] else { return nil }
        return PredicateValueComparison.unwrap(value)
    }
}

extension NSDictionary: KeyValueCoding {
    /// The value stored under `key`; keys starting with `@` name the dictionary's own properties (`@count`,
    /// `@allKeys`, `@allValues`).
    public func value(forKey key: String) -> Any? {
        if key.hasPrefix("@") { return KeyValueCodingDictionary.property(String(key.dropFirst()), of: self) }
        return PredicateValueComparison.unwrap(object(forKey: key))
    }
}

/// The properties a dictionary answers for `@`-prefixed keys.
enum KeyValueCodingDictionary {
    static func property(_ name: String, of dictionary: NSDictionary) -> Any? {
        switch name {
        case "count": NSNumber(value: dictionary.count)
        case "allKeys": dictionary.allKeys
        case "allValues": dictionary.allValues
        default: nil
        }
    }
}

extension Array: KeyValueCoding {
    /// An array of every element's value for `key` (`NSNull` where an element has none); `@`-prefixed keys apply
    /// a collection operator (`@count`).
    public func value(forKey key: String) -> Any? {
        KeyValueCodingPath.map(self, key: key)
    }
}

extension Set: KeyValueCoding {
    /// A set of the elements' values for `key`, without the missing ones; `@`-prefixed keys apply a collection
    /// operator (`@count`).
    public func value(forKey key: String) -> Any? {
        KeyValueCodingPath.map(self, key: key)
    }
}

extension NSArray: KeyValueCoding {
    /// An array of every element's value for `key` (`NSNull` where an element has none).
    public func value(forKey key: String) -> Any? {
        KeyValueCodingPath.map(self, key: key)
    }
}

extension NSSet: KeyValueCoding {
    /// A set of the elements' values for `key`, without the missing ones.
    public func value(forKey key: String) -> Any? {
        KeyValueCodingPath.map(self, key: key)
    }
}

extension NSOrderedSet: KeyValueCoding {
    /// An ordered set of the elements' values for `key`, without the missing ones.
    public func value(forKey key: String) -> Any? {
        KeyValueCodingPath.map(self, key: key)
    }
}
