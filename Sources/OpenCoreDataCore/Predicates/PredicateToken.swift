/// One token of a predicate format string.
struct PredicateToken {
    enum Kind: Equatable {
        /// A key (or a keyword, when `escaped` is false and the spelling is reserved).
        case identifier(String, escaped: Bool)
        /// `@count`, `@sum`… inside a key path.
        case atIdentifier(String)
        case string(String)
        case integer(Int64)
        case unsignedInteger(UInt64)
        case real(Double)
        /// `$name`
        case variable(String)
        /// `%@`, `%K`, `%d`…: the conversion character(s) after `%`, without length modifiers.
        case formatSpecifier(String)
        /// Punctuation and operators: `( ) { } [ ] , . == != < <= > >= && || ! + - * / ** :=`…
        case symbol(PredicateSymbol)
        case end
    }

    let kind: Kind
    /// The offset of the token's first character in the format string.
    let position: Int
    /// The keyword an unescaped identifier spells, in any case.
    let keyword: PredicateKeyword?

    init(kind: Kind, position: Int, keyword: PredicateKeyword? = nil) {
        self.kind = kind
        self.position = position
        self.keyword = keyword
    }

    /// A short description for error messages.
    var display: String {
        switch kind {
        case .identifier(let name, let escaped): return escaped ? "#\(name)" : name
        case .atIdentifier(let name): return "@\(name)"
        case .string(let value): return PredicatePrinter.stringLiteral(value)
        case .integer(let value): return String(value)
        case .unsignedInteger(let value): return String(value)
        case .real(let value): return String(value)
        case .variable(let name): return "$\(name)"
        case .formatSpecifier(let specifier): return "%\(specifier)"
        case .symbol(let symbol): return symbol.rawValue
        case .end: return "the end of the string"
        }
    }
}

/// The punctuation and operators of the format language.
enum PredicateSymbol: String {
    case openParenthesis = "("
    case closeParenthesis = ")"
    case openBrace = "{"
    case closeBrace = "}"
    case openBracket = "["
    case closeBracket = "]"
    case comma = ","
    case dot = "."
    case equals = "="
    case equalsEquals = "=="
    case bangEquals = "!="
    case lessGreater = "<>"
    case less = "<"
    case lessEquals = "<="
    case equalsLess = "=<"
    case greater = ">"
    case greaterEquals = ">="
    case equalsGreater = "=>"
    case ampersands = "&&"
    case bars = "||"
    case bang = "!"
    case plus = "+"
    case minus = "-"
    case star = "*"
    case slash = "/"
    case stars = "**"
    case colonEquals = ":="
}
