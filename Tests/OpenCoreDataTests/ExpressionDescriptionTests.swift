import Foundation
import OpenCoreDataShim
import Testing

/// `NSExpressionDescription` in both of Apple's spellings: `expressionResultType` (`NSAttributeType`) and the Swift
/// `resultType` (`NSAttributeDescription.AttributeType`) that libraries written since iOS 15 use.
@Suite struct ExpressionDescriptionTests {
    /// The names of the workers matching `format`, in order.
    static func names(in stack: BatchStack, matching format: String) throws -> [String] {
        let context = stack.context()
        return try context.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "BatchWorker")
            request.predicate = NSPredicate(format: format)
            request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            return try context.fetch(request).compactMap { $0.value(forKey: "name") as? String }
        }
    }

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
        total.resultType = .decimal
        let rows = try DictionaryResultTests.fetch(stack) { request in
            request.propertiesToFetch = [total]
            request.predicate = NSPredicate(format: "salary <= 200")
        }
        // ann 100 + bob 200, as a decimal number (without the result type, an integer).
        #expect(rows.count == 1)
        #expect((rows.first?["total"] as? NSDecimalNumber)?.decimalValue == 300)
    }

    /// A grouped fetch may name an expression description that is not an aggregate — here a to-many relationship's
    /// count, in the shape CoreDataQueryInterface builds (`languages.name.@count`): each group gets the value of its
    /// objects (one object per group here).
    @Test(arguments: BatchStoreKind.all)
    func aGroupedFetchTakesAnExpressionOfEachGroup(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind)
        let projects = NSExpressionDescription()
        projects.name = "@count"
        projects.expression = NSExpression(forKeyPath: "projects.title.@count")
        projects.resultType = .integer64
        let rows = try DictionaryResultTests.fetch(stack) { request in
            request.propertiesToGroupBy = ["name"]
            request.propertiesToFetch = ["name", projects]
            request.predicate = NSPredicate(format: "salary <= 300")
            request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        }
        #expect(rows.compactMap { $0["name"] as? String } == ["ann", "bob", "cy"])
        #expect(rows.compactMap { ($0["@count"] as? NSNumber)?.int64Value } == [1, 2, 0])
    }

    /// The count of a to-many relationship's values (`projects.title.@count`) counts each value once, in a predicate
    /// as in memory.
    @Test(arguments: BatchStoreKind.all)
    func theCountOfADestinationsValuesInAPredicate(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind)
        #expect(try Self.names(in: stack, matching: "projects.title.@count == 2") == ["bob"])
    }

    /// An expression description without an expression names a property by its name, as any property description
    /// does (CoreDataQueryInterface selects columns this way).
    @Test(arguments: BatchStoreKind.all)
    func anExpressionDescriptionWithoutAnExpressionNamesAProperty(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind)
        let name = NSExpressionDescription()
        name.name = "name"
        let rows = try DictionaryResultTests.fetch(stack) { request in
            request.propertiesToFetch = [name]
            request.predicate = NSPredicate(format: "salary <= 200")
            request.sortDescriptors = [NSSortDescriptor(key: "salary", ascending: true)]
        }
        #expect(rows.compactMap { $0["name"] as? String } == ["ann", "bob"])
    }

    /// ANY and ALL over a lone value range over that value (and over nothing when it is nil), in SQL as in memory:
    /// CoreDataQueryInterface writes `SUBQUERY(languages, $v, ANY $v.name == "Rust")`.
    @Test(arguments: BatchStoreKind.all)
    func anyAndAllOverALoneValue(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind)
        func names(_ format: String) throws -> [String] { try Self.names(in: stack, matching: format) }
        #expect(try names("SUBQUERY(projects, $p, ANY $p.title == 'gemini').@count > 0") == ["bob"])
        // Workers without a badge: ANY finds nothing to match, ALL nothing to fail.
        #expect(try names("ANY badge.code != 'A1'") == ["bob", "dee"])
        #expect(try names("ALL badge.code == 'A1'") == ["ann", "cy", "eve", "max"])
    }
}
