// Expressions of the predicate format language: operators by precedence (UNION/INTERSECT/MINUS, the bitwise
// operators, + -, * /, **, unary minus), postfix key paths and subscripts, primaries (constants, variables, key
// paths, aggregates), function calls, SUBQUERY, FETCH, and the format arguments (%@, %K, %d…) they take.

extension PredicateParser {
    mutating func parseExpression() throws(PredicateParseFailure) -> Parsed {
        var left = try parseBinary()
        while true {
            let make: (NSExpression, NSExpression) -> NSExpression
            switch current.keyword {
            case .union?: make = { NSExpression(forUnionSet: $0, with: $1) }
            case .intersect?: make = { NSExpression(forIntersectSet: $0, with: $1) }
            case .minus?: make = { NSExpression(forMinusSet: $0, with: $1) }
            default: return left
            }
            guard case .expression(let lhs) = left else { return left }
            let operation = current.position
            advance()
            let position = current.position
            let rhs = try requireExpression(try parseBinary(), at: position)
            left = .expression(try bounded(make(lhs, rhs), at: operation))
        }
    }

    /// The binary operators between set operations and unary minus, with their functions, loosest first: `|`, `^`,
    /// `&` (bitwise, as in C), `+ -`, `* /`, `**`. All associate to the left.
    func binaryOperator() -> (function: String, precedence: Int)? {
        guard case .symbol(let symbol) = current.kind else { return nil }
        switch symbol {
        case .bar: return ("bitwiseOr:with:", 1)
        case .caret: return ("bitwiseXor:with:", 2)
        case .ampersand: return ("bitwiseAnd:with:", 3)
        case .plus: return ("add:to:", 4)
        case .minus: return ("from:subtract:", 4)
        case .star: return ("multiply:by:", 5)
        case .slash: return ("divide:by:", 5)
        case .stars: return ("raise:toPower:", 6)
        default: return nil
        }
    }

    /// Binary operators of at least `minimum` precedence, by precedence climbing: a chain of one precedence is a
    /// loop, and only a tighter operator on the right recurses (at most once per precedence level).
    mutating func parseBinary(_ minimum: Int = 1) throws(PredicateParseFailure) -> Parsed {
        var left = try parseUnary()
        while let (function, precedence) = binaryOperator(), precedence >= minimum {
            guard case .expression(let lhs) = left else { return left }
            let operation = current.position
            advance()
            let position = current.position
            let rhs = try requireExpression(try parseBinary(precedence + 1), at: position)
            left = .expression(try bounded(NSExpression(forFunction: function, arguments: [lhs, rhs]), at: operation))
        }
        return left
    }

    mutating func parseUnary() throws(PredicateParseFailure) -> Parsed {
        guard isSymbol(.minus) else { return try parsePostfix() }
        let operation = current.position
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
        return .expression(
            try bounded(NSExpression(forFunction: "from:subtract:", arguments: [zero, operand]), at: operation))
    }

    mutating func parsePostfix() throws(PredicateParseFailure) -> Parsed {
        var parsed = try parsePrimary()
        while case .expression(let base) = parsed {
            let operation = current.position
            if isSymbol(.dot) {
                // A run of keys is collected first and joined once: extending the path key by key would copy it for
                // every key, which is quadratic in a long path.
                var keys: [String] = []
                while isSymbol(.dot) {
                    advance()
                    switch current.kind {
                    case .identifier(let name, _): keys.append(name)
                    case .atIdentifier(let name): keys.append("@" + name)
                    default: throw failure("a key after \".\"")
                    }
                    advance()
                }
                parsed = .expression(try bounded(Self.appendKeys(keys, to: base), at: operation))
            } else if isSymbol(.openBracket) {
                advance()
                try enter()
                defer { leave() }
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
                let indexed = NSExpression(forFunction: "objectFrom:withIndex:", arguments: [base, indexExpression])
                parsed = .expression(try bounded(indexed, at: operation))
            } else {
                break
            }
        }
        return parsed
    }

    /// `base.k1.k2…`: extends a key path, or reads a key path of another expression's value (`$x.a.b`).
    static func appendKeys(_ keys: [String], to base: NSExpression) -> NSExpression {
        let path = keys.joined(separator: ".")
        switch base.kind {
        case .keyPath(let basePath, let components, let operand):
            return NSExpression(
                kind: .keyPath(basePath + "." + path, components: components + keys, operand: operand))
        case .evaluatedObject:
            return NSExpression(kind: .keyPath(path, components: keys, operand: nil))
        default:
            return NSExpression(kind: .keyPath(path, components: keys, operand: base))
        }
    }

