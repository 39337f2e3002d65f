import Foundation
import OpenCoreDataShim
import Testing

/// One format parsed again and again with new arguments — as code that builds its predicate where it fetches does —
/// gives each time the predicate of those arguments: printed, compared and evaluated as if it were the first.
@Suite struct PredicateFormatRepetitionTests {
    @Test func eachCallTakesItsOwnArguments() {
        let format = "age > %d AND name == %@"
        for (age, name) in [(30, "Ada"), (41, "Bo"), (30, "Ada"), (7, "Cy")] {
            let predicate = NSPredicate(format: format, age, name)
            #expect(predicate.predicateFormat == "age > \(age) AND name == \"\(name)\"")
            #expect(predicate == NSPredicate(format: "age > \(age) AND name == '\(name)'"))
            #expect(predicate.evaluate(with: ["age": age + 1, "name": name]))
            #expect(!predicate.evaluate(with: ["age": age, "name": name]))
        }
        #expect(NSPredicate(format: format, 1, "x") !== NSPredicate(format: format, 1, "x"))
    }

    @Test func argumentsOfOtherKindsInTheSameFormat() {
        let format = "value IN %@ OR value == %@"
        let first = NSPredicate(format: format, argumentArray: [[1, 2, 3], NSNull()])
        #expect(first.predicateFormat == "value IN {1, 2, 3} OR value == <null>")
        #expect(first.evaluate(with: ["value": 2]))
        #expect(first.evaluate(with: [String: Any]()))
        let second = NSPredicate(format: format, argumentArray: [["a", "b"], "z"])
        #expect(second.evaluate(with: ["value": "z"]))
        #expect(!second.evaluate(with: ["value": 2]))
        let date = Date(timeIntervalSinceReferenceDate: 1000)
        let third = NSPredicate(format: format, argumentArray: [[Int](), date])
        #expect(third.evaluate(with: ["value": date]))
        #expect(!third.evaluate(with: ["value": 1]))
    }

    @Test func numberConversionsFollowTheirSpecifiers() {
        for argument in [2.75, 3.0, -0.5] {
            #expect(NSPredicate(format: "v == %f", argument).evaluate(with: ["v": argument]))
            #expect(!NSPredicate(format: "v == %f", argument).evaluate(with: ["v": argument + 1]))
        }
        for argument in [5, -6, 7] {
            #expect(NSPredicate(format: "v == %d", argument).predicateFormat == "v == \(argument)")
            // A minus before an argument makes a negative constant of it.
            #expect(NSPredicate(format: "v == -%d", argument).predicateFormat == "v == \(-argument)")
        }
    }

    /// One-argument comparisons with a modifier, options or an operator that takes a collection, several formats
    /// taking turns: each call is the predicate of its own format and argument, as the parser makes it.
    @Test func oneArgumentComparisonsTakingTurns() {
        let cases: [(format: String, arguments: [Any], literal: String, matching: [String: Any])] = [
            ("ANY tags == %@", ["red"], "ANY tags == 'red'", ["tags": ["blue", "red"]]),
            ("name BEGINSWITH[cd] %@", ["ÉL"], "name BEGINSWITH[cd] 'ÉL'", ["name": "eleanor"]),
            ("v BETWEEN %@", [[2, 4]], "v BETWEEN {2, 4}", ["v": 3]),
            ("v IN %@", [[7, 8]], "v IN {7, 8}", ["v": 8]),
            ("ANY tags == %@", ["blue"], "ANY tags == 'blue'", ["tags": ["blue"]]),
            ("name BEGINSWITH[cd] %@", ["an"], "name BEGINSWITH[cd] 'an'", ["name": "Ann"]),
            ("v BETWEEN %@", [[10, 20]], "v BETWEEN {10, 20}", ["v": 20]),
            ("v IN %@", [[1]], "v IN {1}", ["v": 1]),
        ]
        for (format, arguments, literal, matching) in cases {
            let predicate = NSPredicate(format: format, argumentArray: arguments)
            let expected = NSPredicate(format: literal)
            #expect(predicate == expected, "\(format) with \(arguments)")
            #expect(predicate.predicateFormat == expected.predicateFormat)
            #expect(predicate.evaluate(with: matching), "\(format) with \(arguments)")
            #expect(!predicate.evaluate(with: ["v": 0, "name": "zed", "tags": ["green"]]))
        }
    }

    /// Large collections, small ones and large ones again in one format (OpenCoreData checks a format's template
    /// only with small collections, since checking compares and prints every element): each call is the predicate
    /// of its own collection.
    @Test func collectionsOfEverySizeInOneFormat() {
        let format = "serial IN %@"
        for size in [1_000, 40, 3, 0, 1_000, 17] {
            let values = (0..<size).map { Int64($0 * 7) }
            let predicate = NSPredicate(format: format, values)
            let expected = NSComparisonPredicate(
                leftExpression: NSExpression(forKeyPath: "serial"),
                rightExpression: NSExpression(forConstantValue: values),
                modifier: .direct, type: .in, options: [])
            #expect(predicate == expected, "\(size) values")
            #expect(predicate.predicateFormat == expected.predicateFormat, "\(size) values")
            #expect(predicate.evaluate(with: ["serial": Int64(size - 1) * 7]) == (size > 0), "\(size) values")
            #expect(!predicate.evaluate(with: ["serial": Int64(size) * 7]), "\(size) values")
        }
        let names = NSArray(array: (0..<100).map { "name \($0)" })
        #expect(NSPredicate(format: "name IN %@", names).evaluate(with: ["name": "name 99"]))
        #expect(!NSPredicate(format: "name IN %@", Set(["a", "b"])).evaluate(with: ["name": "name 99"]))
    }

    @Test func keyPathArgumentsNameTheirOwnKeys() {
        for key in ["age", "name", "age"] {
            let predicate = NSPredicate(format: "%K == %@", key, "x")
            #expect(predicate.predicateFormat == "\(key) == \"x\"")
            #expect(predicate.evaluate(with: [key: "x"]))
        }
    }

    @Test func aMismatchedArgumentIsReportedAfterGoodOnes() throws {
        let format = "age > %d"
        #expect(NSPredicate(format: format, 3).evaluate(with: ["age": 4]))
        #expect(NSPredicate(format: format, 4).evaluate(with: ["age": 5]))
        #expect(throws: NSError.self) { try NSPredicate(validatingFormat: format, argumentArray: ["not a number"]) }
        #expect(throws: NSError.self) { try NSPredicate(validatingFormat: format, argumentArray: []) }
        #expect(NSPredicate(format: format, 5).evaluate(with: ["age": 6]))
    }

    @Test func substitutionVariablesAndSubqueriesKeepWorking() {
        let format = "age > $minimum AND SUBQUERY(children, $c, $c.age < %d).@count == %d"
        for (limit, count) in [(10, 1), (20, 2)] {
            let predicate = NSPredicate(format: format, limit, count).withSubstitutionVariables(["minimum": 30])
            let person: [String: Any] = ["age": 40, "children": [["age": 5], ["age": 15]]]
            #expect(predicate.evaluate(with: person))
            #expect(!predicate.evaluate(with: ["age": 20, "children": person["children"]!]))
        }
    }
}
