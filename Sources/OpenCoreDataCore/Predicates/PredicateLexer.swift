// The tokenizer of the predicate format language. It reads the format string once, left to right, so that parsing is
// linear in the string's length. Keywords are recognised case-insensitively; a `#` before an identifier makes it a
// key even when it spells a keyword (`#size`). Positions are offsets in the original string, counted in characters,
// for error messages.
//
// The language is read character by character (grapheme clusters), but its punctuation, digits and keywords are all
// ASCII, and nearly every format string is too. So the lexer walks the UTF-8 bytes and takes an ASCII byte as a whole
// character whenever nothing after it can join it into a larger one; only non-ASCII text (keys and strings in other
// scripts, Unicode whitespace, combining marks, CR LF) is read as `Character`s, with their Unicode properties. Tokens,
// values and positions are the same as a reading of `Array(format)` would give.

/// Splits a format string into tokens.
struct PredicateLexer {
    private let format: String

    init(_ format: String) {
        self.format = format
    }

    /// Every token, ending with `.end`.
    func tokenize() throws(PredicateParseFailure) -> [PredicateToken] {
        var contiguous = format
        // Native strings are contiguous UTF-8 already; a bridged one is copied once.
        if !contiguous.isContiguousUTF8 { contiguous.makeContiguousUTF8() }
        let format = contiguous
        let result = format.utf8.withContiguousStorageIfAvailable { bytes in
            var reader = Reader(format: format, bytes: bytes)
            return reader.tokenize()
        }
        guard let result else { preconditionFailure("a contiguous UTF-8 string has contiguous storage") }
        return try result.get()
    }

    // MARK: Character classes

    fileprivate static func isIdentifierStart(_ c: Character) -> Bool {
        if let ascii = c.asciiValue { return isIdentifierStart(ascii) }
        return c.isLetter
    }

    fileprivate static func isIdentifierPart(_ c: Character) -> Bool {
        if let ascii = c.asciiValue { return isIdentifierPart(ascii) }
        return c.isLetter || c.isNumber
    }

    fileprivate static func isIdentifierStart(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "_") || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z"))
    }

    fileprivate static func isIdentifierPart(_ byte: UInt8) -> Bool {
        isIdentifierStart(byte) || isDigit(byte)
    }

    fileprivate static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    fileprivate static func isHexDigit(_ byte: UInt8) -> Bool {
        isDigit(byte) || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "f"))
    }

    /// Unicode's White_Space among ASCII: tab, line feed, vertical tab, form feed, carriage return and space.
    fileprivate static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || (byte >= 0x09 && byte <= 0x0D)
    }
}

/// The lexer's state while it walks the bytes of a contiguous UTF-8 string.
private struct Reader {
    let format: String
    let bytes: UnsafeBufferPointer<UInt8>
    /// The byte where the next character starts; always on a character boundary.
    var offset = 0
    /// The same place counted in characters, which is what token positions are.
    var column = 0

    init(format: String, bytes: UnsafeBufferPointer<UInt8>) {
        self.format = format
        self.bytes = bytes
    }

    mutating func tokenize() -> Result<[PredicateToken], PredicateParseFailure> {
        var tokens: [PredicateToken] = []
        // A token takes about four bytes in typical formats; reserving that avoids most regrowth.
        tokens.reserveCapacity(bytes.count / 4 + 2)
        do {
            while true {
                let token = try next()
                let isEnd = if case .end = token.kind { true } else { false }
                tokens.append(token)
                if isEnd { return .success(tokens) }
            }
        } catch {
            return .failure(error)
        }
    }

    // MARK: Characters

    /// The byte at `offset` when the character starting there is that one ASCII scalar; `nil` at the end and for any
    /// other character: a non-ASCII one, CR LF, or an ASCII scalar that combining marks after it extend.
    @inline(__always)
    func ascii(at offset: Int) -> UInt8? {
        guard offset < bytes.count else { return nil }
        let byte = bytes[offset]
        guard byte < 0x80 else { return nil }
        let after = offset + 1
        guard after < bytes.count else { return byte }
        let next = bytes[after]
        if next < 0x80 { return byte == 0x0D && next == 0x0A ? nil : byte }
        return standsAlone(byte, at: offset) ? byte : nil
    }

