// swift-format-ignore-file: OrderedImports
// The framework first, then Foundation: the same names must resolve the same way (see
// ImportFoundationFirstTests), here also as stored property types, protocol conformances and subclasses.
#if canImport(CoreData)
import CoreData
#else
import OpenCoreData
#endif
import Foundation
import FoundationOnlyLibrary
import Testing

private protocol Summarizing {
    var summary: String { get }
}

extension NSExpression: Summarizing {
    fileprivate var summary: String { "expression \(description)" }
}

private final class AdultPredicate: NSComparisonPredicate, @unchecked Sendable {
    convenience init() {
        self.init(
            leftExpression: NSExpression(forKeyPath: "age"), rightExpression: NSExpression(forConstantValue: 18),
            modifier: .direct, type: .greaterThanOrEqualTo, options: [])
    }
}

private struct Query<Filter: NSPredicate> {
    var filter: Filter
    var order: [NSSortDescriptor]
}

@Suite struct ImportOpenCoreDataFirstTests {
    @Test func subclassesAndGenericStoredPropertiesUseTheFrameworkClasses() {
        let query = Query(filter: AdultPredicate(), order: [NSSortDescriptor(key: "age", ascending: true)])
        #expect(query.filter.predicateFormat == "age >= 18")
        #expect(query.filter.evaluate(with: ["age": 40]))
        #expect(!query.filter.evaluate(with: ["age": 4]))
        #expect(query.order[0].key == "age")
        let types: [NSPredicate.Type] = [NSComparisonPredicate.self, NSCompoundPredicate.self]
        #expect(types.count == 2)
    }

    @Test func extensionsConformTheFrameworkClasses() {
        let summarizing: any Summarizing = NSExpression(format: "age + 1")
        #expect(summarizing.summary == "expression age + 1")
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