    mutating func parsePrimary() throws(PredicateParseFailure) -> Parsed {
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
            return .expression(try bounded(NSExpression(forAggregate: elements), at: token.position))
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
            try enter()
            defer { leave() }
            let position = current.position
            let value = try requireExpression(try parseExpression(), at: position)
            return .expression(try bounded(NSExpression(kind: .assignment(name, value)), at: token.position))
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

    mutating func parseIdentifier(_ name: String, at token: PredicateToken) throws(PredicateParseFailure)
        -> NSExpression
    {
        switch token.keyword {
        case .null?, .nilValue?: return NSExpression(forConstantValue: nil)
        case .trueValue?, .yes?: return NSExpression(forConstantValue: NSNumber(value: true))
        case .falseValue?, .no?: return NSExpression(forConstantValue: NSNumber(value: false))
        case .selfValue?: return NSExpression.expressionForEvaluatedObject()
        case .anyKey?: return NSExpression.expressionForAnyKey()
        case .subquery?: return try bounded(try parseSubquery(), at: token.position)
        case .function?: return try bounded(try parseFunction(), at: token.position)
        case .fetch?: return try bounded(try parseFetch(), at: token.position)
        case .cast?:
            try expectSymbol(.openParenthesis)
            try enter()
            defer { leave() }
            let value = try parseArgument()
            try expectSymbol(.comma)
            let type = try parseArgument()
            try expectSymbol(.closeParenthesis)
            if let constant = Self.foldedCast(value, type) { return constant }
            return try bounded(
                NSExpression(forFunction: "castObject:toType:", arguments: [value, type]), at: token.position)
        case .ternary?:
            try expectSymbol(.openParenthesis)
            try enter()
            defer { leave() }
            let condition = try requirePredicate(try parseOr())
            try expectSymbol(.comma)
            let whenTrue = try parseArgument()
            try expectSymbol(.comma)
            let whenFalse = try parseArgument()
            try expectSymbol(.closeParenthesis)
            let conditional = NSExpression(
                forConditional: condition, trueExpression: whenTrue, falseExpression: whenFalse)
            return try bounded(conditional, at: token.position)
        default:
            break
        }
        if isSymbol(.openParenthesis) {
            return try bounded(try parseFunctionCall(name, at: token), at: token.position)
        }
        if token.keyword != nil {
            throw PredicateParseFailure(position: token.position, expected: "an expression", found: name)
        }
        return NSExpression(forKeyPath: name)
    }

    /// The printer writes date, UUID, data, URL and non-finite number constants as `CAST(constant, "type")`; such a
    /// cast of a constant parses back as the constant, so that printing and parsing again gives an equal predicate.
    static func foldedCast(_ value: NSExpression, _ type: NSExpression) -> NSExpression? {
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

    mutating func parseArgument() throws(PredicateParseFailure) -> NSExpression {
        let position = current.position
        return try requireExpression(try parseExpression(), at: position)
    }

    mutating func parseArguments() throws(PredicateParseFailure) -> [NSExpression] {
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
    mutating func parseFunctionCall(_ name: String, at token: PredicateToken) throws(PredicateParseFailure)
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

    mutating func parseSubquery() throws(PredicateParseFailure) -> NSExpression {
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

    mutating func parseFunction() throws(PredicateParseFailure) -> NSExpression {
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
    mutating func parseFetch() throws(PredicateParseFailure) -> NSExpression {
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

    mutating func formatArgument(_ conversion: String, at token: PredicateToken) throws(PredicateParseFailure)
        -> NSExpression
    {
        if conversion == "%" { return NSExpression(forConstantValue: "%") }
        guard argumentIndex < arguments.count else {
            throw PredicateParseFailure(
                position: token.position, expected: "an argument for %\(conversion) (argument \(argumentIndex + 1))",
                found: "only \(arguments.count) argument(s)")
        }
        argumentIndex += 1
        if placeholders, conversion != "K" {
            return NSExpression(forVariable: PredicateFormatCache.placeholder(argumentIndex - 1))
        }
        return try Self.argumentExpression(arguments[argumentIndex - 1], conversion, at: token)
    }

    /// The expression a format argument becomes for its conversion (`@`, `K`, `d`, `f`, `s`…).
    static func argumentExpression(_ raw: Any, _ conversion: String, at token: PredicateToken)
        throws(PredicateParseFailure) -> NSExpression
    {
        var classified: PredicateValueComparison.Classified?
        return try argumentExpression(raw, conversion, at: token, classified: &classified)
    }

    /// `argumentExpression(_:_:at:)`, and the constant as a comparison classifies it (`classify`) where a number
    /// conversion made it, so that the format cache's comparisons need not classify it again (`nil` otherwise).
    static func argumentExpression(
        _ raw: Any, _ conversion: String, at token: PredicateToken,
        classified: inout PredicateValueComparison.Classified?
    ) throws(PredicateParseFailure) -> NSExpression {
        let argument = PredicateValueComparison.unwrap(raw)
        switch conversion {
        case "@":
            // `NSNull` stays itself, so that the predicate prints it as `<null>`, as Apple's does. Asked of the
            // argument's type: `is NSNull` on a Swift array first bridges the whole array to an `NSArray` of objects
            // (2.8 million instructions for 1,000 numbers).
            let isNull = type(of: raw) is NSNull.Type
            return NSExpression(forConstantValue: isNull ? NSNull() : argument)
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
            // Made from the kind, not `forConstantValue`: a number needs no unwrapping. An `NSNumber` of an `Int64`
            // classifies as that integer; others are left to the comparison.
            if case .int = number { classified = .number(number) }
            return NSExpression(kind: .constant(number.isInteger ? number.object : NSNumber(value: number.int64Value)))
        case "f", "e", "E", "g", "G":
            guard let argument, let number = PredicateNumber(argument) else {
                throw PredicateParseFailure(
                    position: token.position, expected: "a number for %\(conversion)",
                    found: argument.map { String(describing: $0) } ?? "nil")
            }
            let value = number.doubleValue
            classified = .number(.double(value))
            return NSExpression(kind: .constant(NSNumber(value: value)))
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
