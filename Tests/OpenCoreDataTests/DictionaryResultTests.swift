import Foundation
import OpenCoreDataShim
import Testing

#if !canImport(CoreData)
@_spi(Testing) import OpenCoreDataCore
#endif

/// Dictionary results: properties and key paths, `NSExpressionDescription`s with aggregates and arithmetic,
/// `propertiesToGroupBy`, `havingPredicate`, `returnsDistinctResults`, order, offset and limit — the same from every
/// store (the SQLite store computes them with one SELECT).
@Suite struct DictionaryResultTests {
    static func expression(_ name: String, _ function: String, _ keyPath: String, type: NSAttributeType? = nil)
        -> NSExpressionDescription
    {
        let description = NSExpressionDescription()
        description.name = name
        description.expression = NSExpression(forFunction: function, arguments: [NSExpression(forKeyPath: keyPath)])
        if let type { description.expressionResultType = type }
        return description
    }

    static func computed(_ name: String, _ format: String, type: NSAttributeType) -> NSExpressionDescription {
        let description = NSExpressionDescription()
        description.name = name
        description.expression = NSExpression(format: format)
        description.expressionResultType = type
        return description
    }

    static func fetch(_ stack: BatchStack, _ configure: (NSFetchRequest<NSDictionary>) -> Void) throws -> [NSDictionary]
    {
        let context = stack.context()
        return try context.performAndWait {
            let request = NSFetchRequest<NSDictionary>(entityName: "BatchWorker")
            request.resultType = .dictionaryResultType
            configure(request)
            return try context.fetch(request)
        }
    }

