// Values reach predicates as Swift integers and floating-point numbers, `Bool`, `Decimal`, `NSNumber` (what managed
// objects return) and `NSDecimalNumber`. Foundation compares all of them by numeric value, so `age == 30` matches an
// `Int16` attribute, an `NSNumber` and a `Double` alike. This enum is the one place where they are read, without
// allocating an `NSNumber` for Swift values.

/// A number read from any of the numeric representations a predicate can meet.
package enum PredicateNumber: Sendable {
    case int(Int64)
    /// Only for unsigned values above `Int64.max`.
    case uint(UInt64)
    case double(Double)
    case decimal(Decimal)

    /// Reads `value` as a number, or returns `nil` when it is not one (strings, dates and `Bool`-less objects).
    @inline(__always)
    package init?(_ value: Any) {
        // The common kinds by their exact type first: every failed cast of the switch below is a dynamic cast.
        let type = type(of: value)
        if type == Int64.self, let v = value as? Int64 {
            self = .int(v)
            return
        }
        if type == Int.self, let v = value as? Int {
            self = .int(Int64(v))
            return
        }
        if type == Double.self, let v = value as? Double {
            self = .double(v)
            return
        }
        if type is AnyObject.Type {
            guard let number = value as? NSNumber else { return nil }
            self.init(number: number)
            return
        }
        switch value {
        case let v as Int: self = .int(Int64(v))
        case let v as Double: self = .double(v)
        case let v as Bool: self = .int(v ? 1 : 0)
        case let v as Int64: self = .int(v)
        case let v as Int32: self = .int(Int64(v))
        case let v as Int16: self = .int(Int64(v))
        case let v as Int8: self = .int(Int64(v))
        case let v as UInt: self = v > UInt(Int64.max) ? .uint(UInt64(v)) : .int(Int64(v))
        case let v as UInt64: self = v > UInt64(Int64.max) ? .uint(v) : .int(Int64(v))
        case let v as UInt32: self = .int(Int64(v))
        case let v as UInt16: self = .int(Int64(v))
        case let v as UInt8: self = .int(Int64(v))
        case let v as Float: self = .double(Double(v))
        case let v as Decimal: self = .decimal(v)
        default: return nil
        }
    }

    /// Reads an `NSNumber` by the kind of value it holds (integer, floating point or decimal).
    package init(number: NSNumber) {
        if let decimal = number as? NSDecimalNumber {
            self = .decimal(decimal.decimalValue)
            return
        }
        switch number.objCType.pointee {
        case 0x64, 0x66:  // "d", "f"
            self = .double(number.doubleValue)
        case 0x51, 0x4C:  // "Q", "L"
            let value = number.uint64Value
            self = value > UInt64(Int64.max) ? .uint(value) : .int(Int64(value))
        default:
            self = .int(number.int64Value)
        }
    }

    /// The value as a `Double` (exact for integers up to 2^53).
    package var doubleValue: Double {
        switch self {
        case .int(let v): Double(v)
        case .uint(let v): Double(v)
        case .double(let v): v
        case .decimal(let v): PredicateNumber.nearestDouble(v)
        }
    }

    /// The double nearest to `value`. Foundation's `NSDecimalNumber.doubleValue` on Linux multiplies by powers of ten
    /// and can miss by an ulp (3.3333333333 gives 3.3333333332999997), so that a decimal would compare unequal with
    /// the double that names it, which a SQLite store keeps for it; parsing its digits rounds correctly.
    package static func nearestDouble(_ value: Decimal) -> Double {
        if value.isNaN { return .nan }
        return Double(NSDecimalNumber(decimal: value).stringValue) ?? NSDecimalNumber(decimal: value).doubleValue
    }

    /// `value` as a `Decimal`, or NaN when a decimal cannot hold it: Foundation's `Decimal(_: Double)` stops on
    /// infinities, which data (a value read from a store, `1e400` in a predicate) can carry.
    package static func decimal(_ value: Double) -> Decimal {
        guard value.isFinite, Swift.abs(value) < 1e165 else { return .nan }
        return Decimal(value)
    }

    /// The value as a `Decimal`.
    package var decimalValue: Decimal {
        switch self {
        case .int(let v): Decimal(v)
        case .uint(let v): Decimal(v)
        case .double(let v): PredicateNumber.decimal(v)
        case .decimal(let v): v
        }
    }

    /// The value as an integer, truncating toward zero and clamping to the range of `Int64`.
    package var int64Value: Int64 {
        switch self {
        case .int(let v): return v
        case .uint: return Int64.max
        case .double(let v):
            if v.isNaN { return 0 }
            if v >= 9.223_372_036_854_775_807e18 { return Int64.max }
            if v <= -9.223_372_036_854_775_808e18 { return Int64.min }
            return Int64(v)
        case .decimal(let v): return PredicateNumber.double(NSDecimalNumber(decimal: v).doubleValue).int64Value
        }
    }

    /// Whether the value is integral and held as an integer.
    package var isInteger: Bool {
        switch self {
        case .int, .uint: true
        default: false
        }
    }

    /// The value boxed as Foundation returns numbers: `NSDecimalNumber` for decimals, `NSNumber` otherwise.
    package var object: NSNumber {
        switch self {
        case .int(let v): NSNumber(value: v)
        case .uint(let v): NSNumber(value: v)
        case .double(let v): NSNumber(value: v)
        case .decimal(let v): NSDecimalNumber(decimal: v)
        }
    }

    /// Orders two numbers by value, exactly for integers of either sign and by `Double` otherwise.
    @inline(__always)
    package static func compare(_ lhs: PredicateNumber, _ rhs: PredicateNumber) -> ComparisonResult {
        switch (lhs, rhs) {
        case (.int(let a), .int(let b)):
            return a < b ? .orderedAscending : (a > b ? .orderedDescending : .orderedSame)
        case (.uint(let a), .uint(let b)):
            return a < b ? .orderedAscending : (a > b ? .orderedDescending : .orderedSame)
        case (.int, .uint):
            return .orderedAscending
        case (.uint, .int):
            return .orderedDescending
        case (.decimal(let a), .decimal(let b)):
            return a < b ? .orderedAscending : (a > b ? .orderedDescending : .orderedSame)
        case (.decimal(let a), .int), (.decimal(let a), .uint):
            let b = rhs.decimalValue
            return a < b ? .orderedAscending : (a > b ? .orderedDescending : .orderedSame)
        case (.int, .decimal(let b)), (.uint, .decimal(let b)):
            let a = lhs.decimalValue
            return a < b ? .orderedAscending : (a > b ? .orderedDescending : .orderedSame)
        default:
            let a = lhs.doubleValue
            let b = rhs.doubleValue
            return a < b ? .orderedAscending : (a > b ? .orderedDescending : .orderedSame)
        }
    }
}

extension PredicateNumber {
    /// Adds, subtracts or multiplies, staying in integers while the result fits and in decimals when either side is
    /// a decimal, as Foundation's arithmetic functions do.
    package static func arithmetic(
        _ lhs: PredicateNumber,
        _ rhs: PredicateNumber,
        integer: (Int64, Int64) -> (Int64, Bool),
        decimal: (Decimal, Decimal) -> Decimal,
        double: (Double, Double) -> Double
    ) -> PredicateNumber {
        switch (lhs, rhs) {
        case (.int(let a), .int(let b)):
            let (result, overflow) = integer(a, b)
            return overflow ? .double(double(Double(a), Double(b))) : .int(result)
        case (.decimal, _), (_, .decimal):
            return .decimal(decimal(lhs.decimalValue, rhs.decimalValue))
        default:
            return .double(double(lhs.doubleValue, rhs.doubleValue))
        }
    }
}
