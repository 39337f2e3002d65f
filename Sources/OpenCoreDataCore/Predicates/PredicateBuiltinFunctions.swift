// The functions Apple's `NSExpression(forFunction:arguments:)` predefines, with their documented results: statistics
// over a collection, arithmetic, math, bitwise operations, string case, random values, `now`, `noindex:`,
// `castObject:toType:` (CAST) and `objectFrom:withIndex:` (index expressions). Numbers come back as `NSNumber`.

import Foundation

/// Evaluation of the predefined functions.
enum PredicateBuiltinFunctions {
    /// The names of the functions, with their argument counts, that the parser and `init(forFunction:arguments:)`
    /// accept.
    static let arity: [String: Int] = [
        "sum:": 1, "count:": 1, "min:": 1, "max:": 1, "average:": 1, "median:": 1, "mode:": 1, "stddev:": 1,
        "add:to:": 2, "from:subtract:": 2, "multiply:by:": 2, "divide:by:": 2, "modulus:by:": 2,
        "sqrt:": 1, "log:": 1, "ln:": 1, "raise:toPower:": 2, "exp:": 1,
        "floor:": 1, "ceiling:": 1, "abs:": 1, "trunc:": 1,
        "uppercase:": 1, "lowercase:": 1,
        "random": 0, "random:": 1, "randomn:": 1, "now": 0,
        "bitwiseAnd:with:": 2, "bitwiseOr:with:": 2, "bitwiseXor:with:": 2,
        "leftshift:by:": 2, "rightshift:by:": 2, "onesComplement:": 1,
        "noindex:": 1, "castObject:toType:": 2, "objectFrom:withIndex:": 2,
    ]

    static func evaluate(_ name: String, arguments: [NSExpression], object: Any?, scope: PredicateScope) -> Any? {
        if name == "objectFrom:withIndex:", arguments.count == 2 {
            return index(arguments[0].value(object, in: scope), arguments[1], object: object, scope: scope)
        }
        let values = arguments.map { PredicateValueComparison.unwrap($0.value(object, in: scope)) }
        return evaluate(name, values: values)
    }

    /// Applies the function `name` to evaluated argument values.
    static func evaluate(_ name: String, values: [Any?]) -> Any? {
        guard let expected = arity[name] else {
            preconditionFailure("Unsupported function \(name): it is not one of NSExpression's predefined functions")
        }
        guard values.count >= expected else {
            preconditionFailure("Function \(name) takes \(expected) argument(s), not \(values.count)")
        }
        switch name {
        case "sum:", "count:", "min:", "max:", "average:", "median:", "mode:", "stddev:":
            return statistic(name, collection(values[0]))
        case "add:to:":
            return arithmetic(values[0], values[1], integer: { $0.addingReportingOverflow($1) }, decimal: +, double: +)
        case "from:subtract:":
            return arithmetic(
                values[0], values[1], integer: { $0.subtractingReportingOverflow($1) }, decimal: -, double: -)
        case "multiply:by:":
            return arithmetic(
                values[0], values[1], integer: { $0.multipliedReportingOverflow(by: $1) }, decimal: *, double: *)
        case "divide:by:":
            guard let a = number(values[0]), let b = number(values[1]) else { return nil }
            if case .decimal = a { return NSDecimalNumber(decimal: a.decimalValue / b.decimalValue) }
            if case .decimal = b { return NSDecimalNumber(decimal: a.decimalValue / b.decimalValue) }
            return NSNumber(value: a.doubleValue / b.doubleValue)
        case "modulus:by:":
            guard let a = number(values[0]), let b = number(values[1]) else { return nil }
            if case .int(let x) = a, case .int(let y) = b, y != 0 { return NSNumber(value: x % y) }
            return NSNumber(value: fmod(a.doubleValue, b.doubleValue))
        case "raise:toPower:":
            return double(values[0], values[1], pow)
        case "sqrt:": return double(values[0], Foundation.sqrt)
        case "log:": return double(values[0], log10)
        case "ln:": return double(values[0], Foundation.log)
        case "exp:": return double(values[0], Foundation.exp)
        case "floor:": return double(values[0], Foundation.floor)
        case "ceiling:": return double(values[0], ceil)
        case "trunc:": return double(values[0], Foundation.trunc)
        case "abs:":
            guard let a = number(values[0]) else { return nil }
            switch a {
            case .int(let x) where x != Int64.min: return NSNumber(value: Swift.abs(x))
            case .uint: return a.object
            case .decimal(let x): return NSDecimalNumber(decimal: Swift.abs(x))
            default: return NSNumber(value: Swift.abs(a.doubleValue))
            }
        case "uppercase:":
            return values[0].flatMap(PredicateValueComparison.string)?.uppercased()
        case "lowercase:":
            return values[0].flatMap(PredicateValueComparison.string)?.lowercased()
        case "random":
            return NSNumber(value: Double.random(in: 0..<1))
        case "random:":
            return collection(values[0]).randomElement()
        case "randomn:":
            guard let n = number(values[0])?.int64Value, n > 0 else { return nil }
            return NSNumber(value: Int64.random(in: 0..<n))
        case "now":
            return Date()
        case "bitwiseAnd:with:": return integer(values[0], values[1], &)
        case "bitwiseOr:with:": return integer(values[0], values[1], |)
        case "bitwiseXor:with:": return integer(values[0], values[1], ^)
        case "leftshift:by:": return integer(values[0], values[1]) { $0 << $1 }
        case "rightshift:by:": return integer(values[0], values[1]) { $0 >> $1 }
        case "onesComplement:":
            guard let a = number(values[0]) else { return nil }
            return NSNumber(value: ~a.int64Value)
        case "noindex:":
            return values[0]
        case "castObject:toType:":
            guard let type = values[1].flatMap(PredicateValueComparison.string) else { return nil }
            return cast(values[0], to: type)
        default:
            return nil
        }
    }

