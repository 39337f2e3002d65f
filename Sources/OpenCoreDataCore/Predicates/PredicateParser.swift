// A recursive-descent parser for Apple's predicate format language ("Predicate Format String Syntax" and "BNF
// Definition of Cocoa Predicates"). It never backtracks: a parenthesized group is parsed once as "a predicate or an
// expression" and what follows decides which it was, so parsing is linear in the number of tokens. Nesting is
// limited, so that hostile input (`((((…`, `CAST(CAST(…`) ends in an error instead of exhausting the stack, and so is
// the height of the tree made (`a + a + … + a` nests to the left): every consumer of the tree walks it recursively
// (see PredicateTreeHeight).
//
// Precedence, loosest first: OR, AND, NOT, comparison; then UNION/INTERSECT/MINUS, the bitwise `|`, `^` and `&`,
// + -, * /, **, unary minus, postfix (`.key`, `[index]`), primary.

/// Parses format strings into predicates and expressions.
struct PredicateParser {
    /// The deepest nesting accepted — of parentheses, braces, brackets, function calls, NOTs, unary minuses and
    /// assignments — and the highest tree a format may make, so that operators chained left to right count too.
    static let maximumDepth = 100

    /// A parenthesized group is either until what surrounds it decides.
    enum Parsed {
        case predicate(NSPredicate)
        case expression(NSExpression)
    }

    let tokens: [PredicateToken]
    var index = 0
    let arguments: [Any]
    var argumentIndex = 0
    var depth = 0
    /// Whether format arguments become placeholder variables (`PredicateFormatCache`) instead of their values.
    var placeholders = false

    private init(tokens: [PredicateToken], arguments: [Any]) {
        self.tokens = tokens
        self.arguments = arguments
    }

    // MARK: Entry points

    /// Parses a predicate, substituting `arguments` for its format specifiers.
    static func parsePredicate(_ format: String, arguments: [Any]) throws(PredicateParseFailure) -> NSPredicate {
        if !arguments.isEmpty, let predicate = PredicateFormatCache.predicate(format, arguments: arguments) {
            return predicate
        }
        let tokens = try PredicateLexer(format).tokenize()
        var parser = PredicateParser(tokens: tokens, arguments: arguments)
        let parsed = try parser.parseOr()
        let predicate = try parser.requirePredicate(parsed)
        try parser.expectEnd()
        if !arguments.isEmpty {
            PredicateFormatCache.consider(format, tokens: tokens, arguments: arguments, parsed: predicate)
        }
        return predicate
    }

