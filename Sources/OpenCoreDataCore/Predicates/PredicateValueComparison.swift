// How Foundation compares the values a predicate meets. Equality is `isEqual:` (numbers by value across every numeric
// type, strings literally unless `[c]`/`[d]` ask otherwise, dates by instant, collections element by element);
// ordering is `compare:` for numbers, strings and dates, and a date compares with a number as its seconds since
// 2001-01-01, which is how the SQLite store keeps dates. Values of different kinds are unequal and unordered.
//
// The SQL generator must agree with these rules, so they are `package`.

/// Foundation's comparison rules for predicate values.
package enum PredicateValueComparison {
    /// Strips `Optional` wrapping and maps `NSNull` to `nil`.
    @inline(__always)
    package static func unwrap(_ value: Any?) -> Any? {
        guard let value else { return nil }
        let type = type(of: value)
        // Asking whether a value conforms to a protocol costs a hash lookup; the common value types are known not
        // to be optionals, and comparing metatypes is a pointer comparison.
        if type == String.self || type == Int.self || type == Double.self || type == Bool.self || type == Date.self
            || type == Int16.self || type == Int32.self || type == Int64.self || type == Decimal.self
        {
            return value
        }
        if type is AnyObject.Type {
            return type == NSNull.self ? nil : value
        }
        if let optional = value as? any OptionalUnwrapping {
            return unwrap(optional.unwrappedValue)
        }
        return value
    }

    /// Reads a string from `String`, `Substring`, `Character` or `NSString`.
    @inline(__always)
    package static func string(_ value: Any) -> String? {
        if let string = value as? String { return string }
        if let substring = value as? Substring { return String(substring) }
        if let character = value as? Character { return String(character) }
        return nil
    }

    /// Reads a date from `Date` or `NSDate`.
    @inline(__always)
    package static func date(_ value: Any) -> Date? {
        value as? Date
    }

    /// The elements of a collection a predicate can range over: arrays, sets, ordered sets, and a dictionary's
    /// values (for `IN`).
    package static func elements(_ value: Any?) -> [Any]? {
        guard let value else { return nil }
        if let collection = value as? any KeyValueCodingCollection { return collection.keyValueCodingElements }
        if let dictionary = value as? NSDictionary { return dictionary.allValues }
        if let dictionary = value as? [AnyHashable: Any] { return Array(dictionary.values) }
        return nil
    }

    /// A value sorted into the kinds the comparison rules distinguish, so that each value is inspected once.
    package enum Classified {
        case number(PredicateNumber)
        case string(String)
        case date(Date)
        case other(Any)
    }

    /// Sorts a non-nil value into its kind. Objects are told apart by class checks, Swift values by their type,
    /// without bridging one into the other.
    @inline(__always)
    package static func classify(_ value: Any) -> Classified {
        if type(of: value) is AnyObject.Type {
            if let number = value as? NSNumber { return .number(PredicateNumber(number: number)) }
            if let string = value as? NSString { return .string(string as String) }
            if let date = value as? NSDate { return .date(date as Date) }
            return .other(value)
        }
        switch value {
        case let string as String: return .string(string)
        case let date as Date: return .date(date)
        case let substring as Substring: return .string(String(substring))
        case let character as Character: return .string(String(character))
        default:
            if let number = PredicateNumber(value) { return .number(number) }
            return .other(value)
        }
    }

    /// Whether two values are equal, as Foundation's `isEqual:` decides, folding strings as `options` ask.
    package static func isEqual(
        _ lhs: Any?,
        _ rhs: Any?,
        options: NSComparisonPredicate.Options = []
    ) -> Bool {
        let lhs = unwrap(lhs)
        let rhs = unwrap(rhs)
        guard let lhs, let rhs else { return lhs == nil && rhs == nil }
        return isEqual(classify(lhs), classify(rhs), options: options)
    }

    /// Equality of classified values.
    @inline(__always)
    package static func isEqual(_ lhs: Classified, _ rhs: Classified, options: NSComparisonPredicate.Options) -> Bool {
        switch (lhs, rhs) {
        case (.number(let a), .number(let b)): return PredicateNumber.compare(a, b) == .orderedSame
        case (.string(let a), .string(let b)): return stringsEqual(a, b, options: options)
        case (.date(let a), .date(let b)): return a == b
        case (.number(let a), .date(let b)): return a.doubleValue == b.timeIntervalSinceReferenceDate
        case (.date(let a), .number(let b)): return a.timeIntervalSinceReferenceDate == b.doubleValue
        case (.other(let a), .other(let b)): return objectsEqual(a, b, options: options)
        default: return false
        }
    }

    /// Equality for everything that is not a number, a string or a date.
    private static func objectsEqual(_ lhs: Any, _ rhs: Any, options: NSComparisonPredicate.Options) -> Bool {
        if let a = lhs as? any KeyValueCodingCollection, let b = rhs as? any KeyValueCodingCollection {
            guard a.keyValueCodingCount == b.keyValueCodingCount else { return false }
            let aKind = a.keyValueCodingKind
            let bKind = b.keyValueCodingKind
            if aKind == .set || bKind == .set {
                guard aKind == bKind else { return false }
                let right = b.keyValueCodingElements
                return a.keyValueCodingElements.allSatisfy { element in
                    right.contains { isEqual(element, $0, options: options) }
                }
            }
            return zip(a.keyValueCodingElements, b.keyValueCodingElements).allSatisfy {
                isEqual($0, $1, options: options)
            }
        }
        if let a = lhs as? NSObject, let b = rhs as? NSObject { return a.isEqual(b) }
        if let a = lhs as? AnyHashable, let b = rhs as? AnyHashable { return a == b }
        if type(of: lhs) is AnyObject.Type, type(of: rhs) is AnyObject.Type {
            return (lhs as AnyObject) === (rhs as AnyObject)
        }
        return false
    }

    /// Orders two values as `compare:` does, or returns `nil` when they cannot be ordered (different kinds, or
    /// either is `nil`).
    package static func compare(
        _ lhs: Any?,
        _ rhs: Any?,
        options: NSComparisonPredicate.Options = []
    ) -> ComparisonResult? {
        guard let lhs = unwrap(lhs), let rhs = unwrap(rhs) else { return nil }
        return compare(classify(lhs), classify(rhs), options: options)
    }

    /// Ordering of classified values.
    @inline(__always)
    package static func compare(_ lhs: Classified, _ rhs: Classified, options: NSComparisonPredicate.Options)
        -> ComparisonResult?
    {
        switch (lhs, rhs) {
        case (.number(let a), .number(let b)): return PredicateNumber.compare(a, b)
        case (.string(let a), .string(let b)): return compareStrings(a, b, options: options)
        case (.date(let a), .date(let b)): return a.compare(b)
        case (.number(let a), .date(let b)):
            return PredicateNumber.compare(a, .double(b.timeIntervalSinceReferenceDate))
        case (.date(let a), .number(let b)):
            return PredicateNumber.compare(.double(a.timeIntervalSinceReferenceDate), b)
        case (.other(let a), .other(let b)):
            if let a = a as? UUID, let b = b as? UUID {
                return compareStrings(a.uuidString, b.uuidString, options: [])
            }
            if let a = a as? Data, let b = b as? Data {
                return a.lexicographicallyPrecedes(b) ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
            }
            return nil
        default:
            return nil
        }
    }

    /// Whether two strings are equal: literally (code point by code point), or after folding case and diacritics.
    @inline(__always)
    package static func stringsEqual(_ a: String, _ b: String, options: NSComparisonPredicate.Options) -> Bool {
        if options.isDisjoint(with: [.caseInsensitive, .diacriticInsensitive]) {
            return a.utf8.elementsEqual(b.utf8)
        }
        if let equal = PredicateStringFolding.asciiEqual(a, b, options: options) { return equal }
        return PredicateStringFolding.fold(a, options: options).utf8.elementsEqual(
            PredicateStringFolding.fold(b, options: options).utf8)
    }

    /// Orders two strings by code point (the order of SQLite's `BINARY` collation), after folding if asked.
    package static func compareStrings(_ a: String, _ b: String, options: NSComparisonPredicate.Options)
        -> ComparisonResult
    {
        var left = a
        var right = b
        if !options.isDisjoint(with: [.caseInsensitive, .diacriticInsensitive]) {
            left = PredicateStringFolding.fold(a, options: options)
            right = PredicateStringFolding.fold(b, options: options)
        }
        var i = left.utf8.makeIterator()
        var j = right.utf8.makeIterator()
        while true {
            switch (i.next(), j.next()) {
            case (nil, nil): return .orderedSame
            case (nil, _): return .orderedAscending
            case (_, nil): return .orderedDescending
            case (let x?, let y?):
                if x < y { return .orderedAscending }
                if x > y { return .orderedDescending }
            }
        }
    }
}

/// Lets `unwrap` see through `Optional` values stored in an `Any`.
protocol OptionalUnwrapping {
    var unwrappedValue: Any? { get }
}

extension Optional: OptionalUnwrapping {
    var unwrappedValue: Any? {
        switch self {
        case .some(let value): value
        case .none: nil
        }
    }
}
