import Foundation
import OpenCoreDataShim
import Testing

/// `NSExpressionDescription` in both of Apple's spellings: `expressionResultType` (`NSAttributeType`) and the Swift
/// `resultType` (`NSAttributeDescription.AttributeType`) that libraries written since iOS 15 use.
@Suite struct ExpressionDescriptionTests {
    @Test func resultTypeIsExpressionResultTypeInTheSwiftSpelling() {
        let description = NSExpressionDescription()
        #expect(description.resultType == .undefined)
        description.resultType = .decimal
        #expect(description.expressionResultType == .decimalAttributeType)
        description.expressionResultType = .dateAttributeType
        #expect(description.resultType == .date)
        #expect(description.copy() is NSExpressionDescription)
        #expect((description.copy() as? NSExpressionDescription)?.resultType == .date)
    }

    @Test(arguments: BatchStoreKind.all)
    func aResultTypeSetInTheSwiftSpellingShapesTheFetchedValues(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind)
        let total = NSExpressionDescription()
        total.name = "total"
        total.expression = NSExpression(forFunction: "sum:", arguments: [NSExpression(forKeyPath: "salary")])
        total.resultType = .double
        let context = stack.context()
        let rows = try context.performAndWait {
            let request = NSFetchRequest<NSDictionary>(entityName: "BatchWorker")
            request.resultType = .dictionaryResultType
            request.propertiesToFetch = [total]
            request.predicate = NSPredicate(format: "salary <= 200")
            return try context.fetch(request)
        }
        // ann 100 + bob 200, as a double.
        #expect(rows.count == 1)
        #expect(rows.first?["total"] as? Double == 300)
    }
}
