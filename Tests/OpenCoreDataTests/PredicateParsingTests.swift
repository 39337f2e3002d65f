import OpenCoreDataShim
import Testing

/// One test per production of Apple's "BNF Definition of Cocoa Predicates" and each construct of "Predicate Format
/// String Syntax": what the parser builds, checked through the public AST.
@Suite struct PredicateParsingTests {
    private func comparison(_ format: String, _ args: CVarArg...) -> NSComparisonPredicate {
        let predicate = NSPredicate(format: format, argumentArray: args.map { $0 as Any })
        guard let comparison = predicate as? NSComparisonPredicate else {
            Issue.record("\(format) parsed as \(type(of: predicate))")
            return NSComparisonPredicate(
                leftExpression: NSExpression(forConstantValue: nil),
                rightExpression: NSExpression(forConstantValue: nil),
                modifier: .direct, type: .equalTo)
        }
        return comparison
    }

    // MARK: NSPredicate ::= NSComparisonPredicate | NSCompoundPredicate | "(" NSPredicate ")" | TRUEPREDICATE | …

    @Test func truePredicateAndFalsePredicate() {
        #expect(NSPredicate(format: "TRUEPREDICATE").predicateFormat == "TRUEPREDICATE")
        #expect(NSPredicate(format: "falsepredicate").predicateFormat == "FALSEPREDICATE")
        #expect(NSPredicate(format: "TRUEPREDICATE").evaluate(with: nil))
        #expect(!NSPredicate(format: "FALSEPREDICATE").evaluate(with: nil))
    }

    @Test func parenthesizedPredicate() {
        let predicate = NSPredicate(format: "((a == 1))")
        #expect(predicate is NSComparisonPredicate)
        #expect(predicate.predicateFormat == "a == 1")
    }

    // MARK: NSCompoundPredicate ::= NSPredicate "AND" NSPredicate | … "OR" … | "NOT" NSPredicate

    @Test(arguments: [
        ("a == 1 AND b == 2", NSCompoundPredicate.LogicalType.and),
        ("a == 1 && b == 2", .and),
        ("a == 1 and b == 2", .and),
        ("a == 1 OR b == 2", .or),
        ("a == 1 || b == 2", .or),
    ])
    func binaryCompound(format: String, type: NSCompoundPredicate.LogicalType) throws {
        let compound = try #require(NSPredicate(format: format) as? NSCompoundPredicate)
        #expect(compound.compoundPredicateType == type)
        #expect(compound.subpredicates.count == 2)
        #expect(compound.predicateFormat == "a == 1 \(type == .and ? "AND" : "OR") b == 2")
    }

    @Test(arguments: ["NOT a == 1", "!a == 1", "not (a == 1)", "! (a == 1)"])
    func notCompound(format: String) throws {
        let compound = try #require(NSPredicate(format: format) as? NSCompoundPredicate)
        #expect(compound.compoundPredicateType == .not)
        #expect(compound.predicateFormat == "NOT a == 1")
    }

    @Test func andBindsTighterThanOr() throws {
        let compound = try #require(NSPredicate(format: "a == 1 OR b == 2 AND c == 3") as? NSCompoundPredicate)
        #expect(compound.compoundPredicateType == .or)
        let right = try #require(compound.subpredicates[1] as? NSCompoundPredicate)
        #expect(right.compoundPredicateType == .and)
        #expect(compound.predicateFormat == "a == 1 OR (b == 2 AND c == 3)")
    }

    @Test func chainsOfOneOperatorAreFlat() throws {
        let compound = try #require(NSPredicate(format: "a == 1 AND b == 2 AND c == 3") as? NSCompoundPredicate)
        #expect(compound.subpredicates.count == 3)
        #expect(compound.predicateFormat == "a == 1 AND b == 2 AND c == 3")
    }