    /// The predicate of `tokens` with each format argument a placeholder variable, or `nil` if it does not parse.
    static func parseTemplate(_ tokens: [PredicateToken], arguments: [Any]) -> NSPredicate? {
        var parser = PredicateParser(tokens: tokens, arguments: arguments)
        parser.placeholders = true
        guard let parsed = try? parser.parseOr(), let predicate = try? parser.requirePredicate(parsed),
            (try? parser.expectEnd()) != nil
        else { return nil }
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

    var current: PredicateToken { tokens[index] }

    mutating func advance() {
        if index < tokens.count - 1 { index += 1 }
    }

    func isSymbol(_ symbol: PredicateSymbol) -> Bool {
        if case .symbol(let found) = tokens[index].kind { return found == symbol }
        return false
    }

    func isKeyword(_ keyword: PredicateKeyword) -> Bool {
        tokens[index].keyword == keyword
    }

    func failure(_ expected: String) -> PredicateParseFailure {
        PredicateParseFailure(position: current.position, expected: expected, found: current.display)
    }

    mutating func expectSymbol(_ symbol: PredicateSymbol) throws(PredicateParseFailure) {
        guard isSymbol(symbol) else { throw failure("\"\(symbol.rawValue)\"") }
        advance()
    }

    func expectEnd() throws(PredicateParseFailure) {
        guard current.kind == .end else { throw failure("an operator, AND, OR or the end of the string") }
    }

    mutating func enter() throws(PredicateParseFailure) {
        depth += 1
        guard depth <= Self.maximumDepth else {
            throw failure("at most \(Self.maximumDepth) levels of nesting")
        }
    }

    mutating func leave() {
        depth -= 1
    }

    /// `expression`, unless it tops a tree higher than `maximumDepth`; `position` is where the operation that made it
    /// starts.
    func bounded<E: NSExpression>(_ expression: E, at position: Int) throws(PredicateParseFailure) -> E {
        guard expression.height > Self.maximumDepth else { return expression }
        throw PredicateParseFailure(
            position: position, expected: "at most \(Self.maximumDepth) levels of nested or chained operations",
            found: "more")
    }

    func bounded<P: NSPredicate>(_ predicate: P, at position: Int) throws(PredicateParseFailure) -> P {
        guard predicate.height > Self.maximumDepth else { return predicate }
        throw PredicateParseFailure(
            position: position, expected: "at most \(Self.maximumDepth) levels of nested or chained operations",
            found: "more")
    }

    func requirePredicate(_ parsed: Parsed) throws(PredicateParseFailure) -> NSPredicate {
        switch parsed {
        case .predicate(let predicate): return predicate
        case .expression: throw failure("an operator such as ==, <, IN, CONTAINS or BEGINSWITH")
        }
    }

    func requireExpression(_ parsed: Parsed, at position: Int) throws(PredicateParseFailure) -> NSExpression {
        switch parsed {
        case .expression(let expression): return expression
        case .predicate:
            throw PredicateParseFailure(position: position, expected: "an expression", found: "a predicate")
        }
    }

    // MARK: Predicates

    mutating func parseOr() throws(PredicateParseFailure) -> Parsed {
        let position = current.position
        let first = try parseAnd()
        guard isKeyword(.or) || isSymbol(.bars) else { return first }
        var subpredicates = [try requirePredicate(first)]
        while isKeyword(.or) || isSymbol(.bars) {
            advance()
            subpredicates.append(try requirePredicate(try parseAnd()))
        }
        return .predicate(try bounded(NSCompoundPredicate(type: .or, subpredicates: subpredicates), at: position))
    }

    mutating func parseAnd() throws(PredicateParseFailure) -> Parsed {
        let position = current.position
        let first = try parseNot()
        guard isKeyword(.and) || isSymbol(.ampersands) else { return first }
        var subpredicates = [try requirePredicate(first)]
        while isKeyword(.and) || isSymbol(.ampersands) {
            advance()
            subpredicates.append(try requirePredicate(try parseNot()))
        }
        return .predicate(try bounded(NSCompoundPredicate(type: .and, subpredicates: subpredicates), at: position))
    }

    mutating func parseNot() throws(PredicateParseFailure) -> Parsed {
        guard isKeyword(.not) || isSymbol(.bang) else { return try parseComparison() }
        let position = current.position
        advance()
        try enter()
        defer { leave() }
        let operand = try requirePredicate(try parseNot())
        return .predicate(try bounded(NSCompoundPredicate(type: .not, subpredicates: [operand]), at: position))
    }

    mutating func parseComparison() throws(PredicateParseFailure) -> Parsed {
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
            guard negated else { return .predicate(comparison) }
            return .predicate(try bounded(NSCompoundPredicate(type: .not, subpredicates: [comparison]), at: position))
        }
        let left = try parseExpression()
        guard case .expression(let expression) = left else { return left }
        guard let (type, options) = try parseOperator() else { return left }
        return .predicate(try parseRightSide(left: expression, type: type, options: options, modifier: .direct))
    }

    mutating func parseRightSide(
        left: NSExpression,
        type: NSComparisonPredicate.Operator,
        options: NSComparisonPredicate.Options,
        modifier: NSComparisonPredicate.Modifier
    ) throws(PredicateParseFailure) -> NSComparisonPredicate {
        let position = current.position
        let right = try requireExpression(try parseExpression(), at: position)
        let comparison = NSComparisonPredicate(
            leftExpression: left, rightExpression: right, modifier: modifier, type: type, options: options)
        return try bounded(comparison, at: position)
    }

    /// The operator and its `[cd]` options, or `nil` when the current token is not an operator.
    mutating func parseOperator() throws(PredicateParseFailure)
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
            throw failure("string options c, d, l or n inside [ ]")
        }
        for letter in letters.lowercased() {
            switch letter {
            case "c": options.insert(.caseInsensitive)
            case "d": options.insert(.diacriticInsensitive)
            case "l": options.insert(.localeSensitive)
            case "n": options.insert(.normalized)
            default: throw failure("string options c, d, l or n inside [ ]")
            }
        }
        advance()
        try expectSymbol(.closeBracket)
        return (type, options)
    }
}
