// A recursive-descent parser for Apple's predicate format language ("Predicate Format String Syntax" and "BNF
// Definition of Cocoa Predicates"). It never backtracks: a parenthesized group is parsed once as "a predicate or an
// expression" and what follows decides which it was, so parsing is linear in the number of tokens. Nesting is
// limited, so that hostile input (`((((…`) ends in an error instead of exhausting the stack.
//
// Precedence, loosest first: OR, AND, NOT, comparison; then UNION/INTERSECT/MINUS, + -, * /, **, unary minus,
// postfix (`.key`, `[index]`), primary.

/// Parses format strings into predicates and expressions.
struct PredicateParser {
    /// The deepest nesting of parentheses, NOTs and unary minuses accepted.
    static let maximumDepth = 100

    /// A parenthesized group is either until what surrounds it decides.
    enum Parsed {
        case predicate(NSPredicate)
        case expression(NSExpression)
    }

    private let tokens: [PredicateToken]
    private var index = 0
    private let arguments: [Any]
    private var argumentIndex = 0
    private var depth = 0

    private init(tokens: [PredicateToken], arguments: [Any]) {
        self.tokens = tokens
        self.arguments = arguments
    }

    // MARK: Entry points

    /// Parses a predicate, substituting `arguments` for its format specifiers.
    static func parsePredicate(_ format: String, arguments: [Any]) throws(PredicateParseFailure) -> NSPredicate {
        var parser = PredicateParser(tokens: try PredicateLexer(format).tokenize(), arguments: arguments)
        let parsed = try parser.parseOr()
        let predicate = try parser.requirePredicate(parsed)
        try parser.expectEnd()
        return predicate
    }

    /// Parses an expression, substituting `arguments` for its format specifiers.
    static func parseExpression(_ format: String, arguments: [Any]) throws(PredicateParseFailure) -> NSExpression {
        var parser = PredicateParser(tokens: try PredicateLexer(format).tokenize(), arguments: arguments)
        let parsed = try parser.parseExpression()
        guard case .expression(let expression) = parsed else {
            throw PredicateParseFailure(position: 0, expected: "an expression", found: "a predicate")
        }
        try parser.expectEnd()
        return expression
    }

    // MARK: Tokens

    private var current: PredicateToken { tokens[index] }

    private mutating func advance() {
        if index < tokens.count - 1 { index += 1 }
    }

    private func isSymbol(_ symbol: PredicateSymbol) -> Bool {
        if case .symbol(let found) = tokens[index].kind { return found == symbol }
        return false
    }

    private func isKeyword(_ keyword: PredicateKeyword) -> Bool {
        tokens[index].keyword == keyword
    }

    private func failure(_ expected: String) -> PredicateParseFailure {
        PredicateParseFailure(position: current.position, expected: expected, found: current.display)
    }

    private mutating func expectSymbol(_ symbol: PredicateSymbol) throws(PredicateParseFailure) {
        guard isSymbol(symbol) else { throw failure("\"\(symbol.rawValue)\"") }
        advance()
    }

    private func expectEnd() throws(PredicateParseFailure) {
        guard current.kind == .end else { throw failure("an operator, AND, OR or the end of the string") }
    }

    private mutating func enter() throws(PredicateParseFailure) {
        depth += 1
        guard depth <= Self.maximumDepth else {
            throw failure("at most \(Self.maximumDepth) levels of nesting")
        }
    }

    private mutating func leave() {
        depth -= 1
    }

    private func requirePredicate(_ parsed: Parsed) throws(PredicateParseFailure) -> NSPredicate {
        switch parsed {
        case .predicate(let predicate): return predicate
        case .expression: throw failure("an operator such as ==, <, IN, CONTAINS or BEGINSWITH")
        }
    }

    private func requireExpression(_ parsed: Parsed, at position: Int) throws(PredicateParseFailure) -> NSExpression {
        switch parsed {
        case .expression(let expression): return expression
        case .predicate:
            throw PredicateParseFailure(position: position, expected: "an expression", found: "a predicate")
        }
    }

    // MARK: Predicates

