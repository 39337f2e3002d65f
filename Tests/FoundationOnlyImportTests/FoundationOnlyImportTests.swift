// A file that imports only Foundation, as code written for Apple platforms does where it builds predicates and sort
// descriptors without touching Core Data (they are Foundation's classes there). With the OpenCoreDataFoundationNames
// plugin applied to the target, the names mean OpenCoreData's working classes here too.
import Foundation
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