    @Test(arguments: BatchStoreKind.all)
    func propertiesAndKeyPathsThroughToOneRelationships(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind)
        let rows = try Self.fetch(stack) { request in
            request.propertiesToFetch = ["name", "salary", "department.name", "department", "badge.code"]
            request.predicate = NSPredicate(format: "salary < 450")
            request.sortDescriptors = [NSSortDescriptor(key: "salary", ascending: false)]
        }
        #expect(rows.compactMap { $0["name"] as? String } == ["dee", "cy", "bob", "ann"])
        #expect(rows.compactMap { ($0["salary"] as? NSNumber)?.int64Value } == [400, 300, 200, 100])
        #expect(rows.compactMap { $0["department.name"] as? String } == ["Lab", "Sales", "Sales", "Sales"])
        #expect(rows.map { $0["badge.code"] as? String } == ["D1", nil, "B1", "A1"])
        let sales = try stack.objectID("BatchDepartment", "Sales")
        #expect(rows[1]["department"] as? NSManagedObjectID == sales)
        // Keys without a value are left out.
        #expect(rows[1].allKeys.count == 4)
    }

    @Test(arguments: BatchStoreKind.all)
    func aggregatesOverAllMatchingObjects(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind)
        let aggregates = [
            Self.expression("total", "sum:", "salary"), Self.expression("count", "count:", "salary"),
            Self.expression("lowest", "min:", "salary"), Self.expression("highest", "max:", "rating"),
            Self.expression("mean", "average:", "salary"), Self.expression("first", "min:", "name"),
        ]
        let rows = try Self.fetch(stack) { $0.propertiesToFetch = aggregates }
        #expect(rows.count == 1)
        let row = try #require(rows.first)
        #expect((row["total"] as? NSNumber)?.int64Value == 2100)
        #expect((row["count"] as? NSNumber)?.intValue == 6)
        #expect((row["lowest"] as? NSNumber)?.int64Value == 100)
        #expect((row["highest"] as? NSNumber)?.doubleValue == 5)
        #expect((row["mean"] as? NSNumber)?.doubleValue == 350)
        #expect(row["first"] as? String == "ann")

        // Over nothing: a count of zero, and no other values.
        let none = try Self.fetch(stack) { request in
            request.propertiesToFetch = aggregates
            request.predicate = NSPredicate(format: "salary > 10000")
        }
        #expect(none.count == 1)
        #expect(none.first?.allKeys as? [String] == ["count"])
        #expect((none.first?["count"] as? NSNumber)?.intValue == 0)
    }

    @Test(arguments: BatchStoreKind.all)
    func groupsWithAHavingPredicate(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind)
        let columns: [Any] = [
            "department.name", Self.expression("total", "sum:", "salary"), Self.expression("people", "count:", "name"),
            Self.expression("best", "max:", "rating"),
        ]
        let groups = try Self.fetch(stack) { request in
            request.propertiesToFetch = columns
            request.propertiesToGroupBy = ["department.name"]
        }
        #expect(groups.compactMap { $0["department.name"] as? String } == ["Lab", "Sales"])
        #expect(groups.compactMap { ($0["total"] as? NSNumber)?.int64Value } == [1500, 600])
        #expect(groups.compactMap { ($0["people"] as? NSNumber)?.intValue } == [3, 3])
        #expect(groups.compactMap { ($0["best"] as? NSNumber)?.doubleValue } == [5, 4])

        for having in [NSPredicate(format: "$total > 1000"), NSPredicate(format: "total > 1000")] {
            let rich = try Self.fetch(stack) { request in
                request.propertiesToFetch = columns
                request.propertiesToGroupBy = ["department.name"]
                request.havingPredicate = having
            }
            #expect(rich.compactMap { $0["department.name"] as? String } == ["Lab"])
        }

        let descending = try Self.fetch(stack) { request in
            request.propertiesToFetch = columns
            request.propertiesToGroupBy = ["department.name"]
            request.sortDescriptors = [NSSortDescriptor(key: "department.name", ascending: false)]
            request.fetchLimit = 1
        }
        #expect(descending.compactMap { $0["department.name"] as? String } == ["Sales"])
    }

    @Test(arguments: BatchStoreKind.all)
    func groupsOfAToOneRelationshipAndOfAnAttribute(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind)
        let byDepartment = try Self.fetch(stack) { request in
            request.propertiesToFetch = ["department", Self.expression("people", "count:", "name")]
            request.propertiesToGroupBy = ["department"]
        }
        let sales = try stack.objectID("BatchDepartment", "Sales")
        let lab = try stack.objectID("BatchDepartment", "Lab")
        #expect(byDepartment.compactMap { $0["department"] as? NSManagedObjectID } == [sales, lab])
        let byLevel = try Self.fetch(stack) { request in
            request.propertiesToFetch = ["level", Self.expression("lowest", "min:", "salary")]
            request.propertiesToGroupBy = ["level"]
        }
        #expect(byLevel.count == 1)
        #expect((byLevel.first?["lowest"] as? NSNumber)?.int64Value == 100)
    }

    @Test(arguments: BatchStoreKind.all)
    func distinctResultsComeInTheOrderOfTheirFirstObject(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind)
        let rows = try Self.fetch(stack) { request in
            request.propertiesToFetch = ["department.name", "active"]
            request.returnsDistinctResults = true
        }
        #expect(rows.compactMap { $0["department.name"] as? String } == ["Sales", "Lab"])
        let offset = try Self.fetch(stack) { request in
            request.propertiesToFetch = ["department.name"]
            request.returnsDistinctResults = true
            request.fetchOffset = 1
        }
        #expect(offset.compactMap { $0["department.name"] as? String } == ["Lab"])
    }

    @Test(arguments: BatchStoreKind.all)
    func expressionsOfEachObject(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind)
        let rows = try Self.fetch(stack) { request in
            request.propertiesToFetch = [
                "name", Self.computed("double", "salary * 2", type: .integer64AttributeType),
                Self.computed("eighth", "salary / 8", type: .doubleAttributeType),
                Self.computed("third", "salary / 3", type: .integer64AttributeType),
            ]
            request.predicate = NSPredicate(format: "name IN {'ann', 'cy'}")
            request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        }
        #expect(rows.compactMap { ($0["double"] as? NSNumber)?.int64Value } == [200, 600])
        #expect(rows.compactMap { ($0["eighth"] as? NSNumber)?.doubleValue } == [12.5, 37.5])
        #expect(rows.compactMap { ($0["third"] as? NSNumber)?.int64Value } == [33, 100])
    }

    @Test(arguments: BatchStoreKind.all)
    func datesComeBackAsDates(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind)
        let early = Date(timeIntervalSinceReferenceDate: 600_000_000)
        let late = Date(timeIntervalSinceReferenceDate: 700_000_000)
        let context = stack.context()
        try context.performAndWait {
            for (name, date) in [("ann", early), ("bob", late)] {
                let update = NSBatchUpdateRequest(entityName: "BatchWorker")
                update.predicate = NSPredicate(format: "name == %@", name)
                update.propertiesToUpdate = ["hired": date]
                _ = try context.execute(update)
            }
        }
        let rows = try Self.fetch(stack) { request in
            request.propertiesToFetch = [
                Self.expression("first", "min:", "hired"), Self.expression("last", "max:", "hired"),
            ]
        }
        #expect(rows.first?["first"] as? Date == early)
        #expect(rows.first?["last"] as? Date == late)
    }

    /// Dictionaries describe what the store has: unsaved changes do not count, as Apple documents.
    @Test(arguments: BatchStoreKind.all)
    func unsavedChangesDoNotCount(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind)
        let context = stack.context()
        let count = try context.performAndWait {
            let worker = NSEntityDescription.insertNewObject(forEntityName: "BatchWorker", into: context)
            worker.setValue("zed", forKey: "name")
            let request = NSFetchRequest<NSDictionary>(entityName: "BatchWorker")
            request.resultType = .dictionaryResultType
            request.propertiesToFetch = [Self.expression("count", "count:", "name")]
            return (try context.fetch(request).first?["count"] as? NSNumber)?.intValue
        }
        #expect(count == 6)
    }

    #if !canImport(CoreData)
    @Test func theSQLiteStoreComputesDictionariesWithOneStatement() throws {
        let stack = try BatchStack(BatchStoreKind.sqlite)
        let recorder = SQLiteStatementRecorder()
        defer { recorder.stop() }
        let rows = try Self.fetch(stack) { request in
            request.propertiesToFetch = ["department.name", Self.expression("total", "sum:", "salary")]
            request.propertiesToGroupBy = ["department.name"]
            request.havingPredicate = NSPredicate(format: "$total > %d", 1000)
        }
        #expect(rows.count == 1)
        let statements = recorder.statements.filter { $0.contains("ZBATCHWORKER") && $0.contains("HAVING") }
        #expect(statements.count == 1)
        #expect(statements.first?.contains("1000") == false)
    }

    @Test func whatSQLCannotComputeIsRefusedByTheSQLiteStoreOnly() throws {
        for kind in BatchStoreKind.all {
            let stack = try BatchStack(kind)
            let fetch = {
                try Self.fetch(stack) { request in
                    request.propertiesToFetch = [Self.computed("loud", "uppercase(name)", type: .stringAttributeType)]
                    request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
                }
            }
            if kind == .sqlite {
                BatchUpdateRequestTests.expectError({ _ = try fetch() }, code: 134_091, key: nil)
            } else {
                #expect(try fetch().first?["loud"] as? String == "ANN")
            }
        }
    }
    #endif
}
