// The tokenizer of the predicate format language. It reads the format string once, left to right, so that parsing is
// linear in the string's length. Keywords are recognised case-insensitively; a `#` before an identifier makes it a
// key even when it spells a keyword (`#size`). Positions are offsets in the original string, counted in characters,
// for error messages.

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
        case symbol(String)
        case end
    }

    let kind: Kind
    /// The offset of the token's first character in the format string.
    let position: Int

    /// The keyword this token spells, uppercased, if it is an unescaped identifier.
    var keyword: String? {
        if case .identifier(let name, false) = kind { return name.uppercased() }
        return nil
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
        case .symbol(let symbol): return symbol
        case .end: return "the end of the string"
        }
    }
}

/// Splits a format string into tokens.
struct PredicateLexer {
    private let characters: [Character]
    private var index = 0

    init(_ format: String) {
        characters = Array(format)
    }

    /// Every token, ending with `.end`.
    mutating func tokenize() throws(PredicateParseFailure) -> [PredicateToken] {
        var tokens: [PredicateToken] = []
        while true {
            let token = try next()
            tokens.append(token)
            if token.kind == .end { return tokens }
        }
    }

    private func peek(_ offset: Int = 0) -> Character? {
        let position = index + offset
        return position < characters.count ? characters[position] : nil
    }

    private static func isIdentifierStart(_ c: Character) -> Bool {
        // ASCII first: Unicode's letter property is costly, and nearly every key is ASCII.
        if let ascii = c.asciiValue {
            return ascii == UInt8(ascii: "_")
                || (ascii | 0x20 >= UInt8(ascii: "a") && ascii | 0x20 <= UInt8(ascii: "z"))
        }
        return c.isLetter
    }

    private static func isIdentifierPart(_ c: Character) -> Bool {
        if let ascii = c.asciiValue {
            return ascii == UInt8(ascii: "_")
                || (ascii | 0x20 >= UInt8(ascii: "a") && ascii | 0x20 <= UInt8(ascii: "z"))
                || (ascii >= UInt8(ascii: "0") && ascii <= UInt8(ascii: "9"))
        }
        return c.isLetter || c.isNumber
    }

    private mutating func next() throws(PredicateParseFailure) -> PredicateToken {
        while let c = peek(), c.isWhitespace { index += 1 }
        let start = index
        guard let c = peek() else { return PredicateToken(kind: .end, position: start) }

        if Self.isIdentifierStart(c) {
            return PredicateToken(kind: .identifier(readIdentifier(), escaped: false), position: start)
        }
        if c == "#" {
            index += 1
            guard let first = peek(), Self.isIdentifierStart(first) else {
                throw PredicateParseFailure(position: start, expected: "a key after #", found: "#")
            }
            return PredicateToken(kind: .identifier(readIdentifier(), escaped: true), position: start)
        }
        if c == "@" {
            index += 1
            guard let first = peek(), Self.isIdentifierStart(first) else {
                throw PredicateParseFailure(position: start, expected: "a collection operator after @", found: "@")
            }
            return PredicateToken(kind: .atIdentifier(readIdentifier()), position: start)
        }
        if c == "$" {
            index += 1
            guard let first = peek(), Self.isIdentifierStart(first) else {
                throw PredicateParseFailure(position: start, expected: "a variable name after $", found: "$")
            }
            return PredicateToken(kind: .variable(readIdentifier()), position: start)
        }
        if c == "\"" || c == "'" {
            return PredicateToken(kind: .string(try readString(quote: c)), position: start)
        }
        if c.isASCII, c.isNumber {
            return PredicateToken(kind: try readNumber(), position: start)
        }
        if c == ".", let d = peek(1), d.isASCII, d.isNumber {
            return PredicateToken(kind: try readNumber(), position: start)
        }
        if c == "%" {
            return PredicateToken(kind: .formatSpecifier(try readFormatSpecifier()), position: start)
        }
        for symbol in Self.symbols where matches(symbol) {
            index += symbol.count
            return PredicateToken(kind: .symbol(symbol), position: start)
        }
        throw PredicateParseFailure(position: start, expected: "an expression or operator", found: String(c))
    }

    /// Longest first, so that `<=` is not read as `<`.
    private static let symbols = [
        "==", "!=", "<>", "<=", "=<", ">=", "=>", "&&", "||", "**", ":=",
        "=", "<", ">", "!", "(", ")", "{", "}", "[", "]", ",", ".", "+", "-", "*", "/",
    ]

    private func matches(_ symbol: String) -> Bool {
        var offset = 0
        for character in symbol {
            guard peek(offset) == character else { return false }
            offset += 1
        }
        return true
    }

