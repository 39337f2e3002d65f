// Prints predicates and expressions as Apple does (`name == "x"`, `age > 30 AND name BEGINSWITH[c] "a"`,
// `ANY employees.firstName == "Bob"`, `CAST(599529600.000000, "NSDate")`), and so that parsing the output gives an
// equal predicate. Where Apple prints something that cannot be parsed back (a UUID or Data constant), OpenCoreData
// prints a CAST that can.

/// `predicateFormat`, `expressionFormat` and `description`.
enum PredicatePrinter {
    // MARK: Predicates

    static func format(comparison predicate: NSComparisonPredicate) -> String {
        let left = format(predicate.leftExpression)
        let right = format(predicate.rightExpression)
        if predicate.predicateOperatorType == .customSelector, let selector = predicate.customSelector {
            return "\(left) \(selector.name) \(right)"
        }
        var text = ""
        switch predicate.comparisonPredicateModifier {
        case .direct: break
        case .any: text = "ANY "
        case .all: text = "ALL "
        }
        text += left + " " + operatorName(predicate.predicateOperatorType)
        // Bits without a letter are not printed: `[]` would not parse back.
        var letters = ""
        let options = predicate.options
        if options.contains(.caseInsensitive) { letters += "c" }
        if options.contains(.diacriticInsensitive) { letters += "d" }
        if options.contains(.localeSensitive) { letters += "l" }
        if options.contains(.normalized) { letters += "n" }
        if !letters.isEmpty { text += "[" + letters + "]" }
        return text + " " + right
    }

    static func operatorName(_ type: NSComparisonPredicate.Operator) -> String {
        switch type {
        case .lessThan: "<"
        case .lessThanOrEqualTo: "<="
        case .greaterThan: ">"
        case .greaterThanOrEqualTo: ">="
        case .equalTo: "=="
        case .notEqualTo: "!="
        case .matches: "MATCHES"
        case .like: "LIKE"
        case .beginsWith: "BEGINSWITH"
        case .endsWith: "ENDSWITH"
        case .in: "IN"
        case .customSelector: "CUSTOMSELECTOR"
        case .contains: "CONTAINS"
        case .between: "BETWEEN"
        }
    }

    static func format(compound predicate: NSCompoundPredicate) -> String {
        let subpredicates = predicate.predicates
        switch predicate.compoundPredicateType {
        case .not:
            return "NOT " + nested(subpredicates[0])
        case .and:
            if subpredicates.isEmpty { return "TRUEPREDICATE" }
            return subpredicates.map(nested).joined(separator: " AND ")
        case .or:
            if subpredicates.isEmpty { return "FALSEPREDICATE" }
            return subpredicates.map(nested).joined(separator: " OR ")
        }
    }

    /// A subpredicate inside a compound predicate: AND and OR groups in parentheses, so that they parse back as the
    /// same tree.
    private static func nested(_ predicate: NSPredicate) -> String {
        if let compound = predicate as? NSCompoundPredicate, compound.compoundPredicateType != .not,
            !compound.predicates.isEmpty
        {
            return "(" + compound.predicateFormat + ")"
        }
        if case .decoded(let inner) = predicate.predicateKind { return nested(inner) }
        return predicate.predicateFormat
    }

    // MARK: Expressions

    static func format(_ expression: NSExpression) -> String {
        switch expression.kind {
        case .constant(let value):
            return expression._isNullObject ? "<null>" : constant(value)
        case .evaluatedObject:
            return "SELF"
        case .variable(let name):
            return "$" + name
        case .keyPath(_, let components, let operand):
            let path = components.map(key).joined(separator: ".")
            guard let operand else { return path }
            return postfixOperand(operand) + "." + path
        case .function(let name, let target, let arguments):
            if let target {
                return "FUNCTION("
                    + ([format(target), stringLiteral(name)] + arguments.map(format))
                    .joined(separator: ", ") + ")"
            }
            return function(name, arguments)
        case .unionSet(let left, let right):
            return setOperand(left) + " UNION " + setOperand(right)
        case .intersectSet(let left, let right):
            return setOperand(left) + " INTERSECT " + setOperand(right)
        case .minusSet(let left, let right):
            return setOperand(left) + " MINUS " + setOperand(right)
        case .subquery(let collection, let variable, let predicate):
            return "SUBQUERY(\(format(collection)), $\(variable), \(predicate.predicateFormat))"
        case .aggregate(let expressions):
            return "{" + expressions.map(format).joined(separator: ", ") + "}"
        case .anyKey:
            return "ANYKEY"
        case .block(_, let arguments):
            let address = String(UInt(bitPattern: ObjectIdentifier(expression).hashValue), radix: 16)
            return "BLOCK(<block 0x\(address)>, " + (arguments ?? []).map(format).joined(separator: ", ") + ")"
        case .conditional(let predicate, let whenTrue, let whenFalse):
            return "TERNARY(\(predicate.predicateFormat), \(format(whenTrue)), \(format(whenFalse)))"
        case .assignment(let name, let value):
            return "$\(name) := \(format(value))"
        case .symbolicIndex(let index):
            return index.rawValue
        case .fetch(let request, let context, let countOnly):
            return "FETCH(\(format(request)), \(format(context)), \(countOnly ? "YES" : "NO"))"
        }
    }