    // MARK: Statistics

    private static func statistic(_ name: String, _ elements: [Any]) -> Any? {
        switch name {
        case "count:":
            return NSNumber(value: elements.count)
        case "min:", "max:":
            let keep: ComparisonResult = name == "min:" ? .orderedAscending : .orderedDescending
            var best: Any?
            for element in elements {
                guard let current = best else {
                    best = element
                    continue
                }
                if PredicateValueComparison.compare(element, current) == keep { best = element }
            }
            return best.map { PredicateNumber($0)?.object ?? $0 }
        default:
            break
        }
        let numbers = elements.compactMap { PredicateNumber($0) }
        switch name {
        case "sum:":
            var total = PredicateNumber.int(0)
            for number in numbers {
                total = PredicateNumber.arithmetic(
                    total, number, integer: { $0.addingReportingOverflow($1) }, decimal: +, double: +)
            }
            return total.object
        case "average:":
            guard !numbers.isEmpty else { return nil }
            return NSNumber(value: numbers.reduce(0) { $0 + $1.doubleValue } / Double(numbers.count))
        case "median:":
            guard !numbers.isEmpty else { return nil }
            let sorted = numbers.sorted { PredicateNumber.compare($0, $1) == .orderedAscending }
            if sorted.count % 2 == 1 { return sorted[sorted.count / 2].object }
            let middle = (sorted[sorted.count / 2 - 1].doubleValue + sorted[sorted.count / 2].doubleValue) / 2
            return NSNumber(value: middle)
        case "mode:":
            // Apple's mode: returns an array of the most frequent values.
            var counts: [AnyHashable: Int] = [:]
            var order: [AnyHashable] = []
            for number in numbers {
                let key = AnyHashable(number.doubleValue)
                if counts[key] == nil { order.append(key) }
                counts[key, default: 0] += 1
            }
            let highest = counts.values.max() ?? 0
            return order.filter { counts[$0] == highest }.compactMap { key -> NSNumber? in
                guard let value = key.base as? Double else { return nil }
                return numbers.first { $0.doubleValue == value }?.object
            }
        case "stddev:":
            guard !numbers.isEmpty else { return nil }
            let doubles = numbers.map(\.doubleValue)
            let mean = doubles.reduce(0, +) / Double(doubles.count)
            let variance = doubles.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(doubles.count)
            return NSNumber(value: variance.squareRoot())
        default:
            return nil
        }
    }

    // MARK: Helpers

    private static func collection(_ value: Any?) -> [Any] {
        guard let value else { return [] }
        return (PredicateValueComparison.elements(value) ?? [value]).compactMap { PredicateValueComparison.unwrap($0) }
    }

    private static func number(_ value: Any?) -> PredicateNumber? {
        guard let value else { return nil }
        if let number = PredicateNumber(value) { return number }
        if let date = PredicateValueComparison.date(value) { return .double(date.timeIntervalSinceReferenceDate) }
        return nil
    }

