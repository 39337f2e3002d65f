// A file that imports only Foundation, as code written for Apple platforms does where it builds predicates and sort
// descriptors without touching Core Data (they are Foundation's classes there). With the OpenCoreDataFoundationNames
// plugin applied to the target, the names mean OpenCoreData's working classes here too.
import Foundation
import FoundationOnlyLibrary
import Testing

@Suite struct FoundationOnlyImportTests {
    @Test func predicatesExpressionsAndSortDescriptorsWork() {
        let predicate = NSPredicate(format: "age > %d AND name BEGINSWITH[c] %@", 30, "a")
        #expect(predicate.evaluate(with: ["age": 36, "name": "Ada"]))
        #expect(!predicate.evaluate(with: ["age": 36, "name": "Grace"]))
        let comparison = NSComparisonPredicate(
            leftExpression: NSExpression(forKeyPath: "age"), rightExpression: NSExpression(forConstantValue: 40),
            modifier: .direct, type: .lessThan)
        let both = NSCompoundPredicate(andPredicateWithSubpredicates: [predicate, comparison])
        #expect(both.predicateFormat == #"(age > 30 AND name BEGINSWITH[c] "a") AND age < 40"#)
        let sorted = ([["n": 2], ["n": 1]] as NSArray).sortedArray(using: [NSSortDescriptor(key: "n", ascending: true)])
        #expect((sorted.first as? [String: Int])?["n"] == 1)
    }
}

/// A library built with the plugin, whose public API uses the names: its predicates and sort descriptors work here.
@Suite struct FoundationOnlyLibraryTests {
    @Test func aLibrarysPublicAndInlinableAPIUsesOpenCoreDatasClasses() {
        let people: [[String: Any]] = [
            ["name": "Ada", "age": 36], ["name": "Bo", "age": 12], ["name": "Ada", "age": 40],
        ]
        let adults = Queries.both(Queries.adults(from: 18), Queries.matching("name", "Ada"))
        #expect(people.filter { adults.evaluate(with: $0) }.count == 2)
        let sorted = (people as NSArray).sortedArray(using: Queries.byNameThenAge) as! [[String: Any]]
        #expect(sorted.map { $0["age"] as! Int } == [40, 36, 12])
        #expect(Queries.value(of: "age").expressionValue(with: ["age": 7], context: nil) as? Int == 7)
    }
}