    private mutating func parseOr() throws(PredicateParseFailure) -> Parsed {
        let first = try parseAnd()
        guard isKeyword(.or) || isSymbol(.bars) else { return first }
        var subpredicates = [try requirePredicate(first)]
        while isKeyword(.or) || isSymbol(.bars) {
            advance()
            subpredicates.append(try requirePredicate(try parseAnd()))
        }
        return .predicate(NSCompoundPredicate(type: .or, subpredicates: subpredicates))
    }

    private mutating func parseAnd() throws(PredicateParseFailure) -> Parsed {
        let first = try parseNot()
        guard isKeyword(.and) || isSymbol(.ampersands) else { return first }
        var subpredicates = [try requirePredicate(first)]
        while isKeyword(.and) || isSymbol(.ampersands) {
            advance()
            subpredicates.append(try requirePredicate(try parseNot()))
        }
        return .predicate(NSCompoundPredicate(type: .and, subpredicates: subpredicates))
    }

    private mutating func parseNot() throws(PredicateParseFailure) -> Parsed {
        guard isKeyword(.not) || isSymbol(.bang) else { return try parseComparison() }
        advance()
        try enter()
        defer { leave() }
        let operand = try requirePredicate(try parseNot())
        return .predicate(NSCompoundPredicate(type: .not, subpredicates: [operand]))
    }

    private mutating func parseComparison() throws(PredicateParseFailure) -> Parsed {
        if isKeyword(.truePredicate) {
            advance()
            return .predicate(NSPredicate(value: true))
        }
        if isKeyword(.falsePredicate) {
            advance()
            return .predicate(NSPredicate(value: false))
        }
        var modifier = NSComparisonPredicate.Modifier.direct
        var negated = false
        switch current.keyword {
        case .anyOf?, .someOf?: modifier = .any
        case .allOf?: modifier = .all
        case .noneOf?:
            modifier = .any
            negated = true
        default: break
        }
        if modifier != .direct {
            advance()
            let position = current.position
            let left = try requireExpression(try parseExpression(), at: position)
            guard let (type, options) = try parseOperator() else {
                throw failure("an operator such as ==, <, IN, CONTAINS or BEGINSWITH")
            }
            let comparison = try parseRightSide(left: left, type: type, options: options, modifier: modifier)
            return .predicate(negated ? NSCompoundPredicate(type: .not, subpredicates: [comparison]) : comparison)
        }
        let position = current.position
        let left = try parseExpression()
        guard case .expression(let expression) = left else { return left }
        guard let (type, options) = try parseOperator() else { return left }
        _ = position
        return .predicate(try parseRightSide(left: expression, type: type, options: options, modifier: .direct))
    }

    private mutating func parseRightSide(
        left: NSExpression,
        type: NSComparisonPredicate.Operator,
        options: NSComparisonPredicate.Options,
        modifier: NSComparisonPredicate.Modifier
    ) throws(PredicateParseFailure) -> NSComparisonPredicate {
        let position = current.position
        let right = try requireExpression(try parseExpression(), at: position)
        return NSComparisonPredicate(
            leftExpression: left, rightExpression: right, modifier: modifier, type: type, options: options)
    }

    /// The operator and its `[cd]` options, or `nil` when the current token is not an operator.
    private mutating func parseOperator() throws(PredicateParseFailure)
        -> (NSComparisonPredicate.Operator, NSComparisonPredicate.Options)?
    {
        let type: NSComparisonPredicate.Operator
        switch current.kind {
        case .symbol(.equals), .symbol(.equalsEquals): type = .equalTo
        case .symbol(.bangEquals), .symbol(.lessGreater): type = .notEqualTo
        case .symbol(.less): type = .lessThan
        case .symbol(.lessEquals), .symbol(.equalsLess): type = .lessThanOrEqualTo
        case .symbol(.greater): type = .greaterThan
        case .symbol(.greaterEquals), .symbol(.equalsGreater): type = .greaterThanOrEqualTo
        default:
            switch current.keyword {
            case .between?: type = .between
            case .in?: type = .in
            case .contains?: type = .contains
            case .beginsWith?: type = .beginsWith
            case .endsWith?: type = .endsWith
            case .like?: type = .like
            case .matches?: type = .matches
            default: return nil
            }
        }
        advance()
        guard isSymbol(.openBracket) else { return (type, []) }
        advance()
        var options: NSComparisonPredicate.Options = []
        guard case .identifier(let letters, false) = current.kind else {
            throw failure("string options c, d or n inside [ ]")
        }
        for letter in letters.lowercased() {
            switch letter {
            case "c": options.insert(.caseInsensitive)
            case "d": options.insert(.diacriticInsensitive)
            case "n": options.insert(.normalized)
            default: throw failure("string options c, d or n inside [ ]")
            }
        }
        advance()
        try expectSymbol(.closeBracket)
        return (type, options)
    }

