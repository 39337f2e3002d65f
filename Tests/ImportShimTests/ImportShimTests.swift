// swift-format-ignore-file: OrderedImports
// Through the shim, with Foundation imported after it: the shim re-exports OpenCoreData, and with it the names that
// win over Foundation's (see ImportFoundationFirstTests).
import OpenCoreDataShim
import Foundation
import Testing

@Suite struct ImportShimTests {
    @Test func namesThroughTheShimResolveToTheFrameworkClasses() throws {
        let predicate = NSPredicate(format: "tags CONTAINS %@", "swift")
        #expect(predicate.evaluate(with: ["tags": ["swift", "linux"]]))
        let not = NSCompoundPredicate(notPredicateWithSubpredicate: predicate)
        #expect(!not.evaluate(with: ["tags": ["swift"]]))
        let count: NSExpression = NSExpression(forFunction: "count:", arguments: [NSExpression(forKeyPath: "tags")])
        #expect(count.expressionValue(with: ["tags": ["a", "b"]], context: nil) as? Int == 2)
        let reversed = NSSortDescriptor(key: "n", ascending: true).reversedSortDescriptor
        let descriptor = try #require(reversed as? NSSortDescriptor)
        #expect(!descriptor.ascending)
    }
}