    @Test func parenthesesKeepGroups() throws {
        let compound = try #require(NSPredicate(format: "(a == 1 OR b == 2) AND c == 3") as? NSCompoundPredicate)
        #expect(compound.compoundPredicateType == .and)
        #expect((compound.subpredicates[0] as? NSCompoundPredicate)?.compoundPredicateType == .or)
        #expect(compound.predicateFormat == "(a == 1 OR b == 2) AND c == 3")
    }

    // MARK: operation ::= "=" | "!=" | "<" | ">" | "<=" | ">=" | BETWEEN | aggregate_operations [ "[" options "]" ]

    @Test(arguments: [
        ("a = 1", NSComparisonPredicate.Operator.equalTo, "a == 1"),
        ("a == 1", .equalTo, "a == 1"),
        ("a != 1", .notEqualTo, "a != 1"),
        ("a <> 1", .notEqualTo, "a != 1"),
        ("a < 1", .lessThan, "a < 1"),
        ("a <= 1", .lessThanOrEqualTo, "a <= 1"),
        ("a =< 1", .lessThanOrEqualTo, "a <= 1"),
        ("a > 1", .greaterThan, "a > 1"),
        ("a >= 1", .greaterThanOrEqualTo, "a >= 1"),
        ("a => 1", .greaterThanOrEqualTo, "a >= 1"),
        ("a BETWEEN {1, 2}", .between, "a BETWEEN {1, 2}"),
        ("a IN {1, 2}", .in, "a IN {1, 2}"),
        ("a CONTAINS 'x'", .contains, "a CONTAINS \"x\""),
        ("a BEGINSWITH 'x'", .beginsWith, "a BEGINSWITH \"x\""),
        ("a ENDSWITH 'x'", .endsWith, "a ENDSWITH \"x\""),
        ("a LIKE 'x*'", .like, "a LIKE \"x*\""),
        ("a MATCHES 'x.*'", .matches, "a MATCHES \"x.*\""),
        ("a like 'x'", .like, "a LIKE \"x\""),
        ("a beginswith 'x'", .beginsWith, "a BEGINSWITH \"x\""),
    ])
    func operators(format: String, type: NSComparisonPredicate.Operator, printed: String) {
        let predicate = comparison(format)
        #expect(predicate.predicateOperatorType == type)
        #expect(predicate.comparisonPredicateModifier == .direct)
        #expect(predicate.options == [])
        #expect(predicate.predicateFormat == printed)
    }

    @Test(
        arguments: [
            ("name CONTAINS[c] 'x'", 1, "name CONTAINS[c] \"x\""),
            ("name CONTAINS[d] 'x'", 2, "name CONTAINS[d] \"x\""),
            ("name CONTAINS[cd] 'x'", 3, "name CONTAINS[cd] \"x\""),
            ("name CONTAINS[dc] 'x'", 3, "name CONTAINS[cd] \"x\""),
            ("name LIKE[n] 'x'", 4, "name LIKE[n] \"x\""),
            ("name BEGINSWITH[l] 'x'", 8, "name BEGINSWITH[l] \"x\""),
            ("name ==[cdl] 'x'", 11, "name ==[cdl] \"x\""),
            ("name <[ln] 'x'", 12, "name <[ln] \"x\""),
            ("name ==[c] 'x'", 1, "name ==[c] \"x\""),
            ("name IN[cd] {'x'}", 3, "name IN[cd] {\"x\"}"),
        ] as [(String, UInt, String)])
    func stringOptions(format: String, options: UInt, printed: String) {
        let predicate = comparison(format)
        #expect(predicate.options == NSComparisonPredicate.Options(rawValue: options))
        #expect(predicate.predicateFormat == printed)
    }

    // MARK: aggregate_qualifier ::= ANY | ALL | NONE | SOME

