import OpenCoreDataShim
import Testing

/// Malformed format strings: `NSPredicate(format:)` stops the program as Apple raises; the validating initializers
/// throw an error naming the position and what was expected, in time linear in the input, whatever the input.
@Suite struct PredicateUntrustedInputTests {
    @Test func malformedFormatStopsTheProgram() async {
        await #expect(processExitsWith: .failure) {
            _ = NSPredicate(format: "name ==")
        }
        await #expect(processExitsWith: .failure) {
            _ = NSPredicate(format: "name == 'unterminated")
        }
        await #expect(processExitsWith: .failure) {
            _ = NSExpression(format: "1 +")
        }
        await #expect(processExitsWith: .failure) {
            _ = NSPredicate(format: "a == %@")
        }
    }

    #if !canImport(CoreData)
    private func parseError(_ format: String, _ arguments: [Any] = []) -> NSError? {
        do {
            _ = try NSPredicate(validatingFormat: format, argumentArray: arguments)
            return nil
        } catch {
            return error as NSError
        }
    }

    @Test func validatingFormatAcceptsWellFormedStrings() throws {
        let predicate = try NSPredicate(validatingFormat: "name BEGINSWITH[c] %@", argumentArray: ["a"])
        #expect(predicate is NSComparisonPredicate)
        #expect(predicate.evaluate(with: ["name": "Alice"]))
        let expression = try NSExpression(validatingFormat: "1 + %@", argumentArray: [2])
        #expect(expression.expressionValue(with: nil, context: nil) as? Int == 3)
    }

    @Test func errorsAreFormattingErrorsWithPositionAndExpectation() throws {
        let error = try #require(parseError("name == "))
        #expect(error.domain == NSCocoaErrorDomain)
        #expect(error.code == 2048)
        #expect(error.localizedDescription.contains("position 8"))
        #expect(error.localizedDescription.contains("expected an expression"))
        let debug = try #require(error.userInfo[NSDebugDescriptionErrorKey] as? String)
        #expect(debug.hasPrefix("Unable to parse the format string \"name == \""))
    }

    @Test(
        arguments: [
            ("", 0, "an expression"),
            ("name", 4, "an operator"),
            ("name == 1 AND", 13, "an expression"),
            ("(a == 1", 7, "\")\""),
            ("a == 1)", 6, "the end of the string"),
            ("a == 'x", 5, "a closing '"),
            ("a ==[z] 1", 5, "string options"),
            ("a == %@", 5, "an argument for %@"),
            ("a ? 1", 2, "an expression or operator"),
            ("foo(1) == 1", 0, "a built-in function"),
            ("SUBQUERY(a, b, c == 1)", 12, "an iterator variable"),
            ("a == 1 b == 2", 7, "an operator, AND, OR or the end"),
            ("AND == 1", 0, "an expression"),
            ("a == 0x", 5, "a base-16 number"),
            ("a[1 == 2", 4, "\"]\""),
        ] as [(String, Int, String)])
    func errorPositions(format: String, position: Int, expected: String) throws {
        let error = try #require(parseError(format), "\(format) should not parse")
        #expect(error.userInfo["OpenCoreDataPredicateFormatPosition"] as? Int == position, "\(format)")
        #expect(error.localizedDescription.contains(expected), "\(format): \(error.localizedDescription)")
    }

    /// Positions count characters (grapheme clusters), whatever the text before them.
    @Test(
        arguments: [
            ("名前 == ", 6, "an expression"),
            ("café ? 1", 5, "an expression or operator"),
            ("cafe\u{301} ? 1", 5, "an expression or operator"),
            ("'👩‍👩‍👧' ?", 4, "an expression or operator"),
            ("'🇫🇷🇩🇪' == ?", 8, "an expression or operator"),
            ("a == 1\r\n?", 7, "an expression or operator"),
            ("a\u{A0}==\u{3000}0x", 5, "a base-16 number"),
            ("日本 == 'x", 6, "a closing '"),
            ("é == %z", 5, "a format specifier"),
            ("é == %lz", 5, "a format specifier"),
            ("名前 == #", 6, "a key after #"),
            ("ñ.@ == 1", 2, "a collection operator after @"),
            ("ü == $1", 5, "a variable name after $"),
            ("'日本\\u12' == 1", 7, "four hexadecimal digits"),
            ("名前 == %@", 6, "an argument for %@"),
            ("é == 0b12", 5, "a base-2 number"),
            ("é == 1 ünd", 7, "an operator, AND, OR or the end"),
            ("é\u{301} ~ 1", 2, "an expression or operator"),
            ("日本 == 1 AND", 11, "an expression"),
        ] as [(String, Int, String)])
    func errorPositionsCountCharacters(format: String, position: Int, expected: String) throws {
        let error = try #require(parseError(format), "\(format) should not parse")
        #expect(error.userInfo["OpenCoreDataPredicateFormatPosition"] as? Int == position, "\(format)")
        #expect(error.localizedDescription.contains(expected), "\(format): \(error.localizedDescription)")
    }

    /// The lexer reads characters, not Unicode scalars: a combining mark makes a quote, a backslash or an operator a
    /// different character, and CR LF is one character.
    @Test func combiningMarksJoinTheCharacterBefore() throws {
        let quote = try #require(parseError("a == 'x'\u{301} == 1"))
        #expect(quote.userInfo["OpenCoreDataPredicateFormatPosition"] as? Int == 5)
        #expect(quote.localizedDescription.contains("a closing '"))
        // A backslash with a combining mark is not an escape.
        let backslash = "x\\\u{301}y"
        let value = try NSExpression(validatingFormat: "'\(backslash)'", argumentArray: [])
        #expect(value.constantValue as? String == backslash)
        let equals = try #require(parseError("a =\u{301} 1"))
        #expect(equals.userInfo["OpenCoreDataPredicateFormatPosition"] as? Int == 2)
        #expect(equals.localizedDescription.contains("found =\u{301}"))
        let format = try #require(parseError("a == %\u{301}"))
        #expect(format.localizedDescription.contains("found %\u{301}"))
        #expect(try NSPredicate(validatingFormat: "a ==\r\n1").predicateFormat == "a == 1")
    }

    @Test func unknownEscapesKeepTheirBackslash() throws {
        #expect(try NSExpression(validatingFormat: #"'a\*b\é'"#).constantValue as? String == #"a\*b\é"#)
        // Also before a line break.
        let crlf = "x\\\r\ny"
        #expect(try NSExpression(validatingFormat: "'\(crlf)'").constantValue as? String == crlf)
    }

    @Test func numberSeparatorsAndBadDigits() throws {
        #expect(try NSExpression(validatingFormat: "0x1_000").constantValue as? Int == 4096)
        #expect(try NSExpression(validatingFormat: "0b1_0").constantValue as? Int == 2)
        #expect(parseError("a == 0x10000000000000000") != nil)
        #expect(parseError("a == 0o8") != nil)
        // Fullwidth digits are hexadecimal digits to Unicode, but not to the number reader.
        let fullwidth = try #require(parseError("a == 0x\u{FF11}"))
        #expect(fullwidth.userInfo["OpenCoreDataPredicateFormatPosition"] as? Int == 5)
        #expect(fullwidth.localizedDescription.contains("found 0x\u{FF11}"))
    }

    @Test func wrongSubclassThrows() {
        #expect(throws: NSError.self) {
            _ = try NSCompoundPredicate(validatingFormat: "a == 1")
        }
        #expect(throws: NSError.self) {
            _ = try NSPredicate(validatingFormat: "%K == 1", argumentArray: [1])
        }
    }

    @Test func nestingIsLimited() throws {
        let depth = 90
        let nested = String(repeating: "(", count: depth) + "a == 1" + String(repeating: ")", count: depth)
        #expect(try NSPredicate(validatingFormat: nested).predicateFormat == "a == 1")
        let tooDeep = String(repeating: "(", count: 10_000) + "a == 1" + String(repeating: ")", count: 10_000)
        let error = try #require(parseError(tooDeep))
        #expect(error.localizedDescription.contains("levels of nesting"))
        #expect(parseError(String(repeating: "NOT ", count: 5_000) + "a == 1") != nil)
        #expect(parseError("a == " + String(repeating: "-", count: 5_000) + "1") != nil)
        #expect(parseError("a == " + String(repeating: "{", count: 5_000)) != nil)
    }

    /// Every construct that nests counts toward the limit, however it is spelled.
    @Test(
        arguments: [
            ("CAST(", "1", ", 'NSNumber')"), ("TERNARY(TRUEPREDICATE, ", "1", ", 2)"), ("$v := ", "1", ""),
            ("{", "1", "}"), ("b[", "0", "]"), ("abs:(", "1", ")"), ("FUNCTION(", "SELF", ", 'self')"),
            ("SUBQUERY(", "x", ", $y, TRUEPREDICATE)"), ("(", "1", ")"), ("-", "1", ""),
            ("FETCH(", "$r", ", $c, NO)"),
        ])
    func everyNestingConstructIsLimited(open: String, inner: String, close: String) throws {
        // The input is rejected where the nesting passes the limit; the rest of it only costs lexing.
        let depth = open == "(" ? 100_000 : 10_000
        let format = "a == " + String(repeating: open, count: depth) + inner + String(repeating: close, count: depth)
        let error = try #require(parseError(format), "\(open)… should not parse")
        #expect(error.localizedDescription.contains("levels of nesting"), "\(error.localizedDescription)")
        let shallow = "a == " + String(repeating: open, count: 20) + inner + String(repeating: close, count: 20)
        let predicate = try NSPredicate(validatingFormat: shallow)
        #expect(try NSPredicate(validatingFormat: predicate.predicateFormat) == predicate)
    }

    /// Operators chained to the left make a tree as high as the chain is long; the parser refuses a chain higher
    /// than its limit at the operator that crosses it, so that nothing later walks 100 000 levels.
    @Test(arguments: [" + ", " - ", " * ", " / ", " ** ", " & ", " | ", " ^ ", " UNION ", " INTERSECT ", " MINUS "])
    func chainedOperatorsAreLimited(separator: String) throws {
        let terms = Array(repeating: "b", count: separator == " + " ? 100_000 : 10_000)
        let start = Date()
        let error = try #require(parseError("a == " + terms.joined(separator: separator)))
        #expect(Date().timeIntervalSince(start) < 5)
        #expect(error.localizedDescription.contains("levels of nested or chained operations"))
        // The 100th operator makes the chain 101 levels high: it follows "a == ", 99 times "b" and the separator,
        // one more "b" and the separator's leading space.
        let position = 5 + 99 * (1 + separator.count) + 2
        #expect(error.userInfo["OpenCoreDataPredicateFormatPosition"] as? Int == position)
        // The longest chain the limit allows parses, and everything works on it.
        let format = "a == " + terms.prefix(99).joined(separator: separator)
        let predicate = try NSPredicate(validatingFormat: format)
        #expect(try NSPredicate(validatingFormat: predicate.predicateFormat) == predicate)
        _ = predicate.evaluate(with: ["a": 1, "b": 1])
        _ = predicate.hash
        _ = predicate.withSubstitutionVariables(["x": 1])
    }

    @Test func chainedIndexesAreLimited() throws {
        let error = try #require(parseError("a == b" + String(repeating: "[0]", count: 10_000)))
        #expect(error.localizedDescription.contains("levels of nested or chained operations"))
        #expect(error.userInfo["OpenCoreDataPredicateFormatPosition"] as? Int == 6 + 99 * 3)
        let predicate = try NSPredicate(validatingFormat: "a == b" + String(repeating: "[0]", count: 98))
        #expect(try NSPredicate(validatingFormat: predicate.predicateFormat) == predicate)
        #expect(!predicate.evaluate(with: ["a": 1, "b": [[1]]]))
    }

    /// A tree built in code may be 1 000 levels high; building a higher one is a programmer error that stops the
    /// program with a message, before anything walks it.
    @Test func treesBuiltInCodeAreLimited() async {
        var expression = NSExpression(forKeyPath: "a")
        for _ in 1..<1_000 { expression = NSExpression(forFunction: "abs:", arguments: [expression]) }
        #expect(expression.expressionValue(with: ["a": -2], context: nil) as? Int == 2)
        #expect(NSExpression(format: "abs:(a)").expressionFormat.count < expression.expressionFormat.count)
        var predicate: NSPredicate = NSPredicate(format: "a == 1")
        for _ in 2..<1_000 { predicate = NSCompoundPredicate(notPredicateWithSubpredicate: predicate) }
        #expect(predicate.evaluate(with: ["a": 1]))
        await #expect(processExitsWith: .failure) {
            var expression = NSExpression(forKeyPath: "a")
            for _ in 0..<1_000 { expression = NSExpression(forFunction: "abs:", arguments: [expression]) }
        }
        await #expect(processExitsWith: .failure) {
            var predicate: NSPredicate = NSPredicate(value: true)
            for _ in 0..<1_000 { predicate = NSCompoundPredicate(andPredicateWithSubpredicates: [predicate]) }
        }
    }

    /// A key path is one flat expression, however many keys it has, and is read in time linear in its length.
    @Test func longKeyPathsParseInLinearTime() throws {
        let keys = (0..<100_000).map { "k\($0 % 10)" }
        let start = Date()
        let predicate = try NSPredicate(validatingFormat: keys.joined(separator: ".") + " == 1")
        #expect(Date().timeIntervalSince(start) < 5)
        let comparison = try #require(predicate as? NSComparisonPredicate)
        #expect(comparison.leftExpression.keyPath == keys.joined(separator: "."))
        #expect(!predicate.evaluate(with: ["k0": ["k1": 1]]))
        let printed = predicate.predicateFormat
        #expect(try NSPredicate(validatingFormat: printed) == predicate)
    }

    @Test func longInputParsesInLinearTime() throws {
        let clause = "name BEGINSWITH[cd] 'abc' AND age > 30"
        let long = Array(repeating: clause, count: 3_000).joined(separator: " OR ")
        let start = Date()
        let predicate = try NSPredicate(validatingFormat: long)
        #expect((predicate as? NSCompoundPredicate)?.subpredicates.count == 3_000)
        #expect(Date().timeIntervalSince(start) < 5)
        let garbage = String(repeating: "((a == ", count: 20_000)
        #expect(parseError(garbage) != nil)
    }

    /// A one-megabyte format string parses in time that grows with its length: four times the text takes about four
    /// times as long, not sixteen (the benchmark `parse.1-megabyte` measures it in a release build).
    @Test func megabyteFormatsParseInLinearTime() throws {
        func format(bytes: Int) -> String {
            var clauses: [String] = []
            var length = 0
            while length < bytes {
                let clause = "name BEGINSWITH[cd] 'term \(clauses.count)' OR price > \(clauses.count).5"
                clauses.append(clause)
                length += clause.utf8.count + 4
            }
            return clauses.joined(separator: " OR ")
        }
        func seconds(_ text: String) throws -> Double {
            let start = Date()
            let predicate = try NSPredicate(validatingFormat: text)
            #expect((predicate as? NSCompoundPredicate)?.subpredicates.count ?? 0 > 1_000)
            return Date().timeIntervalSince(start)
        }
        // The faster of two runs each, so that a busy machine does not pass for a quadratic parser (16 times).
        let short = format(bytes: 250_000)
        let long = format(bytes: 1_000_000)
        let quarter = min(try seconds(short), try seconds(short))
        let whole = min(try seconds(long), try seconds(long))
        print("parsing 250 kB: \(quarter) s, 1 MB: \(whole) s")
        #expect(whole < 30)
        #expect(whole < max(quarter, 0.05) * 10, "250 kB: \(quarter) s, 1 MB: \(whole) s")
    }

    /// A deterministic generator, so that a failure can be reproduced from the seed.
    private struct SplitMix64: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    private static let vocabulary = [
        "a", "b.c", "SELF", "$x", "%@", "%K", "%d", "%%", "1", "-2.5", "0x1F", "'s'", "\"t\"", "nil", "TRUE", "NO",
        "==", "!=", "<", ">=", "=<", "BETWEEN", "IN", "CONTAINS", "BEGINSWITH[cd]", "LIKE", "MATCHES", "[c]",
        "AND", "OR", "NOT", "!", "&&", "||", "ANY", "ALL", "NONE", "SOME", "(", ")", "{", "}", "[", "]", ",", ".",
        "+", "-", "*", "/", "**", ":=", "SUBQUERY(", "FUNCTION(", "CAST(", "TERNARY(", "sum(", "now()", "@count",
        "[FIRST]", "[LAST]", "[SIZE]", "UNION", "INTERSECT", "MINUS", "TRUEPREDICATE", "FALSEPREDICATE", "#size",
        "ANYKEY", "'", "\"", "\\", "?", "#", "@", "$", "%", "é", "日本", "\u{0}", "\n",
    ]

    @Test func randomizedStringsNeverCrashTheParser() throws {
        var random = SplitMix64(state: 0x0DDC_0FFE_E5EE_D5ED)
        let corpus = PredicatePrintingTests.roundTripFormats
        var parsed = 0
        var rejected = 0
        for iteration in 0..<100_000 {
            var format: String
            if iteration % 2 == 0 {
                let count = Int.random(in: 1...12, using: &random)
                format = (0..<count).map { _ in Self.vocabulary.randomElement(using: &random)! }
                    .joined(separator: Bool.random(using: &random) ? " " : "")
            } else {
                var characters = Array(corpus.randomElement(using: &random)!)
                for _ in 0..<Int.random(in: 1...3, using: &random) {
                    let position = Int.random(in: 0...characters.count, using: &random)
                    switch Int.random(in: 0..<3, using: &random) {
                    case 0 where position < characters.count: characters.remove(at: position)
                    case 1: characters.insert(contentsOf: Self.vocabulary.randomElement(using: &random)!, at: position)
                    default:
                        if position < characters.count {
                            characters[position] = Character(
                                Unicode.Scalar(UInt8.random(in: 32...126, using: &random)))
                        }
                    }
                }
                format = String(characters)
            }
            let arguments: [Any] = ["k", 1, "v", 2.5, NSNull()]
            if let predicate = try? NSPredicate(validatingFormat: format, argumentArray: arguments) {
                parsed += 1
                // Whatever parses must print to something that parses back equal.
                let again = try NSPredicate(validatingFormat: predicate.predicateFormat)
                #expect(again == predicate, "\(format) → \(predicate.predicateFormat)")
            } else {
                rejected += 1
            }
            _ = try? NSExpression(validatingFormat: format, argumentArray: arguments)
        }
        #expect(parsed > 1_000)
        #expect(rejected > 1_000)
    }
    #endif
}