    // MARK: Expressions

    private mutating func parseExpression() throws(PredicateParseFailure) -> Parsed {
        var left = try parseAdditive()
        while true {
            let make: (NSExpression, NSExpression) -> NSExpression
            switch current.keyword {
            case .union?: make = { NSExpression(forUnionSet: $0, with: $1) }
            case .intersect?: make = { NSExpression(forIntersectSet: $0, with: $1) }
            case .minus?: make = { NSExpression(forMinusSet: $0, with: $1) }
            default: return left
            }
            guard case .expression(let lhs) = left else { return left }
            advance()
            let position = current.position
            let rhs = try requireExpression(try parseAdditive(), at: position)
            left = .expression(make(lhs, rhs))
        }
    }

    private mutating func parseAdditive() throws(PredicateParseFailure) -> Parsed {
        var left = try parseMultiplicative()
        while isSymbol(.plus) || isSymbol(.minus) {
            guard case .expression(let lhs) = left else { return left }
            let function = isSymbol(.plus) ? "add:to:" : "from:subtract:"
            advance()
            let position = current.position
            let rhs = try requireExpression(try parseMultiplicative(), at: position)
            left = .expression(NSExpression(forFunction: function, arguments: [lhs, rhs]))
        }
        return left
    }

    private mutating func parseMultiplicative() throws(PredicateParseFailure) -> Parsed {
        var left = try parsePower()
        while isSymbol(.star) || isSymbol(.slash) {
            guard case .expression(let lhs) = left else { return left }
            let function = isSymbol(.star) ? "multiply:by:" : "divide:by:"
            advance()
            let position = current.position
            let rhs = try requireExpression(try parsePower(), at: position)
            left = .expression(NSExpression(forFunction: function, arguments: [lhs, rhs]))
        }
        return left
    }

    private mutating func parsePower() throws(PredicateParseFailure) -> Parsed {
        var left = try parseUnary()
        while isSymbol(.stars) {
            guard case .expression(let lhs) = left else { return left }
            advance()
            let position = current.position
            let rhs = try requireExpression(try parseUnary(), at: position)
            left = .expression(NSExpression(forFunction: "raise:toPower:", arguments: [lhs, rhs]))
        }
        return left
    }

    private mutating func parseUnary() throws(PredicateParseFailure) -> Parsed {
        guard isSymbol(.minus) else { return try parsePostfix() }
        advance()
        try enter()
        defer { leave() }
        let position = current.position
        let operand = try requireExpression(try parseUnary(), at: position)
        if case .constant(let value) = operand.kind, let value, let number = PredicateNumber(value) {
            switch number {
            case .int(let v) where v != Int64.min:
                return .expression(NSExpression(forConstantValue: NSNumber(value: -v)))
            case .uint(let v) where v == UInt64(Int64.max) + 1:
                return .expression(NSExpression(forConstantValue: NSNumber(value: Int64.min)))
            case .double(let v): return .expression(NSExpression(forConstantValue: NSNumber(value: -v)))
            default: break
            }
        }
        let zero = NSExpression(forConstantValue: NSNumber(value: 0))
        return .expression(NSExpression(forFunction: "from:subtract:", arguments: [zero, operand]))
    }

