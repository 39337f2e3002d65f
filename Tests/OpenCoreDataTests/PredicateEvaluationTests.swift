import OpenCoreDataShim
import Testing

/// Every operator against every kind of value it accepts, with Foundation's comparison semantics.
@Suite struct PredicateEvaluationTests {
    private func holds(_ format: String, _ object: Any?, _ args: Any...) -> Bool {
        NSPredicate(format: format, argumentArray: args).evaluate(with: object)
    }

    private func value(_ v: Any) -> [String: Any] {
        ["v": v]
    }

    // MARK: Numbers compare by value across representations

    @Test func numbersCompareAcrossTypes() {
        let thirty: [Any] = [
            30, Int8(30), Int16(30), Int32(30), Int64(30), UInt(30), UInt8(30), UInt16(30), UInt32(30), UInt64(30),
            30.0, Float(30), Decimal(30), NSNumber(value: 30), NSNumber(value: 30.0), NSDecimalNumber(value: 30),
        ]
        for left in thirty {
            for right in thirty {
                #expect(holds("v == %@", value(left), right), "\(type(of: left)) == \(type(of: right))")
                #expect(!holds("v != %@", value(left), right))
                #expect(holds("v <= %@ AND v >= %@", value(left), right, right))
                #expect(!holds("v < %@ OR v > %@", value(left), right, right))
            }
            #expect(holds("v < 30.5", value(left)), "\(type(of: left)) < 30.5")
            #expect(holds("v > 29.99", value(left)))
            #expect(holds("v BETWEEN {30, 31}", value(left)))
            #expect(holds("v IN {1, 30.0}", value(left)))
        }
    }

    @Test func largeIntegersCompareExactly() {
        let big = Int64.max
        #expect(holds("v == %@", value(big), NSNumber(value: big)))
        #expect(!holds("v == %@", value(big), NSNumber(value: big - 1)))
        #expect(holds("v > %@", value(UInt64.max), NSNumber(value: Int64.max)))
        #expect(holds("v < 0", value(Int64.min)))
    }

    @Test func booleansAreNumbers() {
        #expect(holds("v == YES", value(true)))
        #expect(holds("v == TRUE", value(NSNumber(value: true))))
        #expect(holds("v == 1", value(true)))
        #expect(holds("v == NO", value(false)))
        #expect(holds("v == FALSE", value(0)))
        #expect(!holds("v == YES", value(false)))
    }

    @Test func decimalsKeepPrecision() {
        let price = Decimal(string: "0.1")! + Decimal(string: "0.2")!
        #expect(holds("v == %@", value(price), NSDecimalNumber(string: "0.3")))
        #expect(holds("v > %@", value(NSDecimalNumber(string: "10.01")), NSDecimalNumber(string: "10")))
    }

    /// Decimals cannot hold infinities: casting one gives NaN, which equals nothing, instead of stopping.
    @Test func infinitiesCastToDecimalsAreNotANumber() {
        #expect(!NSPredicate(format: "CAST(1e400, 'NSDecimalNumber') == 1").evaluate(with: nil))
        #expect(!NSPredicate(format: "CAST(-1e400, 'NSDecimalNumber') > 0").evaluate(with: nil))
        #expect(NSPredicate(format: "CAST(2.5, 'NSDecimalNumber') == 2.5").evaluate(with: nil))
    }

    /// `nil` elements are one value to the set operators, however many `NSNull`s stand for them.
    @Test func setOperatorsKeepOneNil() {
        let values: [Any] = (0..<64).map { _ in NSNull() } + Array(0..<64)
        let union = NSExpression(format: "%@ UNION %@", argumentArray: [values, [NSNull()]])
        let result = union.expressionValue(with: nil, context: nil) as? Set<AnyHashable>
        #expect(result?.count == 65)
    }

    // MARK: Strings

    @Test func stringEquality() {
        #expect(holds("v == 'abc'", value("abc")))
        #expect(holds("v == 'abc'", value(NSString(string: "abc"))))
        #expect(!holds("v == 'ABC'", value("abc")))
        #expect(holds("v ==[c] 'ABC'", value("abc")))
        #expect(!holds("v ==[c] 'abé'", value("abe")))
        #expect(holds("v ==[d] 'abé'", value("abe")))
        #expect(holds("v ==[cd] 'ABÉ'", value("abe")))
        #expect(holds("v != 'x'", value("abc")))
    }

    @Test func stringOrderingIsByCodePoint() {
        #expect(holds("v < 'b'", value("a")))
        #expect(holds("v < 'a'", value("B")))
        #expect(holds("v <[c] 'b'", value("A")))
        #expect(holds("v BETWEEN {'a', 'c'}", value("b")))
        #expect(!holds("v > 5", value("9")))
    }

