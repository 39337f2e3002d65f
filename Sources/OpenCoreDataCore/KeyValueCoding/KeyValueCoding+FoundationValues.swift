// Foundation values answer the keys of their Objective-C methods on Apple platforms: `length` of a string, the
// time intervals of a date. Core Data's validation predicates for Xcode's minimum and maximum use them
// (`length >= 3`, `timeIntervalSinceReferenceDate <= 6.0e8`), so they answer here too.

extension String: KeyValueCoding {
    /// `length` (the number of UTF-16 code units, as `NSString.length`), the case-mapped strings and the numeric
    /// values of the string, as `NSString` answers them.
    public func value(forKey key: String) -> Any? {
        switch key {
        case "length": NSNumber(value: utf16.count)
        case "uppercaseString": uppercased()
        case "lowercaseString": lowercased()
        case "capitalizedString": capitalized
        case "intValue", "integerValue", "longLongValue": NSNumber(value: (self as NSString).longLongValue)
        case "doubleValue", "floatValue": NSNumber(value: (self as NSString).doubleValue)
        case "boolValue": NSNumber(value: (self as NSString).boolValue)
        case "self", "description": self
        default: KeyValueCodingReflection.value(of: self, forKey: key)
        }
    }
}

extension NSString: KeyValueCoding {
    public func value(forKey key: String) -> Any? {
        (self as String).value(forKey: key)
    }
}

extension Date: KeyValueCoding {
    /// `timeIntervalSinceReferenceDate` and `timeIntervalSince1970`, as `NSDate` answers them.
    public func value(forKey key: String) -> Any? {
        switch key {
        case "timeIntervalSinceReferenceDate": NSNumber(value: timeIntervalSinceReferenceDate)
        case "timeIntervalSince1970": NSNumber(value: timeIntervalSince1970)
        default: KeyValueCodingReflection.value(of: self, forKey: key)
        }
    }
}