    @Test func aggregateQualifiers() throws {
        #expect(comparison("ANY children.age < 18").comparisonPredicateModifier == .any)
        #expect(comparison("SOME children.age < 18").comparisonPredicateModifier == .any)
        #expect(comparison("ALL children.age < 18").comparisonPredicateModifier == .all)
        #expect(comparison("any children.age < 18").predicateFormat == "ANY children.age < 18")
        #expect(comparison("ALL children.age < 18").predicateFormat == "ALL children.age < 18")
        // NONE is NOT (ANY …), as the syntax guide says.
        let none = try #require(NSPredicate(format: "NONE children.age < 18") as? NSCompoundPredicate)
        #expect(none.compoundPredicateType == .not)
        #expect((none.subpredicates[0] as? NSComparisonPredicate)?.comparisonPredicateModifier == .any)
        #expect(none.predicateFormat == "NOT ANY children.age < 18")
    }

    // MARK: expression ::= "(" expression ")" | binary_expression | function_expression | assignment_expression |
    //                      index_expression | keypath_expression | value_expression

    @Test func parenthesizedExpression() {
        let predicate = comparison("(a) == (1)")
        #expect(predicate.leftExpression.expressionType == .keyPath)
        #expect(predicate.rightExpression.constantValue as? Int == 1)
    }

    @Test(arguments: [
        ("a + 1 == 2", "add:to:", "a + 1 == 2"),
        ("a - 1 == 2", "from:subtract:", "a - 1 == 2"),
        ("a * 2 == 2", "multiply:by:", "a * 2 == 2"),
        ("a / 2 == 2", "divide:by:", "a / 2 == 2"),
        ("a ** 2 == 4", "raise:toPower:", "a ** 2 == 4"),
    ])
    func binaryExpressions(format: String, function: String, printed: String) {
        let predicate = comparison(format)
        #expect(predicate.leftExpression.expressionType == .function)
        #expect(predicate.leftExpression.function == function)
        #expect(predicate.leftExpression.arguments?.count == 2)
        #expect(predicate.predicateFormat == printed)
    }

    @Test func arithmeticPrecedenceAndAssociativity() {
        #expect(NSExpression(format: "1 + 2 * 3").expressionFormat == "1 + 2 * 3")
        #expect(NSExpression(format: "(1 + 2) * 3").expressionFormat == "(1 + 2) * 3")
        #expect(NSExpression(format: "1 - (2 - 3)").expressionFormat == "1 - (2 - 3)")
        #expect(NSExpression(format: "1 - 2 - 3").expressionFormat == "1 - 2 - 3")
        #expect(NSExpression(format: "1 + 2 * 3").expressionValue(with: nil, context: nil) as? Int == 7)
        #expect(NSExpression(format: "(1 + 2) * 3").expressionValue(with: nil, context: nil) as? Int == 9)
        #expect(NSExpression(format: "1 - 2 - 3").expressionValue(with: nil, context: nil) as? Int == -4)
        #expect(NSExpression(format: "2 ** 3 * 2").expressionValue(with: nil, context: nil) as? Double == 16)
    }

    /// The bitwise operators bind as in C: looser than `+` and `-`, `&` tighter than `^` tighter than `|`; they
    /// build the functions `bitwiseAnd:with:`, `bitwiseXor:with:` and `bitwiseOr:with:`, which print as calls.
    @Test func bitwiseOperators() {
        func value(_ format: String) -> Int? {
            NSExpression(format: format).expressionValue(with: ["a": 0b1100, "b": 0b1010], context: nil) as? Int
        }
        #expect(value("a & b") == 0b1000)
        #expect(value("a | b") == 0b1110)
        #expect(value("a ^ b") == 0b0110)
        #expect(value("1 | 2 ^ 3 & 6") == 1 | (2 ^ (3 & 6)))
        #expect(value("1 + 2 & 3") == (1 + 2) & 3)
        #expect(value("a & b | a ^ b") == (0b1100 & 0b1010) | (0b1100 ^ 0b1010))
        let and = NSExpression(format: "a & b + 1")
        #expect(and.function == "bitwiseAnd:with:")
        #expect(and.expressionFormat == "bitwiseAnd:with:(a, b + 1)")
        #expect(NSExpression(format: and.expressionFormat) == and)
        let predicate = NSPredicate(format: "flags & 4 == 4 && (mask | 1) != 0")
        #expect(predicate.evaluate(with: ["flags": 6, "mask": 0]))
        #expect(!predicate.evaluate(with: ["flags": 3, "mask": 0]))
    }