    /// A key, with `#` when it spells a keyword in any case, so that it parses back as a key.
    static func key(_ key: String) -> String {
        if key.hasPrefix("@") { return key }
        if PredicateKeyword(spelling: key) != nil { return "#" + key }
        return key
    }

    private static let infix: [String: (symbol: String, precedence: Int)] = [
        "add:to:": ("+", 1), "from:subtract:": ("-", 1), "multiply:by:": ("*", 2), "divide:by:": ("/", 2),
        "raise:toPower:": ("**", 3),
    ]

    private static func function(_ name: String, _ arguments: [NSExpression]) -> String {
        if let (symbol, precedence) = infix[name], arguments.count == 2 {
            // Left-associative: a right operand of equal precedence needs parentheses, a left one does not.
            let left = operand(arguments[0], parentPrecedence: precedence, isRight: false)
            let right = operand(arguments[1], parentPrecedence: precedence, isRight: true)
            return "\(left) \(symbol) \(right)"
        }
        if name == "objectFrom:withIndex:", arguments.count == 2 {
            return postfixOperand(arguments[0]) + "[" + format(arguments[1]) + "]"
        }
        if name == "castObject:toType:", arguments.count == 2 {
            return "CAST(" + format(arguments[0]) + ", " + format(arguments[1]) + ")"
        }
        return name + "(" + arguments.map(format).joined(separator: ", ") + ")"
    }

    private static func infixPrecedence(_ expression: NSExpression) -> Int? {
        guard case .function(let name, nil, let arguments) = expression.kind, arguments.count == 2 else {
            if case .constant(let value) = expression.kind, let value, let number = PredicateNumber(value),
                number.doubleValue < 0 || (number.doubleValue == 0 && number.doubleValue.sign == .minus)
            {
                return 4  // a negative literal binds as a unary minus
            }
            return nil
        }
        return infix[name]?.precedence
    }

    private static func operand(_ expression: NSExpression, parentPrecedence: Int, isRight: Bool) -> String {
        let text = format(expression)
        guard let precedence = infixPrecedence(expression) else { return setOperandIfNeeded(expression, text) }
        if precedence < parentPrecedence || (isRight && precedence == parentPrecedence) {
            return "(" + text + ")"
        }
        return text
    }

    private static func setOperandIfNeeded(_ expression: NSExpression, _ text: String) -> String {
        switch expression.kind {
        case .unionSet, .intersectSet, .minusSet, .assignment: return "(" + text + ")"
        default: return text
        }
    }

    /// The operand of `.key` or `[index]`: anything that is not a primary expression needs parentheses.
    private static func postfixOperand(_ expression: NSExpression) -> String {
        let text = format(expression)
        switch expression.kind {
        case .function(let name, nil, _) where infix[name] != nil: return "(" + text + ")"
        case .unionSet, .intersectSet, .minusSet, .assignment: return "(" + text + ")"
        case .constant(let value):
            if let value, let number = PredicateNumber(value), number.doubleValue < 0 { return "(" + text + ")" }
            return text
        default: return text
        }
    }

    /// Operands of UNION/INTERSECT/MINUS: left-associative, so a set operation on the right needs parentheses.
    private static func setOperand(_ expression: NSExpression) -> String {
        setOperandIfNeeded(expression, format(expression))
    }

    // MARK: Constants

