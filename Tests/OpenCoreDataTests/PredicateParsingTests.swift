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

    @Test func quotingPreventsSubstitution() {
        let predicate = comparison("name == '%@'")
        #expect(predicate.rightExpression.constantValue as? String == "%@")
        let variable = comparison("name == \"$x\"")
        #expect(variable.rightExpression.constantValue as? String == "$x")
    }
}
