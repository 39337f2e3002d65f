// swift-format-ignore-file: OrderedImports
// The framework first, then Foundation: the same names must resolve the same way (see
// ImportFoundationFirstTests), here also as stored property types, protocol conformances and subclasses.
#if canImport(CoreData)
import CoreData
#else
import OpenCoreData
#endif
import Foundation
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