    private static func arithmetic(
        _ lhs: Any?,
        _ rhs: Any?,
        integer: (Int64, Int64) -> (Int64, Bool),
        decimal: (Decimal, Decimal) -> Decimal,
        double: (Double, Double) -> Double
    ) -> Any? {
        // Date arithmetic: a date plus or minus seconds stays a date, as in `now() - 86400`.
        if let date = lhs.flatMap(PredicateValueComparison.date), let seconds = number(rhs) {
            return Date(
                timeIntervalSinceReferenceDate: double(date.timeIntervalSinceReferenceDate, seconds.doubleValue))
        }
        guard let a = number(lhs), let b = number(rhs) else { return nil }
        return PredicateNumber.arithmetic(a, b, integer: integer, decimal: decimal, double: double).object
    }

    private static func double(_ value: Any?, _ function: (Double) -> Double) -> Any? {
        guard let a = number(value) else { return nil }
        return NSNumber(value: function(a.doubleValue))
    }

    private static func double(_ lhs: Any?, _ rhs: Any?, _ function: (Double, Double) -> Double) -> Any? {
        guard let a = number(lhs), let b = number(rhs) else { return nil }
        return NSNumber(value: function(a.doubleValue, b.doubleValue))
    }

    private static func integer(_ lhs: Any?, _ rhs: Any?, _ function: (Int64, Int64) -> Int64) -> Any? {
        guard let a = number(lhs), let b = number(rhs) else { return nil }
        return NSNumber(value: function(a.int64Value, b.int64Value))
    }

    /// `array[index]`, `array[FIRST]`, `array[LAST]`, `array[SIZE]`, `dictionary[key]`.
    private static func index(_ container: Any?, _ index: NSExpression, object: Any?, scope: PredicateScope) -> Any? {
        guard let container = PredicateValueComparison.unwrap(container) else { return nil }
        if case .symbolicIndex(let symbol) = index.kind {
            let elements = PredicateValueComparison.elements(container) ?? []
            switch symbol {
            case .first: return elements.first
            case .last: return elements.last
            case .size: return NSNumber(value: elements.count)
            }
        }
        let key = PredicateValueComparison.unwrap(index.value(object, in: scope))
        if container is NSDictionary || container is [String: Any] {
            guard let key = key.flatMap(PredicateValueComparison.string) else { return nil }
            return KeyValueCodingPath.value(of: container, forKey: key)
        }
        guard let elements = PredicateValueComparison.elements(container),
            let position = key.flatMap(number)?.int64Value, position >= 0, position < elements.count
        else { return nil }
        return elements[Int(position)]
    }

    /// `CAST(value, "type")`: conversions between numbers, strings and dates (seconds since 2001-01-01), plus
    /// `NSDecimalNumber`, `NSUUID` and `NSData` (from base64), which OpenCoreData's printer uses for constants.
    static func cast(_ value: Any?, to type: String) -> Any? {
        guard let value else { return nil }
        switch type {
        case "NSDate", "Date":
            if let date = PredicateValueComparison.date(value) { return date }
            if let number = number(value) { return Date(timeIntervalSinceReferenceDate: number.doubleValue) }
            guard let string = PredicateValueComparison.string(value) else { return nil }
            if let seconds = Double(string) { return Date(timeIntervalSinceReferenceDate: seconds) }
            // CAST("2016-01-02T00:00:00Z", "NSDate"), as configuration files written for Apple platforms use.
            return try? Date(string, strategy: .iso8601)
        case "NSNumber":
            if let number = number(value) { return number.object }
            if let string = PredicateValueComparison.string(value) {
                let trimmed = string.trimmingCharacters(in: .whitespaces)
                if let integer = Int64(trimmed) { return NSNumber(value: integer) }
                if let double = Double(trimmed) { return NSNumber(value: double) }
            }
            return nil
        case "NSDecimalNumber":
            if let string = PredicateValueComparison.string(value) {
                let number = NSDecimalNumber(string: string, locale: Locale(identifier: "en_US_POSIX"))
                return number == NSDecimalNumber.notANumber ? nil : number
            }
            if let number = number(value) { return NSDecimalNumber(decimal: number.decimalValue) }
            return nil
        case "NSString", "String":
            if let string = PredicateValueComparison.string(value) { return string }
            if let number = PredicateNumber(value) { return PredicatePrinter.numberLiteral(number) }
            return String(describing: value)
        case "NSUUID", "UUID":
            if let uuid = value as? UUID { return uuid }
            return PredicateValueComparison.string(value).flatMap(UUID.init(uuidString:))
        case "NSData", "Data":
            if let data = value as? Data { return data }
            return PredicateValueComparison.string(value).flatMap { Data(base64Encoded: $0) }
        case "NSURL", "URL":
            if let url = value as? URL { return url }
            return PredicateValueComparison.string(value).flatMap(URL.init(string:))
        default:
            return value
        }
    }
}