    private mutating func parsePostfix() throws(PredicateParseFailure) -> Parsed {
        var parsed = try parsePrimary()
        while case .expression(let base) = parsed {
            if isSymbol(.dot) {
                advance()
                let key: String
                switch current.kind {
                case .identifier(let name, _): key = name
                case .atIdentifier(let name): key = "@" + name
                default: throw failure("a key after \".\"")
                }
                advance()
                parsed = .expression(Self.appendKey(key, to: base))
            } else if isSymbol(.openBracket) {
                advance()
                let indexExpression: NSExpression
                switch current.keyword {
                case .first?:
                    indexExpression = NSExpression(kind: .symbolicIndex(.first))
                    advance()
                case .last?:
                    indexExpression = NSExpression(kind: .symbolicIndex(.last))
                    advance()
                case .size?:
                    indexExpression = NSExpression(kind: .symbolicIndex(.size))
                    advance()
                default:
                    let position = current.position
                    indexExpression = try requireExpression(try parseExpression(), at: position)
                }
                try expectSymbol(.closeBracket)
                parsed = .expression(
                    NSExpression(forFunction: "objectFrom:withIndex:", arguments: [base, indexExpression]))
            } else {
                break
            }
        }
        return parsed
    }

    /// `base.key`: extends a key path, or reads a key of another expression's value (`$x.name`).
    static func appendKey(_ key: String, to base: NSExpression) -> NSExpression {
        switch base.kind {
        case .keyPath(let path, let components, let operand):
            return NSExpression(kind: .keyPath(path + "." + key, components: components + [key], operand: operand))
        case .evaluatedObject:
            return NSExpression(kind: .keyPath(key, components: [key], operand: nil))
        default:
            return NSExpression(kind: .keyPath(key, components: [key], operand: base))
        }
    }

    private mutating func parsePrimary() throws(PredicateParseFailure) -> Parsed {
        let token = current
        switch token.kind {
        case .symbol(.openParenthesis):
            advance()
            try enter()
            defer { leave() }
            let inner = try parseOr()
            try expectSymbol(.closeParenthesis)
            return inner
        case .symbol(.openBrace):
            advance()
            try enter()
            defer { leave() }
            var elements: [NSExpression] = []
            if !isSymbol(.closeBrace) {
                while true {
                    let position = current.position
                    elements.append(try requireExpression(try parseExpression(), at: position))
                    guard isSymbol(.comma) else { break }
                    advance()
                }
            }
            try expectSymbol(.closeBrace)
            return .expression(NSExpression(forAggregate: elements))
        case .string(let value):
            advance()
            return .expression(NSExpression(forConstantValue: value))
        case .integer(let value):
            advance()
            return .expression(NSExpression(forConstantValue: NSNumber(value: value)))
        case .unsignedInteger(let value):
            advance()
            return .expression(NSExpression(forConstantValue: NSNumber(value: value)))
        case .real(let value):
            advance()
            return .expression(NSExpression(forConstantValue: NSNumber(value: value)))
        case .variable(let name):
            advance()
            guard isSymbol(.colonEquals) else { return .expression(NSExpression(forVariable: name)) }
            advance()
            let position = current.position
            let value = try requireExpression(try parseExpression(), at: position)
            return .expression(NSExpression(kind: .assignment(name, value)))
        case .formatSpecifier(let conversion):
            advance()
            return .expression(try formatArgument(conversion, at: token))
        case .atIdentifier(let name):
            advance()
            return .expression(NSExpression(forKeyPath: "@" + name))
        case .identifier(let name, let escaped):
            advance()
            if escaped { return .expression(NSExpression(forKeyPath: name)) }
            return .expression(try parseIdentifier(name, at: token))
        default:
            throw failure("an expression")
        }
    }

