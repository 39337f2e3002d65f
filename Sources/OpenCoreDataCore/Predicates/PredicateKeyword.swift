// The reserved words of the predicate format language. The lexer recognises them once per identifier token, so that
// the parser's many keyword checks compare small enum values instead of uppercasing the token's text each time; the
// printer escapes a key that spells one with `#`.

/// A reserved word, spelled in upper case; format strings may use any case. Cases that would clash with Swift's
/// keywords or `Optional`'s cases have longer names.
enum PredicateKeyword: String, CaseIterable {
    case and = "AND"
    case or = "OR"
    case `in` = "IN"
    case not = "NOT"
    case allOf = "ALL"
    case anyOf = "ANY"
    case someOf = "SOME"
    case noneOf = "NONE"
    case like = "LIKE"
    case caseInsensitive = "CASEINSENSITIVE"
    case ci = "CI"
    case matches = "MATCHES"
    case contains = "CONTAINS"
    case beginsWith = "BEGINSWITH"
    case endsWith = "ENDSWITH"
    case between = "BETWEEN"
    case null = "NULL"
    case nilValue = "NIL"
    case selfValue = "SELF"
    case trueValue = "TRUE"
    case yes = "YES"
    case falseValue = "FALSE"
    case no = "NO"
    case first = "FIRST"
    case last = "LAST"
    case size = "SIZE"
    case anyKey = "ANYKEY"
    case subquery = "SUBQUERY"
    case fetch = "FETCH"
    case cast = "CAST"
    case truePredicate = "TRUEPREDICATE"
    case falsePredicate = "FALSEPREDICATE"
    case function = "FUNCTION"
    case ternary = "TERNARY"
    case union = "UNION"
    case intersect = "INTERSECT"
    case minus = "MINUS"

    /// The keyword `name` spells in any case: the one equal to `name.uppercased()`.
    init?(spelling name: String) {
        guard let keyword = Self.keyword(utf8: name.utf8, name: name) else { return nil }
        self = keyword
    }

    /// The keyword the UTF-8 `bytes` of `name()` spell in any case.
    static func keyword(utf8 bytes: some Sequence<UInt8>, name: @autoclosure () -> String) -> PredicateKeyword? {
        switch Spelling(bytes) {
        case .letters(let low, let high): return table.keyword(low, high)
        case .notAKeyword: return nil
        // Unicode case mapping and canonical equivalence can turn other text into a keyword (`ın` uppercases to
        // `IN`), so such names take the slow path that `uppercased()` and `String` equality define.
        case .nonASCII: return PredicateKeyword(rawValue: name().uppercased())
        }
    }

    /// A name's ASCII letters folded to upper case and packed into two words, which is enough for every keyword.
    private enum Spelling {
        case letters(low: UInt64, high: UInt64)
        case notAKeyword
        case nonASCII

        init(_ bytes: some Sequence<UInt8>) {
            var low: UInt64 = 0
            var high: UInt64 = 0
            var count = 0
            for byte in bytes {
                guard byte < 0x80 else {
                    self = .nonASCII
                    return
                }
                // Clearing bit 5 uppercases a letter; nothing else lands in A…Z. Upper case keeps the byte non-zero,
                // so the packed words also tell the length.
                let upper = byte & 0xDF
                guard upper >= UInt8(ascii: "A"), upper <= UInt8(ascii: "Z"), count < 16 else {
                    // Keywords are at most 15 letters. Uppercasing leaves an ASCII non-letter in place and keeps 16
                    // ASCII letters 16 characters long, so nothing further on can make such a name a keyword.
                    self = .notAKeyword
                    return
                }
                if count < 8 {
                    low |= UInt64(upper) << (count * 8)
                } else {
                    high |= UInt64(upper) << ((count - 8) * 8)
                }
                count += 1
            }
            self = count == 0 ? .notAKeyword : .letters(low: low, high: high)
        }
    }

    /// An open-addressing hash table of the packed spellings, built once.
    private struct Table {
        private static let size = 64
        private var entries: [(low: UInt64, high: UInt64, keyword: PredicateKeyword)?]

        init() {
            entries = Array(repeating: nil, count: Self.size)
            for keyword in PredicateKeyword.allCases {
                guard case .letters(let low, let high) = Spelling(keyword.rawValue.utf8) else {
                    preconditionFailure("keywords are ASCII letters")
                }
                var slot = Self.slot(low, high)
                while entries[slot] != nil { slot = (slot + 1) & (Self.size - 1) }
                entries[slot] = (low, high, keyword)
            }
        }

        private static func slot(_ low: UInt64, _ high: UInt64) -> Int {
            Int(truncatingIfNeeded: ((low ^ (high &* 0x1F)) &* 0x9E37_79B9_7F4A_7C15) >> 58)
        }

        func keyword(_ low: UInt64, _ high: UInt64) -> PredicateKeyword? {
            var slot = Self.slot(low, high)
            while let entry = entries[slot] {
                if entry.low == low, entry.high == high { return entry.keyword }
                slot = (slot + 1) & (Self.size - 1)
            }
            return nil
        }
    }

    private static let table = Table()
}