    /// `[l]` (Apple's NSLocaleSensitivePredicateOption) is kept and printed; results do not change with it.
    @Test func localeSensitiveOptionIsKept() {
        let predicate = NSPredicate(format: "name BEGINSWITH[cl] 'ab'")
        #expect(predicate.evaluate(with: ["name": "ABC"]))
        #expect(!predicate.evaluate(with: ["name": "xab"]))
        #expect(NSPredicate(format: predicate.predicateFormat) == predicate)
        #expect(NSPredicate(format: "name ==[l] 'x'") != NSPredicate(format: "name == 'x'"))
    }

    @Test func unaryMinus() {
        #expect(NSExpression(format: "-5").constantValue as? Int == -5)
        #expect(NSExpression(format: "-2.5").constantValue as? Double == -2.5)
        #expect(NSExpression(format: "- -5").constantValue as? Int == 5)
        let negated = NSExpression(format: "-a")
        #expect(negated.expressionType == .function)
        #expect(negated.expressionValue(with: ["a": 3], context: nil) as? Int == -3)
        #expect(NSExpression(format: "3 - -2").expressionValue(with: nil, context: nil) as? Int == 5)
    }

    @Test func builtinFunctionExpressions() {
        let sum = NSExpression(format: "sum({1, 2, 3})")
        #expect(sum.expressionType == .function)
        #expect(sum.function == "sum:")
        #expect(sum.arguments?.count == 1)
        #expect(sum.expressionFormat == "sum:({1, 2, 3})")
        let now = NSExpression(format: "now()")
        #expect(now.function == "now")
        #expect(now.arguments?.isEmpty == true)
        #expect(now.expressionFormat == "now()")
        #expect(NSExpression(format: "SQRT(4)").function == "sqrt:")
        #expect(NSExpression(format: "modulus:by:(7, 3)").function == "modulus:by:")
    }

    @Test func functionSyntax() {
        let expression = NSExpression(format: "FUNCTION(SELF, 'uppercaseString')")
        #expect(expression.expressionType == .function)
        #expect(expression.function == "uppercaseString")
        #expect(expression.operand.expressionType == .evaluatedObject)
        #expect(expression.arguments?.isEmpty == true)
        #expect(expression.expressionFormat == "FUNCTION(SELF, \"uppercaseString\")")
        let withArguments = NSExpression(format: "FUNCTION(name, 'stringByAppendingString:', 'x')")
        #expect(withArguments.arguments?.count == 1)
        #expect(withArguments.expressionFormat == "FUNCTION(name, \"stringByAppendingString:\", \"x\")")
    }

    @Test func assignmentExpression() {
        let expression = NSExpression(format: "$total := 4 + 5")
        #expect(expression.variable == "total")
        #expect(expression.expressionFormat == "$total := 4 + 5")
        let context = NSMutableDictionary()
        #expect(expression.expressionValue(with: nil, context: context) as? Int == 9)
        #expect(context["total"] as? Int == 9)
    }