    private mutating func parseIdentifier(_ name: String, at token: PredicateToken) throws(PredicateParseFailure)
        -> NSExpression
    {
        switch token.keyword {
        case .null?, .nilValue?: return NSExpression(forConstantValue: nil)
        case .trueValue?, .yes?: return NSExpression(forConstantValue: NSNumber(value: true))
        case .falseValue?, .no?: return NSExpression(forConstantValue: NSNumber(value: false))
        case .selfValue?: return NSExpression.expressionForEvaluatedObject()
        case .anyKey?: return NSExpression.expressionForAnyKey()
        case .subquery?: return try parseSubquery()
        case .function?: return try parseFunction()
        case .fetch?: return try parseFetch()
        case .cast?:
            try expectSymbol(.openParenthesis)
            let value = try parseArgument()
            try expectSymbol(.comma)
            let type = try parseArgument()
            try expectSymbol(.closeParenthesis)
            if let constant = Self.foldedCast(value, type) { return constant }
            return NSExpression(forFunction: "castObject:toType:", arguments: [value, type])
        case .ternary?:
            try expectSymbol(.openParenthesis)
            let condition = try requirePredicate(try parseOr())
            try expectSymbol(.comma)
            let whenTrue = try parseArgument()
            try expectSymbol(.comma)
            let whenFalse = try parseArgument()
            try expectSymbol(.closeParenthesis)
            return NSExpression(forConditional: condition, trueExpression: whenTrue, falseExpression: whenFalse)
        default:
            break
        }
        if isSymbol(.openParenthesis) {
            return try parseFunctionCall(name, at: token)
        }
        if token.keyword != nil {
            throw PredicateParseFailure(position: token.position, expected: "an expression", found: name)
        }
        return NSExpression(forKeyPath: name)
    }

    /// The printer writes date, UUID, data, URL and non-finite number constants as `CAST(constant, "type")`; such a
    /// cast of a constant parses back as the constant, so that printing and parsing again gives an equal predicate.
    private static func foldedCast(_ value: NSExpression, _ type: NSExpression) -> NSExpression? {
        guard case .constant(let raw?) = value.kind, case .constant(let typeName?) = type.kind,
            let typeName = PredicateValueComparison.string(typeName)
        else { return nil }
        switch typeName {
        case "NSDate":
            guard PredicateNumber(raw) != nil else { return nil }
        case "NSUUID", "NSData", "NSURL":
            guard PredicateValueComparison.string(raw) != nil else { return nil }
        case "NSNumber":
            guard let text = PredicateValueComparison.string(raw), ["inf", "-inf", "nan"].contains(text) else {
                return nil
            }
            return NSExpression(forConstantValue: NSNumber(value: Double(text)!))
        default:
            return nil
        }
        return PredicateBuiltinFunctions.cast(raw, to: typeName).map { NSExpression(forConstantValue: $0) }
    }

    private mutating func parseArgument() throws(PredicateParseFailure) -> NSExpression {
        let position = current.position
        return try requireExpression(try parseExpression(), at: position)
    }

    private mutating func parseArguments() throws(PredicateParseFailure) -> [NSExpression] {
        try expectSymbol(.openParenthesis)
        try enter()
        defer { leave() }
        var arguments: [NSExpression] = []
        if !isSymbol(.closeParenthesis) {
            while true {
                arguments.append(try parseArgument())
                guard isSymbol(.comma) else { break }
                advance()
            }
        }
        try expectSymbol(.closeParenthesis)
        return arguments
    }

    /// `sum(x)`, `now()`, or the printed forms `sum:(x)`, `modulus:by:(a, b)`.
    private mutating func parseFunctionCall(_ name: String, at token: PredicateToken) throws(PredicateParseFailure)
        -> NSExpression
    {
        let arguments = try parseArguments()
        var function = name
        if !name.contains(":") {
            function = arguments.isEmpty ? name : name + ":"
        }
        if PredicateBuiltinFunctions.arity[function] == nil,
            let known = PredicateBuiltinFunctions.arity.keys.first(where: { $0.lowercased() == function.lowercased() })
        {
            function = known
        }
        guard let arity = PredicateBuiltinFunctions.arity[function], arity == arguments.count else {
            throw PredicateParseFailure(
                position: token.position, expected: "a built-in function such as sum, count, max or now",
                found: "\(name) with \(arguments.count) argument(s)")
        }
        return NSExpression(forFunction: function, arguments: arguments)
    }

    private mutating func parseSubquery() throws(PredicateParseFailure) -> NSExpression {
        try expectSymbol(.openParenthesis)
        try enter()
        defer { leave() }
        let collection = try parseArgument()
        try expectSymbol(.comma)
        guard case .variable(let variable) = current.kind else { throw failure("an iterator variable such as $x") }
        advance()
        try expectSymbol(.comma)
        let predicate = try requirePredicate(try parseOr())
        try expectSymbol(.closeParenthesis)
        return NSExpression(forSubquery: collection, usingIteratorVariable: variable, predicate: predicate)
    }

