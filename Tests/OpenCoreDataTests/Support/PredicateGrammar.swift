import Foundation

/// A deterministic random number generator (SplitMix64): a failure found with a seed is found again with it.
struct FuzzRandom: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }

    mutating func chance(_ percent: Int) -> Bool { int(0...99) < percent }

    mutating func pick<T>(_ choices: [T]) -> T { choices[int(0...(choices.count - 1))] }
}

/// Random predicate format strings drawn from the whole grammar of Apple's predicate format syntax (Predicate
/// Programming Guide, "Predicate Format String Syntax"): comparisons with every operator and option, compounds,
/// aggregate modifiers, key paths with collection operators, every literal form, arithmetic and bitwise operators,
/// functions, `FUNCTION`, indexes, aggregates, set operators, `SUBQUERY`, `TERNARY`, `CAST`, variables and `ANYKEY`.
struct PredicateGrammar {
    var random: FuzzRandom

    init(seed: UInt64) {
        random = FuzzRandom(seed: seed)
    }

    static let keys = ["a", "b", "name", "value", "tags", "owner", "k0", "items", "date", "x_1", "é", "日付"]
    static let comparisonOperators = ["==", "=", "!=", "<>", "<", "<=", "=<", ">", ">=", "=>"]
    static let stringOperators = ["CONTAINS", "BEGINSWITH", "ENDSWITH", "LIKE", "MATCHES"]
    static let options = ["", "", "[c]", "[d]", "[n]", "[l]", "[cd]", "[cdl]", "[dn]"]
    static let binaryOperators = [" + ", " - ", " * ", " / ", " ** ", " & ", " | ", " ^ "]
    static let setOperators = [" UNION ", " INTERSECT ", " MINUS "]
    static let oneArgumentFunctions = [
        "sum", "count", "min", "max", "average", "median", "mode", "stddev", "sqrt", "log", "ln", "exp", "floor",
        "ceiling", "abs", "trunc", "uppercase", "lowercase", "onesComplement", "random", "randomn", "noindex",
    ]
    static let twoArgumentFunctions = [
        "add:to:", "from:subtract:", "multiply:by:", "divide:by:", "modulus:by:", "raise:toPower:",
        "bitwiseAnd:with:", "bitwiseOr:with:", "bitwiseXor:with:", "leftshift:by:", "rightshift:by:",
    ]
    /// Characters that strings are made of, including those that need escapes and those that join the one before
    /// (combining marks), which the printer must not separate from a backslash.
    static let stringPieces = [
        "a", "Z", "0", " ", "é", "e\u{301}", "\u{301}", "日本", "😀", "👩‍👩‍👧", "%", "%@", "*", "?", "\\", "\\\u{301}", "\"",
        "'", "\t", "\n", "\r", "\u{7}", "\u{1F}", "\u{7F}", "\u{A0}", "\u{200B}", "\u{FEFF}", "\u{200D}", "\u{FE0F}",
        "\u{1F3FB}", "\u{0903}", "$", "{", "}", "(", ")",
        "AND", "nil",
    ]

    /// A predicate no more than `depth` levels above its leaves.
    mutating func predicate(depth: Int = 4) -> String {
        let choice = depth <= 0 ? random.int(0...3) : random.int(0...13)
        switch choice {
        case 0, 1: return comparison(depth: depth - 1)
        case 2: return random.pick(["TRUEPREDICATE", "FALSEPREDICATE"])
        case 3: return "\(keyPath()) \(random.pick(["IN", "BETWEEN"])) {\(literal()), \(literal())}"
        case 4:
            return
                "\(predicate(depth: depth - 1)) \(random.pick(["AND", "OR", "&&", "||"])) \(predicate(depth: depth - 1))"
        case 5: return "\(random.pick(["NOT ", "!"]))(\(predicate(depth: depth - 1)))"
        case 6: return "(\(predicate(depth: depth - 1)))"
        case 7:
            let modifier = random.pick(["ANY", "ALL", "NONE", "SOME"])
            return "\(modifier) \(keyPath()) \(comparisonOperator()) \(expression(depth: depth - 1))"
        case 8:
            return "\(expression(depth: depth - 1)) BETWEEN {\(expression(depth: depth - 1)), "
                + "\(expression(depth: depth - 1))}"
        case 9: return "\(expression(depth: depth - 1)) IN \(expression(depth: depth - 1))"
        case 10:
            let variable = random.pick(["$x", "$item", "$t"])
            return "SUBQUERY(\(keyPath()), \(variable), \(variable).\(random.pick(Self.keys)) "
                + "\(comparisonOperator()) \(expression(depth: depth - 2))).@count \(comparisonOperator()) "
                + "\(random.int(0...3))"
        case 11:
            return "\(keyPath()) \(random.pick(Self.stringOperators))\(random.pick(Self.options)) \(stringLiteral())"
        case 12: return "ANYKEY \(comparisonOperator()) \(literal())"
        default: return "\(predicate(depth: depth - 1)) AND NOT \(predicate(depth: depth - 1))"
        }
    }

    mutating func comparisonOperator() -> String {
        let name = random.pick(Self.comparisonOperators)
        return name.hasPrefix("=") || name.hasPrefix("!") ? name + random.pick(Self.options) : name
    }