    /// Whether the ASCII `byte` at `offset`, which a non-ASCII scalar follows, is a character by itself.
    @inline(never)
    private func standsAlone(_ byte: UInt8, at offset: Int) -> Bool {
        // Nothing attaches to a control character, nor is anything in U+0080…U+02FF (lead bytes up to 0xCB) an
        // extending scalar; past that, grapheme breaking decides.
        if bytes[offset + 1] <= 0xCB || byte < 0x20 || byte == 0x7F { return true }
        return character(at: offset).end == offset + 1
    }

    /// The character that starts at `offset`, which must be before the end, and where the next one starts.
    func character(at offset: Int) -> (character: Character, end: Int) {
        let lead = bytes[offset]
        if lead == 0x0D, offset + 1 < bytes.count, bytes[offset + 1] == 0x0A { return ("\r\n", offset + 2) }
        if lead >= 0xC2, lead <= 0xCB {
            // A scalar in U+0080…U+02FF followed by the end, ASCII or another such scalar is a character on its own,
            // which covers accented Latin text without asking the string for grapheme boundaries.
            let end = offset + 2
            if end == bytes.count || bytes[end] <= 0xCB {
                let value = UInt32(lead & 0x1F) << 6 | UInt32(bytes[offset + 1] & 0x3F)
                return (Character(Unicode.Scalar(value).unsafelyUnwrapped), end)
            }
        }
        // The subscript reads the grapheme cluster from this boundary forward without rounding the index, as
        // iterating the string's characters does.
        let character = format[format.utf8.index(format.utf8.startIndex, offsetBy: offset)]
        return (character, offset + character.utf8.count)
    }

    /// Moves past the ASCII character at `offset`.
    mutating func advance() {
        offset += 1
        column += 1
    }

    /// Moves past a character that ends at `end`.
    mutating func advance(to end: Int) {
        offset = end
        column += 1
    }

    func isDigit(at offset: Int) -> Bool {
        ascii(at: offset).map(PredicateLexer.isDigit) ?? false
    }

    func startsIdentifier(at offset: Int) -> Bool {
        if let byte = ascii(at: offset) { return PredicateLexer.isIdentifierStart(byte) }
        return offset < bytes.count && PredicateLexer.isIdentifierStart(character(at: offset).character)
    }

