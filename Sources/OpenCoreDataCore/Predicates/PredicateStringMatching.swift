// The string operators' building blocks: the folding behind `[c]`, `[d]` and `[cd]`, LIKE's `*`/`?` wildcards and
// MATCHES' full-string regular expressions. The SQLite store registers functions built on exactly these, so that a
// predicate finds the same rows in memory and in SQL.

import Foundation

/// Case and diacritic folding for the `[c]`, `[d]` and `[cd]` string options.
package enum PredicateStringFolding {
    /// Folds `string` as the options ask: Unicode case folding for `.caseInsensitive` (so `"Straße"` matches
    /// `"STRASSE"`), removal of diacritical marks for `.diacriticInsensitive` (so `"Citroën"` matches `"citroen"`).
    /// The result is in canonical composed form, so that differently composed strings compare equal.
    package static func fold(_ string: String, options: NSComparisonPredicate.Options) -> String {
        let caseInsensitive = options.contains(.caseInsensitive)
        let diacriticInsensitive = options.contains(.diacriticInsensitive)
        guard caseInsensitive || diacriticInsensitive else { return string }
        if string.utf8.allSatisfy({ $0 < 0x80 }) {
            guard caseInsensitive else { return string }
            return String(decoding: string.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
        }
        if let bytes = latinFold(string, options: options) { return String(decoding: bytes, as: UTF8.self) }
        return foundationFold(string, options: options)
    }

    /// The folding itself, by Foundation: what every other path must agree with.
    static func foundationFold(_ string: String, options: NSComparisonPredicate.Options) -> String {
        let caseInsensitive = options.contains(.caseInsensitive)
        let diacriticInsensitive = options.contains(.diacriticInsensitive)
        var folding: String.CompareOptions = []
        if caseInsensitive { folding.insert(.caseInsensitive) }
        if diacriticInsensitive { folding.insert(.diacriticInsensitive) }
        return string.folding(options: folding, locale: nil).precomposedStringWithCanonicalMapping
    }
}

extension PredicateStringFolding {
    /// The fold of each scalar from U+0080 to U+024F (Latin-1 Supplement, Latin Extended-A and -B), as UTF-8 bytes,
    /// made once per set of options by `foundationFold` itself; `nil` for a scalar whose fold holds a combining mark,
    /// which could attach to what follows. Folding Latin text scalar by scalar through this table gives what folding
    /// the whole string gives, at a small fraction of the cost (Foundation's folding and recomposition cost some
    /// 15,000 instructions for a short name).
    private final class LatinFoldTable: Sendable {
        static let firstScalar: UInt32 = 0x80
        static let endScalar: UInt32 = 0x250

        let folds: [[UInt8]?]

        init(options: NSComparisonPredicate.Options) {
            folds = (Self.firstScalar..<Self.endScalar).map { value in
                guard let scalar = Unicode.Scalar(value) else { return nil }
                let folded = PredicateStringFolding.foundationFold(String(Character(scalar)), options: options)
                guard folded.unicodeScalars.allSatisfy({ $0.value < 0x300 }) else { return nil }
                return Array(folded.utf8)
            }
        }

        static let caseOnly = LatinFoldTable(options: .caseInsensitive)
        static let diacriticsOnly = LatinFoldTable(options: .diacriticInsensitive)
        static let both = LatinFoldTable(options: [.caseInsensitive, .diacriticInsensitive])

        static func table(for options: NSComparisonPredicate.Options) -> LatinFoldTable {
            switch (options.contains(.caseInsensitive), options.contains(.diacriticInsensitive)) {
            case (true, true): return both
            case (true, false): return caseOnly
            default: return diacriticsOnly
            }
        }
    }

    /// `string` folded as `options` ask (at least one of case and diacritic insensitivity), as UTF-8 bytes, when every
    /// scalar of it is ASCII or in the Latin table; `nil` otherwise. The result holds no combining marks.
    static func latinFold(_ string: String, options: NSComparisonPredicate.Options) -> [UInt8]? {
        let caseInsensitive = options.contains(.caseInsensitive)
        let table = LatinFoldTable.table(for: options)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(string.utf8.count)
        for scalar in string.unicodeScalars {
            let value = scalar.value
            if value < 0x80 {
                let byte = UInt8(value)
                bytes.append(caseInsensitive ? lower(byte) : byte)
            } else if value < LatinFoldTable.endScalar,
                let folded = table.folds[Int(value - LatinFoldTable.firstScalar)]
            {
                bytes.append(contentsOf: folded)
            } else {
                return nil
            }
        }
        return bytes
    }

    /// Folded substring test for ASCII and Latin text, comparing the folded bytes: without combining marks, the
    /// scalars of folded text are its characters, so a byte match is a character match. `nil` for other text.
    static func latinContains(_ haystack: String, _ needle: String, options: NSComparisonPredicate.Options) -> Bool? {
        guard let h = latinFold(haystack, options: options), let n = latinFold(needle, options: options) else {
            return nil
        }
        if n.isEmpty { return true }
        guard n.count <= h.count else { return false }
        let first = n[0]
        var offset = 0
        while offset <= h.count - n.count {
            if h[offset] == first {
                var i = 1
                while i < n.count, h[offset + i] == n[i] { i += 1 }
                if i == n.count { return true }
            }
            offset += 1
        }
        return false
    }

    /// ASCII lowercase of one byte.
    @inline(__always)
    static func lower(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
    }

    /// Folded equality without allocating, when both strings are ASCII (folding then only lowercases). `nil` when
    /// either is not ASCII.
    @inline(__always)
    static func asciiEqual(_ a: String, _ b: String, options: NSComparisonPredicate.Options) -> Bool? {
        var a = a
        var b = b
        return a.withUTF8 { x in
            b.withUTF8 { y -> Bool? in
                guard isASCII(x), isASCII(y) else { return nil }
                guard x.count == y.count else { return false }
                if !options.contains(.caseInsensitive) { return x.elementsEqual(y) }
                for i in 0..<x.count where lower(x[i]) != lower(y[i]) { return false }
                return true
            }
        }
    }

    /// Folded prefix, suffix or substring test without allocating, when both strings are ASCII. `nil` when either
    /// is not ASCII.
    static func asciiFind(
        _ needle: String, in haystack: String, options: NSComparisonPredicate.Options, anchor: Anchor
    ) -> Bool? {
        var needle = needle
        var haystack = haystack
        let caseInsensitive = options.contains(.caseInsensitive)
        return haystack.withUTF8 { h in
            needle.withUTF8 { n -> Bool? in
                guard isASCII(h), isASCII(n) else { return nil }
                guard n.count <= h.count else { return false }
                func matches(at offset: Int) -> Bool {
                    if caseInsensitive {
                        for i in 0..<n.count where lower(h[offset + i]) != lower(n[i]) { return false }
                    } else {
                        for i in 0..<n.count where h[offset + i] != n[i] { return false }
                    }
                    return true
                }
                switch anchor {
                case .start: return matches(at: 0)
                case .end: return matches(at: h.count - n.count)
                case .anywhere:
                    for offset in 0...(h.count - n.count) where matches(at: offset) { return true }
                    return false
                }
            }
        }
    }

    /// Where `asciiFind` looks.
    enum Anchor {
        case start
        case end
        case anywhere
    }

    @inline(__always)
    private static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        for byte in bytes where byte >= 0x80 { return false }
        return true
    }
}

