// Foundation's value classes answer some of their own methods through key-value coding on Apple platforms:
// `length` of a string is what Core Data's string-length validation predicates (`length >= 3`) read.

extension String: KeyValueCoding {
    /// `length` (UTF-16 count, as `NSString`), the case-mapped strings, and the numeric values of the string.
    public func value(forKey key: String) -> Any? {
        switch key {
        case "length": return NSNumber(value: utf16.count)
        case "uppercaseString": return uppercased()
        case "lowercaseString": return lowercased()
        case "capitalizedString": return capitalized
        case "intValue", "integerValue", "longLongValue": return NSNumber(value: (self as NSString).longLongValue)
        case "doubleValue", "floatValue": return NSNumber(value: (self as NSString).doubleValue)
        case "boolValue": return NSNumber(value: (self as NSString).boolValue)
        case "self", "description": return self
        default: return nil
        }
    }
}

extension NSString: KeyValueCoding {
    public func value(forKey key: String) -> Any? {
        (self as String).value(forKey: key)
    }
}