    /// The text of a range of bytes that starts and ends on character boundaries.
    func text(_ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    // MARK: Tokens

    mutating func next() throws(PredicateParseFailure) -> PredicateToken {
        skipWhitespace()
        let start = column
        guard offset < bytes.count else { return PredicateToken(kind: .end, position: start) }
        guard let byte = ascii(at: offset) else {
            let character = character(at: offset).character
            guard PredicateLexer.isIdentifierStart(character) else {
                throw PredicateParseFailure(
                    position: start, expected: "an expression or operator", found: String(character))
            }
            return readKeyOrKeyword(position: start)
        }
        if PredicateLexer.isIdentifierStart(byte) { return readKeyOrKeyword(position: start) }
        switch byte {
        case UInt8(ascii: "#"), UInt8(ascii: "@"), UInt8(ascii: "$"):
            advance()
            guard startsIdentifier(at: offset) else {
                let expected =
                    switch byte {
                    case UInt8(ascii: "#"): "a key after #"
                    case UInt8(ascii: "@"): "a collection operator after @"
                    default: "a variable name after $"
                    }
                throw PredicateParseFailure(position: start, expected: expected, found: String(UnicodeScalar(byte)))
            }
            let name = text(readIdentifier())
            let kind: PredicateToken.Kind =
                switch byte {
                case UInt8(ascii: "#"): .identifier(name, escaped: true)
                case UInt8(ascii: "@"): .atIdentifier(name)
                default: .variable(name)
                }
            return PredicateToken(kind: kind, position: start)
        case UInt8(ascii: "\""), UInt8(ascii: "'"):
            return PredicateToken(kind: .string(try readString(quote: byte)), position: start)
        case UInt8(ascii: "0")...UInt8(ascii: "9"):
            return PredicateToken(kind: try readNumber(), position: start)
        case UInt8(ascii: ".") where isDigit(at: offset + 1):
            return PredicateToken(kind: try readNumber(), position: start)
        case UInt8(ascii: "%"):
            return PredicateToken(kind: .formatSpecifier(try readFormatSpecifier()), position: start)
        case UInt8(ascii: "<") where bytes[offset...].starts(with: "<null>".utf8):
            // How `NSNull` constants print (its description): read back as the null constant it stands for.
            offset += 6
            column += 6
            return PredicateToken(kind: .identifier("nil", escaped: false), position: start, keyword: .nilValue)
        default:
            return PredicateToken(kind: .symbol(try readSymbol(byte)), position: start)
        }
    }

    private mutating func skipWhitespace() {
        while offset < bytes.count {
            if let byte = ascii(at: offset) {
                guard PredicateLexer.isWhitespace(byte) else { return }
                advance()
            } else {
                let (character, end) = character(at: offset)
                guard character.isWhitespace else { return }
                advance(to: end)
            }
        }
    }

    /// Operators of two characters first, so that `<=` is not read as `<`.
    private mutating func readSymbol(_ first: UInt8) throws(PredicateParseFailure) -> PredicateSymbol {
        let pair: PredicateSymbol? =
            switch (first, ascii(at: offset + 1)) {
            case (UInt8(ascii: "="), UInt8(ascii: "=")): .equalsEquals
            case (UInt8(ascii: "!"), UInt8(ascii: "=")): .bangEquals
            case (UInt8(ascii: "<"), UInt8(ascii: ">")): .lessGreater
            case (UInt8(ascii: "<"), UInt8(ascii: "=")): .lessEquals
            case (UInt8(ascii: "="), UInt8(ascii: "<")): .equalsLess
            case (UInt8(ascii: ">"), UInt8(ascii: "=")): .greaterEquals
            case (UInt8(ascii: "="), UInt8(ascii: ">")): .equalsGreater
            case (UInt8(ascii: "&"), UInt8(ascii: "&")): .ampersands
            case (UInt8(ascii: "|"), UInt8(ascii: "|")): .bars
            case (UInt8(ascii: "*"), UInt8(ascii: "*")): .stars
            case (UInt8(ascii: ":"), UInt8(ascii: "=")): .colonEquals
            default: nil
            }
        if let pair {
            offset += 2
            column += 2
            return pair
        }
        let single: PredicateSymbol? =
            switch first {
            case UInt8(ascii: "="): .equals
            case UInt8(ascii: "<"): .less
            case UInt8(ascii: ">"): .greater
            case UInt8(ascii: "!"): .bang
            case UInt8(ascii: "("): .openParenthesis
            case UInt8(ascii: ")"): .closeParenthesis
            case UInt8(ascii: "{"): .openBrace
            case UInt8(ascii: "}"): .closeBrace
            case UInt8(ascii: "["): .openBracket
            case UInt8(ascii: "]"): .closeBracket
            case UInt8(ascii: ","): .comma
            case UInt8(ascii: "."): .dot
            case UInt8(ascii: "+"): .plus
            case UInt8(ascii: "-"): .minus
            case UInt8(ascii: "*"): .star
            case UInt8(ascii: "/"): .slash
            default: nil
            }
        guard let single else {
            throw PredicateParseFailure(
                position: column, expected: "an expression or operator", found: String(UnicodeScalar(first)))
        }
        advance()
        return single
    }

    private mutating func skipIdentifierParts() {
        while offset < bytes.count {
            // A run of ASCII letters, digits and underscores is one character per byte, except that a non-ASCII
            // scalar after the run may extend its last byte; that byte is then read again as a character below.
            var end = offset
            while end < bytes.count, bytes[end] < 0x80, PredicateLexer.isIdentifierPart(bytes[end]) { end += 1 }
            if end == bytes.count || bytes[end] < 0x80 {
                column += end - offset
                offset = end
                return
            }
            if end > offset {
                column += end - 1 - offset
                offset = end - 1
            }
            if let byte = ascii(at: offset) {
                guard PredicateLexer.isIdentifierPart(byte) else { return }
                advance()
            } else {
                let (character, end) = character(at: offset)
                guard PredicateLexer.isIdentifierPart(character) else { return }
                advance(to: end)
            }
        }
    }

    /// An unescaped identifier: a key, or a keyword in any case.
    private mutating func readKeyOrKeyword(position: Int) -> PredicateToken {
        let range = readIdentifier()
        let name = text(range)
        let keyword = PredicateKeyword.keyword(utf8: bytes[range], name: name)
        return PredicateToken(kind: .identifier(name, escaped: false), position: position, keyword: keyword)
    }

    /// The bytes of an identifier; a function name may continue with colon-separated parts (`sum:`, `modulus:by:`)
    /// when a parenthesis follows, which is how function expressions print.
    private mutating func readIdentifier() -> Range<Int> {
        let start = offset
        skipIdentifierParts()
        guard ascii(at: offset) == UInt8(ascii: ":"), ascii(at: offset + 1) != UInt8(ascii: "=") else {
            return start..<offset
        }
        let (end, endColumn) = (offset, column)
        while ascii(at: offset) == UInt8(ascii: ":") {
            advance()
            skipIdentifierParts()
        }
        if ascii(at: offset) == UInt8(ascii: "(") { return start..<offset }
        (offset, column) = (end, endColumn)
        return start..<end
    }

    private mutating func readString(quote: UInt8) throws(PredicateParseFailure) -> String {
        let start = column
        advance()
        var value = ""
        // Text without escapes is copied a run at a time.
        var run = offset
        while offset < bytes.count {
            guard let byte = ascii(at: offset) else {
                advance(to: character(at: offset).end)
                continue
            }
            if byte == quote {
                value += text(run..<offset)
                advance()
                return value
            }
            guard byte == UInt8(ascii: "\\") else {
                advance()
                continue
            }
            value += text(run..<offset)
            advance()
            guard offset < bytes.count else { break }
            if let escaped = ascii(at: offset) {
                advance()
                switch escaped {
                case UInt8(ascii: "n"): value.append("\n")
                case UInt8(ascii: "t"): value.append("\t")
                case UInt8(ascii: "r"): value.append("\r")
                case UInt8(ascii: "0"): value.append("\0")
                case UInt8(ascii: "u"): value.unicodeScalars.append(try readUnicodeEscape())
                case UInt8(ascii: "\\"), UInt8(ascii: "\""), UInt8(ascii: "'"):
                    value.unicodeScalars.append(UnicodeScalar(escaped))
                default:
                    // Unknown escapes keep their backslash, so that LIKE patterns can escape wildcards (`'a\*'`).
                    value.append("\\")
                    value.unicodeScalars.append(UnicodeScalar(escaped))
                }
            } else {
                let (escaped, end) = character(at: offset)
                advance(to: end)
                value.append("\\")
                value.append(escaped)
            }
            run = offset
        }
        throw PredicateParseFailure(
            position: start, expected: "a closing \(UnicodeScalar(quote)) for the string",
            found: "the end of the string")
    }

    /// The four hexadecimal digits after `\u`.
    private mutating func readUnicodeEscape() throws(PredicateParseFailure) -> Unicode.Scalar {
        var hex = ""
        var digits = 0
        while digits < 4, offset < bytes.count {
            if let byte = ascii(at: offset) {
                guard PredicateLexer.isHexDigit(byte) else { break }
                hex.unicodeScalars.append(UnicodeScalar(byte))
                advance()
            } else {
                // Fullwidth digits are hexadecimal digits too; they fail the conversion below, as they always have.
                let (character, end) = character(at: offset)
                guard character.isHexDigit else { break }
                hex.append(character)
                advance(to: end)
            }
            digits += 1
        }
        guard digits == 4, let code = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(code) else {
            throw PredicateParseFailure(
                position: column, expected: "four hexadecimal digits after \\u", found: hex)
        }
        return scalar
    }

    private mutating func readNumber() throws(PredicateParseFailure) -> PredicateToken.Kind {
        let start = offset
        let startColumn = column
        if bytes[offset] == UInt8(ascii: "0"), let prefix = ascii(at: offset + 1), let radix = Self.radix(prefix) {
            offset += 2
            column += 2
            var digits = ""
            while offset < bytes.count {
                if let byte = ascii(at: offset) {
                    guard PredicateLexer.isHexDigit(byte) || byte == UInt8(ascii: "_") else { break }
                    if byte != UInt8(ascii: "_") { digits.unicodeScalars.append(UnicodeScalar(byte)) }
                    advance()
                } else {
                    let (character, end) = character(at: offset)
                    guard character.isHexDigit else { break }
                    digits.append(character)
                    advance(to: end)
                }
            }
            guard !digits.isEmpty, let value = UInt64(digits, radix: radix) else {
                throw PredicateParseFailure(
                    position: startColumn, expected: "a base-\(radix) number", found: text(start..<offset))
            }
            return value > UInt64(Int64.max) ? .unsignedInteger(value) : .integer(Int64(value))
        }
        var isReal = false
        skipDigits()
        if ascii(at: offset) == UInt8(ascii: "."), isDigit(at: offset + 1) {
            isReal = true
            advance()
            skipDigits()
        }
        if let e = ascii(at: offset), e | 0x20 == UInt8(ascii: "e") {
            var after = offset + 1
            if let sign = ascii(at: after), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { after += 1 }
            if isDigit(at: after) {
                isReal = true
                column += after - offset
                offset = after
                skipDigits()
            }
        }
        if !isReal, let value = integer(start..<offset) {
            return value > UInt64(Int64.max) ? .unsignedInteger(value) : .integer(Int64(value))
        }
        let text = text(start..<offset)
        guard let value = Double(text) else {
            throw PredicateParseFailure(position: startColumn, expected: "a number", found: text)
        }
        return .real(value)
    }

    private static func radix(_ prefix: UInt8) -> Int? {
        switch prefix | 0x20 {
        case UInt8(ascii: "x"): 16
        case UInt8(ascii: "o"): 8
        case UInt8(ascii: "b"): 2
        default: nil
        }
    }

    private mutating func skipDigits() {
        while isDigit(at: offset) { advance() }
    }

    /// The value of a run of decimal digits, or `nil` when it does not fit in 64 bits.
    private func integer(_ range: Range<Int>) -> UInt64? {
        var value: UInt64 = 0
        for byte in bytes[range] {
            let (product, multiplyOverflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, addOverflow) = product.addingReportingOverflow(UInt64(byte &- UInt8(ascii: "0")))
            if multiplyOverflow || addOverflow { return nil }
            value = sum
        }
        return value
    }

    /// `%@`, `%K`, `%%`, and printf conversions with length modifiers (`%d %i %u %ld %lld %lu %hd %qd %f %lf %e %g
    /// %s %c`). Returns the conversion character (`"@"`, `"K"`, `"d"`…).
    private mutating func readFormatSpecifier() throws(PredicateParseFailure) -> String {
        let start = offset
        let startColumn = column
        advance()
        while let byte = ascii(at: offset), Self.isLengthModifier(byte) { advance() }
        var end = offset
        if let byte = ascii(at: offset) {
            end += 1
            if Self.isConversion(byte) {
                let conversion = text(offset..<end)
                advance()
                return conversion
            }
        } else if offset < bytes.count {
            let character: Character
            (character, end) = self.character(at: offset)
            // Compared as characters, so that a character equivalent to one of these (the Kelvin sign is a K) counts.
            if "@K%diouxXfeEgGsScC".contains(character) {
                advance(to: end)
                return String(character)
            }
        }
        throw PredicateParseFailure(
            position: startColumn, expected: "a format specifier such as %@, %K or %d", found: text(start..<end))
    }

    private static func isLengthModifier(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "l"), UInt8(ascii: "h"), UInt8(ascii: "q"), UInt8(ascii: "L"), UInt8(ascii: "z"),
            UInt8(ascii: "j"), UInt8(ascii: "t"):
            true
        default: false
        }
    }

    private static func isConversion(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "@"), UInt8(ascii: "K"), UInt8(ascii: "%"), UInt8(ascii: "d"), UInt8(ascii: "i"),
            UInt8(ascii: "o"), UInt8(ascii: "u"), UInt8(ascii: "x"), UInt8(ascii: "X"), UInt8(ascii: "f"),
            UInt8(ascii: "e"), UInt8(ascii: "E"), UInt8(ascii: "g"), UInt8(ascii: "G"), UInt8(ascii: "s"),
            UInt8(ascii: "S"), UInt8(ascii: "c"), UInt8(ascii: "C"):
            true
        default: false
        }
    }
}