/// LIKE: `*` matches any run of characters, `?` exactly one, `\` makes the next character literal; the pattern must
/// match the whole string.
package enum PredicateLikeMatcher {
    /// Whether `string` matches the LIKE `pattern`, folding both as `options` ask.
    package static func matches(_ string: String, pattern: String, options: NSComparisonPredicate.Options) -> Bool {
        let text = Array(PredicateStringFolding.fold(string, options: options))
        let tokens = compile(PredicateStringFolding.fold(pattern, options: options))
        return matches(text, tokens)
    }

    enum Token: Equatable {
        case character(Character)
        case any
        case star
    }

    static func compile(_ pattern: String) -> [Token] {
        var tokens: [Token] = []
        var escaped = false
        for character in pattern {
            if escaped {
                tokens.append(.character(character))
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "*" {
                if tokens.last != .star { tokens.append(.star) }
            } else if character == "?" {
                tokens.append(.any)
            } else {
                tokens.append(.character(character))
            }
        }
        if escaped { tokens.append(.character("\\")) }
        return tokens
    }

    /// Greedy matching that backtracks only to the most recent star: O(text × pattern) at worst, never exponential.
    static func matches(_ text: [Character], _ tokens: [Token]) -> Bool {
        var t = 0
        var p = 0
        var starToken = -1
        var starText = 0
        while t < text.count {
            if p < tokens.count {
                switch tokens[p] {
                case .star:
                    starToken = p
                    starText = t
                    p += 1
                    continue
                case .any:
                    t += 1
                    p += 1
                    continue
                case .character(let c) where c == text[t]:
                    t += 1
                    p += 1
                    continue
                default:
                    break
                }
            }
            guard starToken >= 0 else { return false }
            p = starToken + 1
            starText += 1
            t = starText
        }
        while p < tokens.count, tokens[p] == .star { p += 1 }
        return p == tokens.count
    }
}

/// MATCHES: the right-hand side is an ICU regular expression that must match the entire left-hand string.
package enum PredicateRegularExpression {
    private static let cache = RegularExpressionCache()

    /// Whether `string` matches `pattern` entirely. An invalid pattern matches nothing.
    package static func matches(_ string: String, pattern: String, options: NSComparisonPredicate.Options) -> Bool {
        var text = string
        var source = pattern
        if options.contains(.diacriticInsensitive) {
            text = PredicateStringFolding.fold(text, options: .diacriticInsensitive)
            source = PredicateStringFolding.fold(source, options: .diacriticInsensitive)
        }
        guard let expression = cache.expression(source, caseInsensitive: options.contains(.caseInsensitive)) else {
            return false
        }
        let range = NSRange(text.startIndex..<text.endIndex, in: text)
        guard let match = expression.firstMatch(in: text, options: [.anchored], range: range) else { return false }
        return match.range == range
    }

    /// Compiled expressions by pattern: predicates evaluate the same pattern against many objects.
    private final class RegularExpressionCache: @unchecked Sendable {
        // @unchecked: `expressions` is touched under `lock` only; a compiled NSRegularExpression is immutable.
        private let lock = NSLock()
        private var expressions: [String: NSRegularExpression?] = [:]

        func expression(_ pattern: String, caseInsensitive: Bool) -> NSRegularExpression? {
            let key = (caseInsensitive ? "i:" : "s:") + pattern
            lock.lock()
            defer { lock.unlock() }
            if let cached = expressions[key] { return cached }
            let compiled = try? NSRegularExpression(
                pattern: "(?:" + pattern + ")\\z",
                options: caseInsensitive ? [.caseInsensitive] : [])
            if expressions.count > 256 { expressions.removeAll() }
            expressions[key] = compiled
            return compiled
        }
    }
}