    @Test func unicodeCaseFoldingAndDiacritics() {
        #expect(holds("v ==[c] 'STRASSE'", value("straße")))
        #expect(holds("v CONTAINS[cd] 'citroen'", value("Citroën C4")))
        #expect(holds("v BEGINSWITH[cd] 'ÉCOLE'", value("ecole normale")))
        #expect(holds("v ENDSWITH[c] 'ΣΟΣ'", value("λογοσος")))
        #expect(!holds("v CONTAINS 'citroen'", value("Citroën")))
    }

    @Test func beginsWithEndsWithContains() {
        #expect(holds("v BEGINSWITH 'ab'", value("abc")))
        #expect(!holds("v BEGINSWITH 'AB'", value("abc")))
        #expect(holds("v BEGINSWITH[c] 'AB'", value("abc")))
        #expect(holds("v ENDSWITH 'bc'", value("abc")))
        #expect(!holds("v ENDSWITH 'ab'", value("abc")))
        #expect(holds("v CONTAINS 'b'", value("abc")))
        #expect(!holds("v CONTAINS 'x'", value("abc")))
        #expect(!holds("v BEGINSWITH 'a'", value(1)))
        #expect(!holds("v CONTAINS 'a'", [String: Any]()))
    }

    @Test func like() {
        #expect(holds("v LIKE 'a*c'", value("abbbc")))
        #expect(holds("v LIKE 'a*c'", value("ac")))
        #expect(holds("v LIKE 'a?c'", value("abc")))
        #expect(!holds("v LIKE 'a?c'", value("abbc")))
        #expect(!holds("v LIKE 'a*'", value("ba")))
        #expect(holds("v LIKE '*'", value("")))
        #expect(holds("v LIKE[c] 'A*'", value("abc")))
        #expect(holds("v LIKE[cd] 'CITRO?N'", value("citroën")))
        #expect(holds(#"v LIKE 'a\*'"#, value("a*")))
        #expect(!holds(#"v LIKE 'a\*'"#, value("ab")))
        #expect(holds("v LIKE '*x*y*z*'", value("axbyczd")))
    }

    @Test func matchesIsAFullStringRegularExpression() {
        #expect(holds("v MATCHES 'work.*'", value("workshop")))
        #expect(!holds("v MATCHES 'work'", value("workshop")))
        #expect(!holds("v MATCHES 'shop'", value("workshop")))
        #expect(holds("v MATCHES '[0-9]{3}-[0-9]{4}'", value("555-1234")))
        #expect(holds("v MATCHES[c] 'WORK.*'", value("workshop")))
        #expect(holds("v MATCHES 'a|ab'", value("ab")))
        #expect(!holds("v MATCHES '('", value("(")))
    }

    // MARK: Dates

    @Test func dates() {
        let noon = Date(timeIntervalSinceReferenceDate: 1_000)
        let later = Date(timeIntervalSinceReferenceDate: 2_000)
        #expect(holds("v == %@", value(noon), noon as NSDate))
        #expect(holds("v < %@", value(noon), later as NSDate))
        #expect(holds("v > %@", value(later as NSDate), noon))
        #expect(holds("v BETWEEN %@", value(noon), [noon, later]))
        #expect(holds("v IN %@", value(noon), [later, noon]))
        #expect(holds("v > CAST(500, 'NSDate')", value(noon)))
        #expect(holds("v == CAST(1000.000000, \"NSDate\")", value(noon)))
    }

    // MARK: nil and NSNull

    @Test func nilAndNull() {
        let missing: [String: Any] = [:]
        #expect(holds("v == nil", missing))
        #expect(holds("v == NULL", value(NSNull())))
        #expect(!holds("v != nil", missing))
        #expect(holds("v != nil", value(0)))
        #expect(!holds("v == nil", value(0)))
        #expect(!holds("v < 5", missing))
        #expect(!holds("v > 5", missing))
        #expect(!holds("v <= 5", missing))
        #expect(!holds("v BEGINSWITH 'a'", missing))
        #expect(!holds("v IN {1, 2}", missing))
        #expect(holds("v == %@", missing, NSNull()))
    }

    // MARK: IN and CONTAINS over collections and strings

    @Test func inOverCollections() {
        #expect(holds("v IN {'Ben', 'Melissa', 'Nick'}", value("Ben")))
        #expect(!holds("v IN {'Ben', 'Melissa', 'Nick'}", value("Bob")))
        #expect(holds("v IN[c] {'ben'}", value("BEN")))
        #expect(holds("v IN %@", value(2), [1, 2, 3]))
        #expect(holds("v IN %@", value(2), Set([1, 2, 3])))
        #expect(holds("v IN %@", value(2), NSArray(array: [1, 2])))
        #expect(holds("v IN %@", value(2), NSSet(array: [2])))
        #expect(holds("v IN %@", value(2), NSOrderedSet(array: [2])))
        #expect(holds("v IN %@", value("x"), ["key": "x"]))
        #expect(!holds("v IN %@", value("key"), ["key": "x"]))
        #expect(holds("v IN 'abcdef'", value("cde")))
        #expect(!holds("v IN 'abcdef'", value("xyz")))
    }

