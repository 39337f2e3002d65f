import Foundation
import OpenCoreDataShim
import Testing

/// `FETCH(request, context, countOnly)`: Core Data's fetch request expression, which migration mappings use to
/// select the source objects of an entity mapping.
@Suite struct FetchRequestExpressionTests {
    @Test func aFetchExpressionEvaluatesToTheObjectsOrTheirCount() throws {
        let context = CompanyModel.context()
        try context.performAndWait {
            _ = try ManagedObjectContextTests.seed(context, employees: ["Ada", "Bea", "Cleo"])
            let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            request.predicate = NSPredicate(format: "firstName != %@", "Bea")
            let objects = NSFetchRequestExpression.expression(
                forFetch: NSExpression(forConstantValue: request), context: NSExpression(forConstantValue: context),
                countOnly: false)
            #expect(objects.expressionType == .fetchRequest)
            let found = objects.expressionValue(with: nil, context: nil) as? [NSManagedObject] ?? []
            #expect(Set(found.compactMap { $0.value(forKey: "firstName") as? String }) == ["Ada", "Cleo"])

            // The request and the context may come from variables, as $manager does in a mapping model.
            let counting = NSExpression(format: "FETCH($request, $context, YES)")
            let bindings = NSMutableDictionary(dictionary: ["request": request, "context": context])
            #expect((counting.expressionValue(with: nil, context: bindings) as? NSNumber)?.intValue == 2)
            #expect(counting.expressionType == .fetchRequest)
            let fetch = try #require(objects as? NSFetchRequestExpression)
            #expect(!fetch.isCountOnlyRequest)
            #expect(fetch.requestExpression == NSExpression(forConstantValue: request))
            #expect(fetch.contextExpression == NSExpression(forConstantValue: context))
        }
    }

    /// The printed form is Apple's (as a compiled mapping model's description shows it) and parses back.
    @Test func aFetchExpressionPrintsAndParsesBack() {
        let format =
            #"FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Car", "TRUEPREDICATE"), "#
            + "$manager.sourceContext, NO)"
        let expression = NSExpression(format: format)
        #expect(expression.expressionType == NSFetchRequestExpressionType)
        #expect(expression.description == format)
        #expect(NSExpression(format: expression.description) == expression)
        #expect(NSExpression(format: "FETCH($r, $c, YES)") != NSExpression(format: "FETCH($r, $c, NO)"))
    }

    @Test func aMalformedFetchIsRefused() {
        for format in ["FETCH($r, $c)", "FETCH($r, $c, name)", "FETCH($r)"] {
            #expect(throws: (any Error).self) { try NSExpression(validatingFormat: format, argumentArray: []) }
        }
    }
}
