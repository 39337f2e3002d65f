import OpenCoreDataShim
import Testing

/// `predicateFormat`, `expressionFormat` and `description` print what Apple prints, and parsing the printed form
/// gives an equal predicate.
@Suite struct PredicatePrintingTests {
    @Test func constantsPrintAsApplePrintsThem() {
        #expect(NSExpression(forConstantValue: "x").expressionFormat == "\"x\"")
        #expect(NSExpression(forConstantValue: "say \"hi\"").expressionFormat == #""say \"hi\"""#)
        #expect(NSExpression(forConstantValue: 30).expressionFormat == "30")
        #expect(NSExpression(forConstantValue: -7).expressionFormat == "-7")
        #expect(NSExpression(forConstantValue: 2.5).expressionFormat == "2.5")
        #expect(NSExpression(forConstantValue: 3.0).expressionFormat == "3")
        #expect(NSExpression(forConstantValue: true).expressionFormat == "1")
        #expect(NSExpression(forConstantValue: nil).expressionFormat == "nil")
        #expect(NSExpression(forConstantValue: NSNull()).expressionFormat == "<null>")
        #expect(NSExpression(forConstantValue: [1, 2]).expressionFormat == "{1, 2}")
        #expect(NSExpression(forConstantValue: ["a"]).expressionFormat == "{\"a\"}")
        #expect(NSExpression(forConstantValue: [1, NSNull()] as [Any]).expressionFormat == "{1, <null>}")
        #expect(
            NSExpression(forConstantValue: (0..<1_000).map { Int64($0) }).expressionFormat
                == "{" + (0..<1_000).map(String.init).joined(separator: ", ") + "}")
        let date = Date(timeIntervalSinceReferenceDate: 599_529_600)
        #expect(NSExpression(forConstantValue: date).expressionFormat == "CAST(599529600.000000, \"NSDate\")")
    }

    @Test func expressionKindsPrint() {
        #expect(NSExpression.expressionForEvaluatedObject().expressionFormat == "SELF")
        #expect(NSExpression(forVariable: "x").expressionFormat == "$x")
        #expect(NSExpression(forKeyPath: "a.b").expressionFormat == "a.b")
        #expect(
            NSExpression(forFunction: "sum:", arguments: [NSExpression(forKeyPath: "items.price")]).expressionFormat
                == "sum:(items.price)")
        #expect(
            NSExpression(
                forFunction: "add:to:", arguments: [NSExpression(forConstantValue: 1), NSExpression(forKeyPath: "a")]
            ).expressionFormat == "1 + a")
        #expect(
            NSExpression(
                forSubquery: NSExpression(forKeyPath: "items"), usingIteratorVariable: "i",
                predicate: NSPredicate(format: "$i.price > 5")
            ).expressionFormat == "SUBQUERY(items, $i, $i.price > 5)")
        #expect(
            NSExpression(
                forUnionSet: NSExpression(forKeyPath: "a"), with: NSExpression(forKeyPath: "b")
            ).expressionFormat == "a UNION b")
        #expect(
            NSExpression(
                forConditional: NSPredicate(value: true), trueExpression: NSExpression(forConstantValue: 1),
                falseExpression: NSExpression(forConstantValue: 2)
            ).expressionFormat == "TERNARY(TRUEPREDICATE, 1, 2)")
        #expect(NSExpression.expressionForAnyKey().expressionFormat == "ANYKEY")
    }

    @Test func predicatesPrint() {
        #expect(NSPredicate(format: "name == 'x'").predicateFormat == "name == \"x\"")
        #expect(NSPredicate(format: "name == 'x'").description == "name == \"x\"")
        #expect(
            NSPredicate(format: "age > 30 AND name BEGINSWITH[c] 'a'").predicateFormat
                == "age > 30 AND name BEGINSWITH[c] \"a\"")
        #expect(
            NSPredicate(format: "ANY employees.firstName == 'Bob'").predicateFormat
                == "ANY employees.firstName == \"Bob\"")
        #expect(NSPredicate(value: true).predicateFormat == "TRUEPREDICATE")
        #expect(NSPredicate(value: false).predicateFormat == "FALSEPREDICATE")
        #expect(NSCompoundPredicate(andPredicateWithSubpredicates: []).predicateFormat == "TRUEPREDICATE")
        #expect(NSCompoundPredicate(orPredicateWithSubpredicates: []).predicateFormat == "FALSEPREDICATE")
        let nested = NSCompoundPredicate(andPredicateWithSubpredicates: [
            NSPredicate(format: "a == 1"),
            NSCompoundPredicate(orPredicateWithSubpredicates: [
                NSPredicate(format: "b == 2"), NSPredicate(format: "c == 3"),
            ]),
            NSCompoundPredicate(notPredicateWithSubpredicate: NSPredicate(format: "d == 4")),
        ])
        #expect(nested.predicateFormat == "a == 1 AND (b == 2 OR c == 3) AND NOT d == 4")
        let negatedGroup = NSCompoundPredicate(
            notPredicateWithSubpredicate: NSPredicate(format: "a == 1 OR b == 2"))
        #expect(negatedGroup.predicateFormat == "NOT (a == 1 OR b == 2)")
    }

    /// Outputs of Apple's Foundation that public projects pin in their own tests.
    @Test func outputsObservedOnApplePlatforms() {
        let first = NSPredicate(format: "title == %@ AND birthdate == %@", "The Almighty Kraken", "October 4")
        let second = NSPredicate(format: "isAwesome == true && isHungry == true")
        #expect(
            NSCompoundPredicate(andPredicateWithSubpredicates: [first, second]).predicateFormat
                == #"(title == "The Almighty Kraken" AND birthdate == "October 4") AND (isAwesome == 1 AND isHungry == 1)"#
        )
        #expect(
            NSCompoundPredicate(orPredicateWithSubpredicates: [first, second]).predicateFormat
                == #"(title == "The Almighty Kraken" AND birthdate == "October 4") OR (isAwesome == 1 AND isHungry == 1)"#
        )
        let between = NSPredicate(format: "extraInt BETWEEN {%@, %@}", NSNumber(value: 1), NSNumber(value: 3))
        #expect(
            NSCompoundPredicate(notPredicateWithSubpredicate: between).predicateFormat
                == "NOT extraInt BETWEEN {1, 3}")
        #expect(NSPredicate(format: "isActive == %@", NSNumber(value: true)).predicateFormat == "isActive == 1")
        #expect(NSPredicate(format: "text CONTAINS[cd] %@", "test").predicateFormat == #"text CONTAINS[cd] "test""#)
    }

    /// Formats as they appear in public Core Data code: they parse, print as written, and evaluate.
    @Test func formatsFromTheField() {
        let relative = NSPredicate(format: #"dateAdded > CAST(CAST(now(), "NSNumber") - 7257600, "NSDate")"#)
        #expect(relative.predicateFormat == #"dateAdded > CAST(CAST(now(), "NSNumber") - 7257600, "NSDate")"#)
        #expect(relative.evaluate(with: ["dateAdded": Date()]))
        #expect(!relative.evaluate(with: ["dateAdded": Date(timeIntervalSinceNow: -8_000_000)]))
        let stops = NSPredicate(
            format: """
                (13.39657778010461 <= longitude AND longitude <= 13.42266155792719
                AND 52.63249629924865 <= latitude AND latitude <= 52.64832433715332)
                AND SUBQUERY(
                    stopTimes, $x, CAST(-978250148.000000, "NSDate") <= $x.departureTime
                    AND $x.departureTime <= CAST(-978306000.000000, "NSDate")
                ).@count != 0
                """)
        #expect(
            stops.predicateFormat
                == "(13.39657778010461 <= longitude AND longitude <= 13.42266155792719 AND 52.63249629924865 <= latitude"
                + " AND latitude <= 52.64832433715332) AND SUBQUERY(stopTimes, $x, CAST(-978250148.000000, \"NSDate\")"
                + " <= $x.departureTime AND $x.departureTime <= CAST(-978306000.000000, \"NSDate\")).@count != 0")
        let iso = NSPredicate(format: #"date > CAST("2016-01-02T00:00:00Z", "NSDate")"#)
        #expect(iso.evaluate(with: ["date": Date(timeIntervalSince1970: 1_451_800_000)]))
        #expect(!iso.evaluate(with: ["date": Date(timeIntervalSince1970: 1_451_600_000)]))
        let sum = NSExpression(format: "sum:(amount)")
        #expect(sum.function == "sum:")
        #expect(sum.expressionFormat == "sum:(amount)")
    }

    /// Formats covering every construct; each must print to a string that parses back to an equal predicate, and
    /// print the same again.
    static let roundTripFormats = [
        "name == \"x\"", "a != 1", "a < 1.5", "a <= -2", "a > 0x10", "a >= 1e3",
        "a BETWEEN {1, 5}", "a IN {\"x\", \"y\"}", "a CONTAINS[cd] \"é\"", "a BEGINSWITH[c] \"x\"",
        "a ENDSWITH[d] \"x\"", "a LIKE[n] \"x*?\"", "a MATCHES \"[a-z]+\\\\d\"",
        "ANY a.b == 1", "ALL a.b > 1", "NONE a.b < 1", "SOME a.b == 1",
        "a == 1 AND b == 2", "a == 1 OR b == 2", "NOT a == 1", "(a == 1 OR b == 2) AND NOT (c == 3 AND d == 4)",
        "a == 1 OR (b == 2 AND c == 3) OR d == 4", "TRUEPREDICATE", "FALSEPREDICATE", "TRUEPREDICATE AND a == nil",
        "a == nil", "a == YES", "a == NO", "SELF == \"x\"", "SELF.a == 1", "$x == 1", "a == $y",
        "a + b * c - d / e ** f == 1", "(a + b) * c == 1", "a - (b - c) == 1", "-a == -5", "a ** -2 == 0.25",
        "sum({1, 2}) == 3", "count(a) == 2", "now() > d", "average(a.b) > 1", "modulus:by:(a, 3) == 1",
        "FUNCTION(SELF, \"foo:\", 1, \"x\") == 1", "a[FIRST] == 1", "a[LAST] == 1", "a[SIZE] == 1", "a[2] == 1",
        "a[\"k\"] == 1", "SUBQUERY(a, $x, $x.b == 1 AND $x.c.@count > 2).@count > 0", "a.@sum.b > 1",
        "@count.a > 1", "{1, 2} UNION {3} == a", "a INTERSECT b == c", "(a MINUS b) MINUS c == d",
        "a MINUS (b MINUS c) == d", "TERNARY(a > 1, \"x\", \"y\") == \"x\"", "CAST(a, \"NSNumber\") > 1",
        "d > CAST(599529600.000000, \"NSDate\")", "#size == 3", "#first.#last == 2", "a == \"tab\\tnew\\nline\"",
        "a == \"quote \\\" and back\\\\slash\"", "$v := 5 == 5", "ANYKEY == 1", "a.b[FIRST].c == 1",
        "(a + 1)[0] == 1", "{a, {b, c}} CONTAINS 1", "a == \"%@\"", "a == 9223372036854775807",
        "a == 18446744073709551615", "a == 0.1", "a == 1e-07", "ANY a IN {1} AND ALL b BETWEEN {1, 2}",
    ]

    @Test(arguments: roundTripFormats)
    func parsePrintParseIsTheIdentity(format: String) {
        let first = NSPredicate(format: format)
        let printed = first.predicateFormat
        let second = NSPredicate(format: printed)
        #expect(first == second, "\(format) → \(printed) → \(second.predicateFormat)")
        #expect(second.predicateFormat == printed)
        #expect(first.hash == second.hash)
    }

    /// The parser reads characters: a backslash or quote that a combining mark extends is neither an escape nor the
    /// end of the string, and a mark at the start or after an escape would join the quote or the escape's letter.
    @Test(arguments: [
        "x\\\u{301}y", "x\"\u{301}y", "\u{301}x", "\n\u{301}", "\u{7}\u{301}\u{302}", "\u{1F3FB}", "\t\u{200D}",
        "\\\u{301}\\", "e\u{301}\"", "\u{0903}a",
    ])
    func stringsWithCombiningMarksRoundTrip(_ value: String) throws {
        let predicate = NSPredicate(format: "a == %@", value)
        let reparsed = NSPredicate(format: predicate.predicateFormat)
        #expect(reparsed == predicate, "\(predicate.predicateFormat)")
        let constant = (reparsed as? NSComparisonPredicate)?.rightExpression.constantValue as? String
        #expect(constant?.unicodeScalars.elementsEqual(value.unicodeScalars) == true)
    }

    @Test(arguments: [Double.infinity, -Double.infinity, 1e300])
    func datesFarAwayRoundTrip(_ seconds: Double) {
        let predicate = NSPredicate(format: "d < %@", Date(timeIntervalSinceReferenceDate: seconds) as NSDate)
        #expect(NSPredicate(format: predicate.predicateFormat) == predicate, "\(predicate.predicateFormat)")
    }

    @Test func roundTripWithFormatArguments() {
        let date = Date(timeIntervalSinceReferenceDate: 123.456_789_012)
        let uuid = UUID()
        let predicate = NSPredicate(
            format: "d == %@ AND u == %@ AND n IN %@ AND s == %@ AND k == %@ AND f == %f AND i == %d",
            argumentArray: [date, uuid, [1, 2], "a\"b", NSNull(), 2.5, 7])
        let reparsed = NSPredicate(format: predicate.predicateFormat)
        #expect(predicate == reparsed, "\(predicate.predicateFormat)")
        #expect(reparsed.evaluate(with: ["d": date, "u": uuid, "n": 2, "s": "a\"b", "f": 2.5, "i": 7]))
    }

    @Test func expressionRoundTrip() {
        for format in [
            "4 + 5 - 2 ** 3", "sum:({1, 2, 3})", "$x.name", "SUBQUERY(a, $x, $x == 1).@count",
            "CAST(\"1\", \"NSNumber\")", "a[FIRST]", "FUNCTION(a, \"b\")", "$a := $b",
        ] {
            let first = NSExpression(format: format)
            let second = NSExpression(format: first.expressionFormat)
            #expect(first == second, "\(format) → \(first.expressionFormat)")
            #expect(first.expressionFormat == format)
        }
    }

    @Test func equalityAndHashing() {
        #expect(NSPredicate(format: "a == 1") == NSPredicate(format: "a = 1"))
        #expect(NSPredicate(format: "a == 1") == NSPredicate(format: "a == 1.0"))
        #expect(NSPredicate(format: "a == 1") != NSPredicate(format: "a == 2"))
        #expect(NSPredicate(format: "a == 1") != NSPredicate(format: "a != 1"))
        #expect(NSPredicate(format: "a ==[c] 'x'") != NSPredicate(format: "a == 'x'"))
        #expect(NSPredicate(format: "ANY a == 1") != NSPredicate(format: "a == 1"))
        #expect(NSPredicate(format: "a == 1 AND b == 2") != NSPredicate(format: "b == 2 AND a == 1"))
        let set: Set<NSPredicate> = [NSPredicate(format: "a == 1"), NSPredicate(format: "a = 1")]
        #expect(set.count == 1)
        let predicate = NSPredicate(format: "a == 1")
        #expect(predicate.copy() as? NSPredicate == predicate)
        #expect(NSExpression(format: "a.b") == NSExpression(forKeyPath: "a.b"))
    }
}