    @Test func containsOverCollections() {
        #expect(holds("v CONTAINS 2", value([1, 2, 3])))
        #expect(!holds("v CONTAINS 5", value([1, 2, 3])))
        #expect(holds("v CONTAINS 'b'", value(Set(["a", "b"]))))
        #expect(holds("v CONTAINS[c] 'B'", value(NSArray(array: ["a", "b"]))))
        #expect(holds("v CONTAINS %@", value(NSSet(array: [1])), 1))
    }

    @Test func collectionEquality() {
        #expect(holds("v == %@", value([1, 2]), [1, 2]))
        #expect(!holds("v == %@", value([1, 2]), [2, 1]))
        #expect(holds("v == %@", value(Set([1, 2])), Set([2, 1])))
        #expect(holds("v == {1, 2}", value([1, 2])))
    }

    // MARK: ANY, ALL, NONE over to-many key paths

    @Test func aggregateQualifiersOverToMany() {
        let parent: [String: Any] = ["children": [["age": 10], ["age": 14]]]
        #expect(holds("ANY children.age > 12", parent))
        #expect(!holds("ALL children.age > 12", parent))
        #expect(holds("ALL children.age > 9", parent))
        #expect(holds("NONE children.age > 20", parent))
        #expect(!holds("NONE children.age > 12", parent))
        #expect(holds("SOME children.age == 10", parent))
        let childless: [String: Any] = ["children": [[String: Any]]()]
        #expect(!holds("ANY children.age > 0", childless))
        #expect(holds("ALL children.age > 0", childless))
        #expect(holds("NONE children.age > 0", childless))
        let set: [String: Any] = ["tags": Set(["a", "b"])]
        #expect(holds("ANY tags == 'b'", set))
        #expect(holds("ANY tags IN {'x', 'a'}", set))
        #expect(holds("ANY tags BEGINSWITH[c] 'B'", set))
    }

    @Test func anyRangesOverNestedToManyRelationships() {
        let company: [String: Any] = [
            "departments": Set([
                NSDictionary(dictionary: ["employees": Set(["Ann", "Bob"])]),
                NSDictionary(dictionary: ["employees": Set(["Cy"])]),
            ])
        ]
        #expect(holds("ANY departments.employees == 'Cy'", company))
        #expect(!holds("ANY departments.employees == 'Dee'", company))
        #expect(!holds("ALL departments.employees BEGINSWITH 'A'", company))
        #expect(holds("ALL departments.employees IN {'Ann', 'Bob', 'Cy'}", company))
    }

    @Test func keyPathAcrossToManyWithoutQualifierIsACollection() {
        let parent: [String: Any] = ["children": [["age": 10], ["age": 14]]]
        #expect(!holds("children.age == 10", parent))
        #expect(holds("children.age CONTAINS 10", parent))
        #expect(holds("10 IN children.age", parent))
    }

    // MARK: Collection operators in key paths

    @Test func collectionOperators() {
        let order: [String: Any] = ["items": [["price": 10], ["price": 25.5], ["price": 4]]]
        #expect(holds("items.@count == 3", order))
        #expect(holds("items.@sum.price == 39.5", order))
        #expect(holds("items.@avg.price > 13 AND items.@avg.price < 13.2", order))
        #expect(holds("items.@min.price == 4", order))
        #expect(holds("items.@max.price == 25.5", order))
        #expect(holds("@sum.price < 1000", order["items"]))
        #expect(holds("SELF.@count == 3", order["items"]))
    }

    // MARK: SUBQUERY, TERNARY, arithmetic in comparisons

    @Test func subquery() {
        let department: [String: Any] = [
            "employees": [["name": "A", "salary": 10], ["name": "B", "salary": 20], ["name": "C", "salary": 30]]
        ]
        #expect(holds("SUBQUERY(employees, $e, $e.salary >= 20).@count == 2", department))
        #expect(holds("SUBQUERY(employees, $e, $e.salary > 100).@count == 0", department))
        #expect(holds("SUBQUERY(employees, $e, $e.name == 'B' AND $e.salary == 20).@count == 1", department))
        let matching =
            NSExpression(format: "SUBQUERY(employees, $e, $e.salary > 15)")
            .expressionValue(with: department, context: nil) as? [Any]
        #expect(matching?.count == 2)
    }