    private mutating func parseFunction() throws(PredicateParseFailure) -> NSExpression {
        try expectSymbol(.openParenthesis)
        try enter()
        defer { leave() }
        let target = try parseArgument()
        try expectSymbol(.comma)
        let selectorToken = current
        let selectorExpression = try parseArgument()
        guard case .constant(let value) = selectorExpression.kind,
            let selector = value.flatMap(PredicateValueComparison.string)
        else {
            throw PredicateParseFailure(
                position: selectorToken.position, expected: "a selector name in quotes", found: selectorToken.display)
        }
        var arguments: [NSExpression] = []
        while isSymbol(.comma) {
            advance()
            arguments.append(try parseArgument())
        }
        try expectSymbol(.closeParenthesis)
        return NSExpression(forFunction: target, selectorName: selector, arguments: arguments)
    }

    /// `FETCH(request, context, countOnly)`: the count flag is a constant (`YES`/`NO`, a number, or an argument).
    private mutating func parseFetch() throws(PredicateParseFailure) -> NSExpression {
        try expectSymbol(.openParenthesis)
        try enter()
        defer { leave() }
        let request = try parseArgument()
        try expectSymbol(.comma)
        let context = try parseArgument()
        try expectSymbol(.comma)
        let flagToken = current
        let flag = try parseArgument()
        guard case .constant(let value) = flag.kind, let number = value.flatMap({ PredicateNumber($0) }) else {
            throw PredicateParseFailure(
                position: flagToken.position, expected: "YES or NO (count only)", found: flagToken.display)
        }
        try expectSymbol(.closeParenthesis)
        return NSFetchRequestExpression(kind: .fetch(request, context: context, countOnly: number.int64Value != 0))
    }

    // MARK: Format arguments

    private mutating func formatArgument(_ conversion: String, at token: PredicateToken) throws(PredicateParseFailure)
        -> NSExpression
    {
        if conversion == "%" { return NSExpression(forConstantValue: "%") }
        guard argumentIndex < arguments.count else {
            throw PredicateParseFailure(
                position: token.position, expected: "an argument for %\(conversion) (argument \(argumentIndex + 1))",
                found: "only \(arguments.count) argument(s)")
        }
        let argument = PredicateValueComparison.unwrap(arguments[argumentIndex])
        argumentIndex += 1
        switch conversion {
        case "@":
            // `NSNull` stays itself, so that the predicate prints it as `<null>`, as Apple's does.
            return NSExpression(forConstantValue: arguments[argumentIndex - 1] is NSNull ? NSNull() : argument)
        case "K":
            guard let argument, let keyPath = PredicateValueComparison.string(argument) else {
                throw PredicateParseFailure(
                    position: token.position, expected: "a key path string for %K",
                    found: argument.map { String(describing: type(of: $0)) } ?? "nil")
            }
            return NSExpression(forKeyPath: keyPath)
        case "d", "i", "u", "o", "x", "X", "c", "C":
            guard let argument, let number = PredicateNumber(argument) else {
                throw PredicateParseFailure(
                    position: token.position, expected: "an integer for %\(conversion)",
                    found: argument.map { String(describing: $0) } ?? "nil")
            }
            return NSExpression(forConstantValue: number.isInteger ? number.object : NSNumber(value: number.int64Value))
        case "f", "e", "E", "g", "G":
            guard let argument, let number = PredicateNumber(argument) else {
                throw PredicateParseFailure(
                    position: token.position, expected: "a number for %\(conversion)",
                    found: argument.map { String(describing: $0) } ?? "nil")
            }
            return NSExpression(forConstantValue: NSNumber(value: number.doubleValue))
        default:  // "s", "S"
            if let argument, let string = PredicateValueComparison.string(argument) {
                return NSExpression(forConstantValue: string)
            }
            if let pointer = argument as? UnsafePointer<CChar> {
                return NSExpression(forConstantValue: String(cString: pointer))
            }
            throw PredicateParseFailure(
                position: token.position, expected: "a string for %\(conversion)",
                found: argument.map { String(describing: $0) } ?? "nil")
        }
    }
}