    mutating func comparison(depth: Int) -> String {
        let operatorName =
            random.chance(30)
            ? random.pick(Self.stringOperators) + random.pick(Self.options) : comparisonOperator()
        return "\(expression(depth: depth)) \(operatorName) \(expression(depth: depth))"
    }

    mutating func keyPath() -> String {
        var path = (0..<random.int(1...3)).map { _ in random.pick(Self.keys) }.joined(separator: ".")
        if random.chance(15) { path = random.pick(["SELF.", "$x.", "#"]) + path }
        if random.chance(15) { path += random.pick([".@count", ".@sum.b", ".@avg.value", ".@max.a", ".@min.k0"]) }
        if random.chance(5) { path = "@count." + path }
        return path
    }

    /// An expression no more than `depth` levels above its leaves.
    mutating func expression(depth: Int = 3) -> String {
        let choice = depth <= 0 ? random.int(0...3) : random.int(0...17)
        switch choice {
        case 0, 1: return keyPath()
        case 2: return literal()
        case 3: return random.pick(["SELF", "$x", "$value", "ANYKEY", "now()", "random()"])
        case 4, 5:
            return "\(expression(depth: depth - 1))\(random.pick(Self.binaryOperators))\(expression(depth: depth - 1))"
        case 6: return "(\(expression(depth: depth - 1)))"
        case 7: return "-\(expression(depth: depth - 1))"
        case 8: return "\(random.pick(Self.oneArgumentFunctions))(\(expression(depth: depth - 1)))"
        case 9:
            return "\(random.pick(Self.twoArgumentFunctions))(\(expression(depth: depth - 1)), "
                + "\(expression(depth: depth - 1)))"
        case 10:
            let arguments = (0..<random.int(0...2)).map { _ in ", " + expression(depth: depth - 1) }.joined()
            return "FUNCTION(\(expression(depth: depth - 1)), \(stringLiteral(plain: true))\(arguments))"
        case 11:
            let index = random.pick(["FIRST", "LAST", "SIZE", "0", "2", "'k'", "\(keyPath())"])
            return "\(keyPath())[\(index)]"
        case 12:
            let elements = (0..<random.int(0...3)).map { _ in expression(depth: depth - 1) }
            return "{" + elements.joined(separator: ", ") + "}"
        case 13:
            return "\(expression(depth: depth - 1))\(random.pick(Self.setOperators))\(expression(depth: depth - 1))"
        case 14:
            let variable = random.pick(["$x", "$i"])
            return "SUBQUERY(\(keyPath()), \(variable), \(variable).\(random.pick(Self.keys)) "
                + "\(comparisonOperator()) \(literal()))"
        case 15:
            return "TERNARY(\(predicate(depth: depth - 2)), \(expression(depth: depth - 1)), "
                + "\(expression(depth: depth - 1)))"
        case 16:
            let type = random.pick(["\"NSNumber\"", "'NSString'", "\"NSDate\"", "\"NSDecimalNumber\""])
            return "CAST(\(expression(depth: depth - 1)), \(type))"
        default: return "\(keyPath()).\(random.pick(["@count", "@sum.a", "@distinctUnionOfObjects.b"]))"
        }
    }

    /// A constant in one of the forms the syntax has for it.
    mutating func literal() -> String {
        switch random.int(0...12) {
        case 0: return String(random.int(-1_000...1_000))
        case 1: return random.pick(["0", "42", "9223372036854775807", "-9223372036854775808", "18446744073709551615"])
        case 2: return random.pick(["0x1F", "0X0", "0o17", "0b101", "0xFFFFFFFFFFFFFFFF", "1_000"])
        case 3:
            let value = Double(random.int(-100_000...100_000)) / Double(random.pick([1, 10, 1_000, 7]))
            return "\(value)"
        case 4: return random.pick(["1e3", "2.5E-3", "1e308", "4.9e-324", "1e400", ".5", "0.1", "1.", "-0.0"])
        case 5: return random.pick(["nil", "NULL", "YES", "NO", "TRUE", "FALSE", "true", "no"])
        case 6, 7, 8: return stringLiteral()
        case 9: return "{\(literal()), \(literal())}"
        case 10: return "CAST(\(random.int(0...1_000_000_000)).\(random.int(0...999)), \"NSDate\")"
        default: return "\(random.int(0...99))"
        }
    }

    /// A quoted string with escapes, or `plain` letters only.
    mutating func stringLiteral(plain: Bool = false) -> String {
        if plain { return "'" + random.pick(["foo:", "bar", "length", "uppercaseString", "x:y:"]) + "'" }
        let quote = random.pick(["\"", "'"])
        var body = ""
        for _ in 0..<random.int(0...6) {
            if random.chance(20) {
                body += random.pick(["\\\\", "\\t", "\\n", "\\r", "\\\"", "\\'", "\\u00e9", "\\x41", "\\0", "\\q"])
                continue
            }
            let piece = random.pick(Self.stringPieces)
            switch piece {
            case "\\": body += "\\\\"
            case "\\\u{301}": body += "\\\\\u{301}"
            case quote: body += "\\" + quote
            default: body += piece
            }
        }
        return quote + body + quote
    }
}