    /// A constant as Apple prints it: strings quoted, numbers plain, `nil`, dates as `CAST(…, "NSDate")`,
    /// collections in braces.
    static func constant(_ value: Any?) -> String {
        // `NSNull` in a collection prints as its description; no value at all prints as the literal `nil`. Asked of
        // the value's type first: `is NSNull` on a Swift array bridges the whole array to an `NSArray` of objects
        // (three million instructions for 1,000 numbers), and only optionals need the cast that looks inside them.
        guard let value else { return "nil" }
        if type(of: value) is NSNull.Type { return "<null>" }
        guard let value = PredicateValueComparison.unwrap(value) else { return value is NSNull ? "<null>" : "nil" }
        if let number = PredicateNumber(value) { return numberLiteral(number) }
        if let string = PredicateValueComparison.string(value) { return stringLiteral(string) }
        if let date = PredicateValueComparison.date(value) { return dateLiteral(date) }
        if let uuid = value as? UUID { return "CAST(\(stringLiteral(uuid.uuidString)), \"NSUUID\")" }
        if let data = value as? Data { return "CAST(\(stringLiteral(data.base64EncodedString())), \"NSData\")" }
        if let url = value as? URL { return "CAST(\(stringLiteral(url.absoluteString)), \"NSURL\")" }
        if let collection = value as? any KeyValueCodingCollection {
            return "{" + collection.keyValueCodingElements.map(constant).joined(separator: ", ") + "}"
        }
        if let expression = value as? NSExpression { return format(expression) }
        return String(describing: value)
    }

    /// A number as `NSNumber` describes it: integers in decimal, floating-point values without a needless `.0`.
    static func numberLiteral(_ number: PredicateNumber) -> String {
        switch number {
        case .int(let v): return String(v)
        case .uint(let v): return String(v)
        case .decimal(let v):
            return NSDecimalNumber(decimal: v).description(withLocale: Locale(identifier: "en_US_POSIX"))
        case .double(let v):
            if v.isNaN { return "CAST(\"nan\", \"NSNumber\")" }
            if v.isInfinite { return v < 0 ? "CAST(\"-inf\", \"NSNumber\")" : "CAST(\"inf\", \"NSNumber\")" }
            if v == v.rounded(), Swift.abs(v) < 1e15 {
                return v == 0 && v.sign == .minus ? "-0" : String(Int64(v))
            }
            return String(v)
        }
    }

    /// A date as Apple prints it: `CAST(<seconds since 2001-01-01 with six decimals>, "NSDate")`. When six
    /// decimals would lose precision, the shortest exact representation is printed instead, so that the
    /// predicate parses back equal.
    static func dateLiteral(_ date: Date) -> String {
        let seconds = date.timeIntervalSinceReferenceDate
        // An infinite interval is written as the number it is, which the format can spell.
        guard seconds.isFinite else { return "CAST(\(numberLiteral(.double(seconds))), \"NSDate\")" }
        var text = String(format: "%.6f", seconds)
        if Double(text) != seconds { text = String(seconds) }
        return "CAST(\(text), \"NSDate\")"
    }

    /// A string in double quotes, with `"` and `\` escaped and control characters written as escapes. The parser
    /// reads characters, not scalars, so the literal keeps the string's characters apart: a backslash or quote that
    /// combining marks extend is one character that is neither an escape nor the end, and is written as it is; a
    /// character that would join what the literal puts before it (a combining mark after a quote or an escape) is
    /// written as `\u` escapes.
    static func stringLiteral(_ string: String) -> String {
        var text = "\""
        for character in string {
            let scalars = character.unicodeScalars
            let first = scalars[scalars.startIndex]
            if joinsWhatPrecedes(first) {
                for scalar in scalars { text += unicodeEscape(scalar) }
                continue
            }
            if first == "\\" || first == "\"", scalars.count > 1 {
                text.unicodeScalars.append(contentsOf: scalars)
                continue
            }
            for scalar in scalars {
                switch scalar {
                case "\"": text += "\\\""
                case "\\": text += "\\\\"
                case "\n": text += "\\n"
                case "\t": text += "\\t"
                case "\r": text += "\\r"
                default:
                    if scalar.value < 0x20 || scalar.value == 0x7F {
                        text += unicodeEscape(scalar)
                    } else {
                        text.unicodeScalars.append(scalar)
                    }
                }
            }
        }
        return text + "\""
    }

    /// Whether `scalar` extends the character before it (a combining mark, a joiner, a variation selector…).
    /// Nothing below U+0300 does.
    private static func joinsWhatPrecedes(_ scalar: Unicode.Scalar) -> Bool {
        guard scalar.value >= 0x300 else { return false }
        var pair = "a"
        pair.unicodeScalars.append(scalar)
        return pair.count == 1
    }

    /// `\uXXXX`, or a surrogate pair of them above U+FFFF.
    private static func unicodeEscape(_ scalar: Unicode.Scalar) -> String {
        String(scalar).utf16.map { unit in
            let digits = String(unit, radix: 16)
            return "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
        }.joined()
    }
}
