// swift-format-ignore-file: OrderedImports
// Foundation first, then the framework: Apple's unqualified names must mean the classes that work. Each use below
// is a place where Swift looks a type name up in its own way (type position, expression, cast, extension, generic
// constraint, member type); an ambiguity fails the build of this target, so building it is most of the test.
import Foundation

#if canImport(CoreData)
import CoreData
#else
import OpenCoreData
#endif
import FoundationOnlyLibrary
import Testing

extension NSPredicate {
    fileprivate static func named(_ name: String) -> NSPredicate { NSPredicate(format: "name == %@", name) }
}

extension NSSortDescriptor {
    fileprivate static let byNameDescending = NSSortDescriptor(key: "name", ascending: false)
}

private func firstMatch<P: NSPredicate>(_ predicate: P, in values: [[String: Any]]) -> [String: Any]? {
    values.first { predicate.evaluate(with: $0) }
}

@Suite struct ImportFoundationFirstTests {
    let people: [[String: Any]] = [["name": "Ada", "age": 36], ["name": "Grace", "age": 85]]

    @Test func predicatesFromFormatsEvaluate() {
        let predicate: NSPredicate = .named("Grace")
        #expect(firstMatch(predicate, in: people)?["age"] as? Int == 85)
        let compound = NSCompoundPredicate(andPredicateWithSubpredicates: [predicate, NSPredicate(format: "age > 80")])
        #expect(compound.compoundPredicateType == NSCompoundPredicate.LogicalType.and)
        #expect(compound.predicateFormat == #"name == "Grace" AND age > 80"#)
    }

    @Test func castsFindTheComparisonClass() {
        let parsed: Any = NSPredicate(format: "age >= 40")
        let comparison = parsed as? NSComparisonPredicate
        #expect(comparison?.predicateOperatorType == NSComparisonPredicate.Operator.greaterThanOrEqualTo)
        #expect(comparison?.leftExpression.expressionType == NSExpression.ExpressionType.keyPath)
        #expect(parsed is NSPredicate)
    }

    @Test func expressionsAndSortDescriptorsWork() {
        let age = NSExpression(forKeyPath: "age")
        #expect(age.expressionValue(with: people[0], context: nil) as? Int == 36)
        let sorted = (people as NSArray).sortedArray(using: [NSSortDescriptor.byNameDescending])
        #expect((sorted.first as? [String: Any])?["name"] as? String == "Grace")
    }
}

/// A library whose files import only Foundation, built with the OpenCoreDataFoundationNames plugin: what its public
/// API returns is what the names here mean, and a fetch request takes it.
@Suite struct FoundationOnlyLibraryClientTests {
    @Test func theLibrarysPredicatesAndSortDescriptorsAreTheOnesHere() {
        let adults: NSPredicate = Queries.adults(from: 18)
        let both: NSCompoundPredicate = Queries.both(adults, NSPredicate(format: "name != nil"))
        let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
        request.predicate = both
        request.sortDescriptors = Queries.byNameThenAge
        let key: NSExpression = Queries.value(of: "name")
        #expect(request.predicate?.predicateFormat == "age >= 18 AND name != nil")
        #expect(request.sortDescriptors?.map { $0.key } == ["name", "age"])
        #expect(key.keyPath == "name")
    }
}