    @Test func arithmeticInComparisons() {
        #expect(holds("salary * 1.5 > 100", ["salary": 70]))
        #expect(!holds("salary * 1.5 > 100", ["salary": 60]))
        #expect(holds("a + b == c", ["a": 1, "b": 2, "c": 3]))
        #expect(holds("TERNARY(age >= 18, 'adult', 'minor') == 'adult'", ["age": 20]))
        #expect(holds("TERNARY(age >= 18, 'adult', 'minor') == 'minor'", ["age": 10]))
    }

    // MARK: Compound predicates

    @Test func compoundEvaluation() {
        #expect(holds("a == 1 AND b == 2", ["a": 1, "b": 2]))
        #expect(!holds("a == 1 AND b == 2", ["a": 1, "b": 3]))
        #expect(holds("a == 1 OR b == 2", ["a": 0, "b": 2]))
        #expect(!holds("a == 1 OR b == 2", ["a": 0, "b": 0]))
        #expect(holds("NOT a == 1", ["a": 2]))
        #expect(NSCompoundPredicate(andPredicateWithSubpredicates: []).evaluate(with: nil))
        #expect(!NSCompoundPredicate(orPredicateWithSubpredicates: []).evaluate(with: nil))
    }

    // MARK: Other value kinds

    @Test func uuidsDataAndURLs() {
        let id = UUID()
        #expect(holds("v == %@", value(id), id as NSUUID))
        #expect(!holds("v == %@", value(id), NSUUID()))
        let bytes = Data([1, 2, 3])
        #expect(holds("v == %@", value(bytes), bytes as NSData))
        let url = URL(string: "https://example.com/a")!
        #expect(holds("v == %@", value(url), url as NSURL))
        #expect(!holds("v == %@", value(id), id.uuidString))
    }

    @Test func selfComparisons() {
        #expect(holds("SELF == 'x'", "x"))
        #expect(holds("SELF > 3", 4))
        #expect(holds("SELF IN %@", "Shaffiq", ["Stig", "Shaffiq", "Chris"]))
    }

    @Test func blockPredicate() {
        let predicate = NSPredicate { object, bindings in
            (object as? Int ?? 0) > (bindings?["min"] as? Int ?? 0)
        }
        #expect(predicate.evaluate(with: 5, substitutionVariables: ["min": 3]))
        #expect(!predicate.evaluate(with: 2, substitutionVariables: ["min": 3]))
    }

    @Test func substitutionVariables() {
        let template = NSPredicate(format: "lastName LIKE[c] $LAST_NAME AND age > $AGE")
        let predicate = template.withSubstitutionVariables(["LAST_NAME": "Turner", "AGE": 30])
        #expect(predicate.predicateFormat == "lastName LIKE[c] \"Turner\" AND age > 30")
        #expect(predicate.evaluate(with: ["lastName": "turner", "age": 31]))
        #expect(
            template.evaluate(
                with: ["lastName": "turner", "age": 31],
                substitutionVariables: ["LAST_NAME": "Turner", "AGE": 30]))
        #expect(
            !template.evaluate(
                with: ["lastName": "turner", "age": 31],
                substitutionVariables: ["LAST_NAME": "Turner", "AGE": 40]))
        let between = NSPredicate(format: "$INPUT BETWEEN {$LOWER, $UPPER}")
        #expect(between.evaluate(with: nil, substitutionVariables: ["INPUT": 5, "LOWER": 1, "UPPER": 10]))
        #expect(!between.evaluate(with: nil, substitutionVariables: ["INPUT": 50, "LOWER": 1, "UPPER": 10]))
    }

    @Test func customSelectorComparisonWithAStandardMethod() {
        let predicate = NSComparisonPredicate(
            leftExpression: NSExpression(forKeyPath: "name"), rightExpression: NSExpression(forConstantValue: "Bo"),
            customSelector: Selector("hasPrefix:"))
        #expect(predicate.predicateOperatorType == .customSelector)
        #expect(predicate.customSelector == Selector("hasPrefix:"))
        #expect(predicate.evaluate(with: ["name": "Bob"]))
        #expect(!predicate.evaluate(with: ["name": "Al"]))
    }

    #if !canImport(CoreData)
    @Test func onePredicateEvaluatesConcurrently() async {
        let predicate = NSPredicate(format: "name MATCHES '[a-z]+[0-9]' AND n > 10 AND name LIKE[c] 'X*'")
        let counts = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    let objects: [[String: Any]] = (0..<2_000).map { ["name": "x\($0 % 10)", "n": $0] }
                    return objects.filtered(using: predicate).count
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(counts == [1_989, 1_989, 1_989, 1_989])
    }
    #endif
}
