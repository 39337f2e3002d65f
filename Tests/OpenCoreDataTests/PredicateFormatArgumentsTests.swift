import OpenCoreDataShim
import Testing

/// `%@ %K %d %i %ld %lld %u %f %lf %s %%` and `argumentArray:`.
@Suite struct PredicateFormatArgumentsTests {
    @Test func objectArguments() {
        #expect(NSPredicate(format: "name == %@", "Adam").predicateFormat == "name == \"Adam\"")
        #expect(NSPredicate(format: "age == %@", NSNumber(value: 30)).predicateFormat == "age == 30")
        #expect(NSPredicate(format: "ratio == %@", NSNumber(value: 0.5)).predicateFormat == "ratio == 0.5")
        let date = Date(timeIntervalSinceReferenceDate: 86_400)
        #expect(
            NSPredicate(format: "birthday > %@", date as NSDate).predicateFormat
                == "birthday > CAST(86400.000000, \"NSDate\")")
        #expect(NSPredicate(format: "name IN %@", ["a", "b"] as NSArray).predicateFormat == "name IN {\"a\", \"b\"}")
        #expect(NSPredicate(format: "parent == %@", NSNull()).predicateFormat == "parent == <null>")
    }

    @Test func keyPathArguments() {
        let predicate = NSPredicate(format: "%K like %@", "firstName", "Adam")
        #expect(predicate.predicateFormat == "firstName LIKE \"Adam\"")
        let comparison = predicate as? NSComparisonPredicate
        #expect(comparison?.leftExpression.expressionType == .keyPath)
        #expect(comparison?.leftExpression.keyPath == "firstName")
        #expect(NSPredicate(format: "%K == 1", "department.name").predicateFormat == "department.name == 1")
    }

    @Test func integerArguments() {
        #expect(NSPredicate(format: "a == %d", 42).predicateFormat == "a == 42")
        #expect(NSPredicate(format: "a == %i", Int32(-3)).predicateFormat == "a == -3")
        #expect(NSPredicate(format: "a == %ld", 7).predicateFormat == "a == 7")
        #expect(NSPredicate(format: "a == %lld", Int64.max).predicateFormat == "a == 9223372036854775807")
        #expect(NSPredicate(format: "a == %u", UInt32(5)).predicateFormat == "a == 5")
        #expect(NSPredicate(format: "a == %lu", UInt(6)).predicateFormat == "a == 6")
        #expect(NSPredicate(format: "a == %d", 42).evaluate(with: ["a": 42]))
    }

    @Test func floatingPointArguments() {
        #expect(NSPredicate(format: "a == %f", 2.5).predicateFormat == "a == 2.5")
        #expect(NSPredicate(format: "a == %lf", 0.25).predicateFormat == "a == 0.25")
        #expect(NSPredicate(format: "a > %f", 1.5).evaluate(with: ["a": 2]))
    }

    @Test func percentLiteral() {
        let expression = NSExpression(format: "%%")
        #expect(expression.constantValue as? String == "%")
    }

    @Test func argumentArray() {
        let predicate = NSPredicate(format: "%K == %@ AND age > %d", argumentArray: ["name", "Bo", 3])
        #expect(predicate.predicateFormat == "name == \"Bo\" AND age > 3")
        #expect(predicate.evaluate(with: ["name": "Bo", "age": 4]))
        let none = NSPredicate(format: "a == 1", argumentArray: nil)
        #expect(none.predicateFormat == "a == 1")
        let expression = NSExpression(format: "%K + %@", argumentArray: ["a", 2])
        #expect(expression.expressionValue(with: ["a": 1], context: nil) as? Int == 3)
    }

    @Test func optionalArguments() {
        let none: Int? = nil
        let some: Int? = 3
        #expect(NSPredicate(format: "a == %@", argumentArray: [none as Any]).predicateFormat == "a == nil")
        #expect(NSPredicate(format: "a == %@", argumentArray: [some as Any]).predicateFormat == "a == 3")
        #expect(NSPredicate(format: "a == %d", argumentArray: [some as Any]).predicateFormat == "a == 3")
        let name: String? = "name"
        #expect(NSPredicate(format: "%K == 1", argumentArray: [name as Any]).predicateFormat == "name == 1")
    }

    @Test func wildcardsGoInsideTheArgument() {
        // From "Predicate Format String Syntax": the wildcards belong in the substituted string.
        let prefix = "prefix"
        let suffix = "suffix"
        let predicate = NSPredicate(format: "SELF like[c] %@", prefix + "*" + suffix)
        #expect(predicate.predicateFormat == "SELF LIKE[c] \"prefix*suffix\"")
        #expect(predicate.evaluate(with: "prefixxxxxxsuffix"))
        // Substituting the parts separately gives a multiplication, as the guide warns.
        let wrong = NSPredicate(format: "SELF like[c] %@*%@", prefix, suffix)
        #expect(wrong.predicateFormat == "SELF LIKE[c] \"prefix\" * \"suffix\"")
    }

    #if !canImport(CoreData)
    @Test func swiftValuesAsArguments() {
        // On Apple platforms these values bridge to objects; here they are CVarArg themselves.
        let date = Date(timeIntervalSinceReferenceDate: 10)
        #expect(NSPredicate(format: "d == %@", date).evaluate(with: ["d": date]))
        #expect(NSPredicate(format: "d == %@", date as CVarArg).evaluate(with: ["d": date]))
        let id = UUID()
        #expect(NSPredicate(format: "u == %@", id).evaluate(with: ["u": id]))
        #expect(NSPredicate(format: "n IN %@", [1, 2]).evaluate(with: ["n": 2]))
        #expect(NSPredicate(format: "n IN %@", Set([1, 2])).evaluate(with: ["n": 2]))
        #expect(NSPredicate(format: "n == %@", Decimal(string: "1.5")!).evaluate(with: ["n": 1.5]))
        #expect(NSPredicate(format: "flag == %@", true).evaluate(with: ["flag": true]))
        #expect(NSPredicate(format: "s == %s", "c").evaluate(with: ["s": "c"]))
    }
    #endif
}