    /// An identifier; a function name may continue with colon-separated parts (`sum:`, `modulus:by:`) when a
    /// parenthesis follows, which is how function expressions print.
    private mutating func readIdentifier() -> String {
        var name = ""
        while let c = peek(), Self.isIdentifierPart(c) {
            name.append(c)
            index += 1
        }
        guard peek() == ":", peek(1) != "=" else { return name }
        let saved = index
        var selector = name
        while peek() == ":" {
            selector.append(":")
            index += 1
            while let c = peek(), Self.isIdentifierPart(c) {
                selector.append(c)
                index += 1
            }
        }
        if peek() == "(" { return selector }
        index = saved
        return name
    }

    private mutating func readString(quote: Character) throws(PredicateParseFailure) -> String {
        let start = index
        index += 1
        var value = ""
        while let c = peek() {
            index += 1
            if c == quote { return value }
            guard c == "\\" else {
                value.append(c)
                continue
            }
            guard let escaped = peek() else { break }
            index += 1
            switch escaped {
            case "n": value.append("\n")
            case "t": value.append("\t")
            case "r": value.append("\r")
            case "0": value.append("\0")
            case "u":
                var hex = ""
                while hex.count < 4, let h = peek(), h.isHexDigit {
                    hex.append(h)
                    index += 1
                }
                guard hex.count == 4, let code = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(code) else {
                    throw PredicateParseFailure(
                        position: index, expected: "four hexadecimal digits after \\u",
                        found: hex)
                }
                value.unicodeScalars.append(scalar)
            case "\\", "\"", "'": value.append(escaped)
            default:
                // Unknown escapes keep their backslash, so that LIKE patterns can escape wildcards (`'a\*'`).
                value.append("\\")
                value.append(escaped)
            }
        }
        throw PredicateParseFailure(
            position: start, expected: "a closing \(quote) for the string",
            found: "the end of the string")
    }

    private mutating func readNumber() throws(PredicateParseFailure) -> PredicateToken.Kind {
        let start = index
        if peek() == "0", let prefix = peek(1), "xXoObB".contains(prefix) {
            let radix = "xX".contains(prefix) ? 16 : ("oO".contains(prefix) ? 8 : 2)
            index += 2
            var digits = ""
            while let c = peek(), c.isHexDigit || c == "_" {
                if c != "_" { digits.append(c) }
                index += 1
            }
            guard !digits.isEmpty, let value = UInt64(digits, radix: radix) else {
                throw PredicateParseFailure(
                    position: start, expected: "a base-\(radix) number",
                    found: String(characters[start..<index]))
            }
            return value > UInt64(Int64.max) ? .unsignedInteger(value) : .integer(Int64(value))
        }
        var text = ""
        var isReal = false
        while let c = peek(), c.isASCII, c.isNumber {
            text.append(c)
            index += 1
        }
        if peek() == ".", let d = peek(1), d.isASCII, d.isNumber {
            isReal = true
            text.append(".")
            index += 1
            while let c = peek(), c.isASCII, c.isNumber {
                text.append(c)
                index += 1
            }
        }
        if let e = peek(), e == "e" || e == "E" {
            var offset = 1
            if let sign = peek(1), sign == "+" || sign == "-" { offset = 2 }
            if let d = peek(offset), d.isASCII, d.isNumber {
                isReal = true
                for _ in 0..<offset {
                    text.append(peek()!)
                    index += 1
                }
                while let c = peek(), c.isASCII, c.isNumber {
                    text.append(c)
                    index += 1
                }
            }
        }
        if !isReal {
            if let value = Int64(text) { return .integer(value) }
            if let value = UInt64(text) { return .unsignedInteger(value) }
        }
        guard let value = Double(text) else {
            throw PredicateParseFailure(position: start, expected: "a number", found: text)
        }
        return .real(value)
    }

    /// `%@`, `%K`, `%%`, and printf conversions with length modifiers (`%d %i %u %ld %lld %lu %hd %qd %f %lf %e %g
    /// %s %c`). Returns the conversion character (`"@"`, `"K"`, `"d"`…).
    private mutating func readFormatSpecifier() throws(PredicateParseFailure) -> String {
        let start = index
        index += 1
        while let c = peek(), "lhqLzjt".contains(c) { index += 1 }
        guard let conversion = peek(), "@K%diouxXfeEgGsScC".contains(conversion) else {
            throw PredicateParseFailure(
                position: start, expected: "a format specifier such as %@, %K or %d",
                found: String(characters[start..<min(index + 1, characters.count)]))
        }
        index += 1
        return String(conversion)
    }
}