    @Test func indexExpressions() {
        for (format, printed) in [
            ("items[FIRST]", "items[FIRST]"), ("items[last]", "items[LAST]"), ("items[SIZE]", "items[SIZE]"),
            ("items[1]", "items[1]"), ("attributes['color']", "attributes[\"color\"]"),
        ] {
            let expression = NSExpression(format: format)
            #expect(expression.function == "objectFrom:withIndex:", "\(format)")
            #expect(expression.expressionFormat == printed)
        }
        let object: [String: Any] = ["items": [10, 20, 30], "attributes": ["color": "red"]]
        #expect(NSExpression(format: "items[FIRST]").expressionValue(with: object, context: nil) as? Int == 10)
        #expect(NSExpression(format: "items[LAST]").expressionValue(with: object, context: nil) as? Int == 30)
        #expect(NSExpression(format: "items[SIZE]").expressionValue(with: object, context: nil) as? Int == 3)
        #expect(NSExpression(format: "items[1]").expressionValue(with: object, context: nil) as? Int == 20)
        #expect(NSExpression(format: "items[7]").expressionValue(with: object, context: nil) == nil)
        #expect(
            NSExpression(format: "attributes['color']").expressionValue(with: object, context: nil) as? String == "red")
    }

    @Test func keyPathExpressions() {
        let simple = NSExpression(format: "department.name")
        #expect(simple.expressionType == .keyPath)
        #expect(simple.keyPath == "department.name")
        #expect(NSExpression(format: "employees.@count").keyPath == "employees.@count")
        #expect(NSExpression(format: "@sum.items.price").keyPath == "@sum.items.price")
        #expect(NSExpression(format: "SELF.name").keyPath == "name")
        let variablePath = NSExpression(format: "$x.name")
        #expect(variablePath.expressionType == .keyPath)
        #expect(variablePath.keyPath == "name")
        #expect(variablePath.operand.variable == "x")
        #expect(variablePath.expressionFormat == "$x.name")
    }

    @Test func reservedWordsAsKeysWithHash() {
        let predicate = comparison("#size == 3")
        #expect(predicate.leftExpression.keyPath == "size")
        #expect(comparison("#first.#in == 'x'").leftExpression.keyPath == "first.in")
        let compound = NSPredicate(format: "#size == 3 AND #first.#in == 'x'")
        #expect(compound.predicateFormat == "#size == 3 AND #first.#in == \"x\"")
        #expect(compound.evaluate(with: ["size": 3, "first": ["in": "x"]]))
    }

    // MARK: value_expression ::= literal_value | literal_aggregate

    @Test func literalValues() {
        #expect(NSExpression(format: "'single'").constantValue as? String == "single")
        #expect(NSExpression(format: "\"double\"").constantValue as? String == "double")
        #expect(NSExpression(format: "42").constantValue as? Int == 42)
        #expect(NSExpression(format: "4.25").constantValue as? Double == 4.25)
        #expect(NSExpression(format: ".5").constantValue as? Double == 0.5)
        #expect(NSExpression(format: "1e3").constantValue as? Double == 1000)
        #expect(NSExpression(format: "2.5E-1").constantValue as? Double == 0.25)
        #expect(NSExpression(format: "0x1F").constantValue as? Int == 31)
        #expect(NSExpression(format: "0o17").constantValue as? Int == 15)
        #expect(NSExpression(format: "0b101").constantValue as? Int == 5)
        #expect(NSExpression(format: "NULL").constantValue == nil)
        #expect(NSExpression(format: "nil").constantValue == nil)
        #expect(NSExpression(format: "NULL").expressionType == .constantValue)
        #expect(NSExpression(format: "TRUE").constantValue as? Bool == true)
        #expect(NSExpression(format: "yes").constantValue as? Bool == true)
        #expect(NSExpression(format: "FALSE").constantValue as? Bool == false)
        #expect(NSExpression(format: "NO").constantValue as? Bool == false)
        #expect(NSExpression(format: "SELF").expressionType == .evaluatedObject)
        #expect(NSExpression(format: "$LAST_NAME").expressionType == .variable)
        #expect(NSExpression(format: "$LAST_NAME").variable == "LAST_NAME")
    }

    @Test func stringEscapes() {
        #expect(NSExpression(format: #"'it\'s'"#).constantValue as? String == "it's")
        #expect(NSExpression(format: #""say \"hi\"""#).constantValue as? String == "say \"hi\"")
        #expect(NSExpression(format: #"'a\nb\tc'"#).constantValue as? String == "a\nb\tc")
        #expect(NSExpression(format: #"'back\\slash'"#).constantValue as? String == "back\\slash")
        #expect(NSExpression(format: #"'\u00e9'"#).constantValue as? String == "é")
        #expect(NSExpression(format: "'Citroën 日本'").constantValue as? String == "Citroën 日本")
    }

    @Test func literalAggregates() throws {
        let aggregate = NSExpression(format: "{1, 'two', {3}}")
        #expect(aggregate.expressionType == .aggregate)
        let elements = try #require(aggregate.collection as? [NSExpression])
        #expect(elements.count == 3)
        #expect(elements[2].expressionType == .aggregate)
        #expect(aggregate.expressionFormat == "{1, \"two\", {3}}")
        #expect(NSExpression(format: "{}").expressionFormat == "{}")
        let value = try #require(aggregate.expressionValue(with: nil, context: nil) as? [Any])
        #expect(value.count == 3)
    }

    @Test func subqueryExpression() throws {
        let predicate = comparison("SUBQUERY(employees, $e, $e.salary > 1000 AND $e.age < 30).@count > 0")
        let count = predicate.leftExpression
        #expect(count.expressionType == .keyPath)
        #expect(count.keyPath == "@count")
        let subquery = count.operand
        #expect(subquery.expressionType == .subquery)
        #expect(subquery.variable == "e")
        #expect((subquery.collection as? NSExpression)?.keyPath == "employees")
        #expect(subquery.predicate is NSCompoundPredicate)
        #expect(
            predicate.predicateFormat
                == "SUBQUERY(employees, $e, $e.salary > 1000 AND $e.age < 30).@count > 0")
    }

    @Test func setExpressions() {
        let union = NSExpression(format: "{1, 2} UNION {2, 3}")
        #expect(union.expressionType == .unionSet)
        #expect(union.left.expressionType == .aggregate)
        #expect(union.expressionFormat == "{1, 2} UNION {2, 3}")
        #expect(NSExpression(format: "{1, 2} INTERSECT {2, 3}").expressionType == .intersectSet)
        #expect(NSExpression(format: "{1, 2} MINUS {2, 3}").expressionType == .minusSet)
    }

    @Test func ternaryAndCast() {
        let ternary = NSExpression(format: "TERNARY(age >= 18, 'adult', 'minor')")
        #expect(ternary.expressionType == .conditional)
        #expect(ternary.predicate.predicateFormat == "age >= 18")
        #expect(ternary.trueExpression.constantValue as? String == "adult")
        #expect(ternary.falseExpression.constantValue as? String == "minor")
        #expect(ternary.expressionFormat == "TERNARY(age >= 18, \"adult\", \"minor\")")
        let cast = NSExpression(format: "CAST(timestamp, 'NSDate')")
        #expect(cast.function == "castObject:toType:")
        #expect(cast.expressionFormat == "CAST(timestamp, \"NSDate\")")
        let date = NSExpression(format: "CAST(100.5, 'NSDate')")
        #expect(date.expressionType == .constantValue)
        #expect((date.constantValue as? Date)?.timeIntervalSinceReferenceDate == 100.5)
    }

    @Test func anyKey() {
        #expect(NSExpression(format: "ANYKEY").expressionType == .anyKey)
        #expect(NSExpression(format: "ANYKEY").expressionFormat == "ANYKEY")
    }

    @Test func keywordsAreCaseInsensitiveAndWhitespaceIsIgnored() {
        let predicate = NSPredicate(format: "  name   beginsWith[C]'a'   And   Any  tags  In  {'x'}  ")
        #expect(predicate.predicateFormat == "name BEGINSWITH[c] \"a\" AND ANY tags IN {\"x\"}")
    }

    // MARK: Lexical structure: keys, strings, whitespace and numbers beyond ASCII and decimal

    @Test(arguments: [
        ("café == 1", "café == 1"),
        ("名前 BEGINSWITH 'x'", "名前 BEGINSWITH \"x\""),
        ("größe.höhe > 2", "größe.höhe > 2"),
        ("Straße_2 == 'x' AND ñandú != 3", "Straße_2 == \"x\" AND ñandú != 3"),
        ("Ωmega.日本語 < 1", "Ωmega.日本語 < 1"),
    ])
    func nonASCIIKeys(format: String, printed: String) {
        #expect(NSPredicate(format: format).predicateFormat == printed)
    }

    @Test func nonASCIIKeysEvaluate() {
        #expect(NSPredicate(format: "größe > 2 AND 名前 == 'x'").evaluate(with: ["größe": 3, "名前": "x"]))
        // A combining mark belongs to the key it follows.
        let decomposed = comparison("cafe\u{301} == 1")
        #expect(decomposed.leftExpression.keyPath.unicodeScalars.elementsEqual("cafe\u{301}".unicodeScalars))
    }

    @Test func nonASCIIStringLiterals() {
        for text in ["👩‍👩‍👧 🇫🇷🇩🇪", "Zoë", "東京", "e\u{301}", "👍🏽x", "ñ"] {
            let expression = NSExpression(format: "'\(text)'")
            let value = expression.constantValue as? String
            #expect(value?.unicodeScalars.elementsEqual(text.unicodeScalars) == true, "\(text)")
        }
        #expect(NSExpression(format: #"'é\n日本\t'"#).constantValue as? String == "é\n日本\t")
        #expect(NSExpression(format: #"'é\u00e9é'"#).constantValue as? String == "ééé")
        #expect(NSExpression(format: #""d'où \"ça\"""#).constantValue as? String == "d'où \"ça\"")
        #expect(
            NSPredicate(format: "name == 'Zoë' AND city IN {'東京', 'Paris'}").predicateFormat
                == "name == \"Zoë\" AND city IN {\"東京\", \"Paris\"}")
    }

    @Test func unicodeWhitespaceSeparatesTokens() {
        // No-break space, em space, ideographic space, line separator, next line and ogham space mark.
        let predicate = NSPredicate(format: "a\u{A0}==\u{2003}1\u{3000}AND\u{2028}b\u{85}<\u{1680}2")
        #expect(predicate.predicateFormat == "a == 1 AND b < 2")
        let lines = NSPredicate(format: "a == 1\r\nAND\tb == 2\n\r\nOR\u{B}\u{C}c == 3\r")
        #expect(lines.predicateFormat == "(a == 1 AND b == 2) OR c == 3")
    }

    @Test func hashEscapesAnyKeyword() {
        #expect(NSPredicate(format: "#AND == 1").predicateFormat == "#AND == 1")
        #expect(comparison("#like == 1").leftExpression.keyPath == "like")
        #expect(comparison("#TruePredicate.#nil == 1").leftExpression.keyPath == "TruePredicate.nil")
        #expect(NSPredicate(format: "#name == 1").predicateFormat == "name == 1")
        #expect(
            NSPredicate(format: "#self == 1 OR #Between.#in == 2").predicateFormat
                == "#self == 1 OR #Between.#in == 2")
        #expect(NSPredicate(format: "#size == 1").evaluate(with: ["size": 1]))
    }

    @Test func keywordsInAnyCase() {
        #expect(
            NSPredicate(format: "a BeTwEeN {1, 2} aNd NoT b iN {3} oR c eNdSwItH 'x'").predicateFormat
                == "(a BETWEEN {1, 2} AND NOT b IN {3}) OR c ENDSWITH \"x\"")
        #expect(NSExpression(format: "Nil").constantValue == nil)
        #expect(NSExpression(format: "yEs").constantValue as? Bool == true)
        #expect(NSExpression(format: "SeLf").expressionType == .evaluatedObject)
        // Keys that merely start with a keyword stay keys.
        #expect(NSPredicate(format: "android == 1 OR order == 2").predicateFormat == "android == 1 OR order == 2")
        #expect(NSPredicate(format: "INDEX == 1 AND nothing == 2").predicateFormat == "INDEX == 1 AND nothing == 2")
    }

    #if !canImport(CoreData)
    /// A keyword is whatever `uppercased()` turns into one, so case mappings beyond ASCII count: the dotless ı
    /// uppercases to I, the long ſ to S. A key spelled so prints escaped.
    @Test func keywordsFollowUnicodeCaseMapping() {
        #expect(NSPredicate(format: "a ın {1}").predicateFormat == "a IN {1}")
        #expect(NSExpression(format: "ſelf").expressionType == .evaluatedObject)
        #expect(NSPredicate(format: "#ın == 1").predicateFormat == "#ın == 1")
        #expect(NSPredicate(format: "ınk == 1").predicateFormat == "ınk == 1")
    }
    #endif

    @Test(
        arguments: [
            ("0xff", 255), ("0XFF", 255), ("0x7FFFFFFFFFFFFFFF", Int64.max), ("0o777", 511), ("0O17", 15),
            ("0b1010", 10), ("0B1", 1), ("007", 7), ("0", 0), ("9223372036854775807", Int64.max), ("-0x10", -16),
        ] as [(String, Int64)])
    func integerLiterals(format: String, value: Int64) {
        let expression = NSExpression(format: format)
        #expect(expression.expressionType == .constantValue)
        #expect((expression.constantValue as? NSNumber)?.int64Value == value, "\(format)")
    }

    @Test func integerLiteralsBeyondInt64() {
        #expect(NSPredicate(format: "a == 0xFFFFFFFFFFFFFFFF").predicateFormat == "a == 18446744073709551615")
        #expect(NSPredicate(format: "a == 9223372036854775808").predicateFormat == "a == 9223372036854775808")
        #expect((NSExpression(format: "18446744073709551615").constantValue as? NSNumber)?.uint64Value == .max)
        // Past UInt64, a decimal integer is read as a double.
        #expect(NSExpression(format: "18446744073709551616").constantValue as? Double == 18_446_744_073_709_551_616)
    }

    @Test(
        arguments: [
            ("1.5", 1.5), (".25", 0.25), ("0.5", 0.5), ("1e3", 1000), ("1E+3", 1000), ("2.5e-3", 0.0025),
            ("12.5E2", 1250), ("7e0", 7), ("1e-07", 1e-07),
        ] as [(String, Double)])
    func realLiterals(format: String, value: Double) {
        #expect(NSExpression(format: format).constantValue as? Double == value, "\(format)")
    }

    @Test func numbersNextToOperators() {
        #expect(NSPredicate(format: "a==1&&b<=2.5||c>=1e2").predicateFormat == "(a == 1 AND b <= 2.5) OR c >= 100")
        #expect(NSExpression(format: "2**3").expressionValue(with: nil, context: nil) as? Double == 8)
        #expect(NSExpression(format: "0x10-1").expressionValue(with: nil, context: nil) as? Int == 15)
        // An `e` not followed by digits ends the number: here it is the key of a multiplication's right side.
        #expect(NSExpression(format: "2*e").expressionFormat == "2 * e")
    }

    @Test func formatSpecifiersNextToOtherText() {
        #expect(NSPredicate(format: "serial == %lld", Int64(12)).predicateFormat == "serial == 12")
        #expect(
            NSPredicate(format: "a == %lu AND b == %hd AND c == %qd", UInt(1), Int16(2), Int64(3)).predicateFormat
                == "a == 1 AND b == 2 AND c == 3")
        #expect(NSPredicate(format: "%K == %@", "名前", "値").predicateFormat == "名前 == \"値\"")
        #expect(NSPredicate(format: "größe>%d&&x<%ld", 1, 2).predicateFormat == "größe > 1 AND x < 2")
        #expect(NSPredicate(format: "(%K)==(%@)", "a", "b").predicateFormat == "a == \"b\"")
        #expect(NSPredicate(format: "a == %%").predicateFormat == "a == \"%\"")
    }

    @Test func quotingPreventsSubstitution() {
        let predicate = comparison("name == '%@'")
        #expect(predicate.rightExpression.constantValue as? String == "%@")
        let variable = comparison("name == \"$x\"")
        #expect(variable.rightExpression.constantValue as? String == "$x")
    }
}
