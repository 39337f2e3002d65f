import Foundation
import OpenCoreData
import Testing

extension StoreConformanceCase {
    static let dictionaryResults: [StoreConformanceCase] = [
        StoreConformanceCase("Dictionary results compute arithmetic and follow to-one key paths") { fixture in
            let stack = try ConformanceStack(fixture)
            try ConformanceData.populate(stack.newContext())
            let context = stack.newContext()
            try context.run {
                let request = NSFetchRequest<NSDictionary>(entityName: "Employee")
                request.resultType = .dictionaryResultType
                request.propertiesToFetch = [
                    "name",
                    expression("sum", "add:to:", ["salary", "age"], .doubleAttributeType),
                    expression("doubled", "multiply:by:", ["age", 2], .integer64AttributeType),
                    expression("half", "divide:by:", ["age", 2], .doubleAttributeType),
                    "department.head.name",
                ]
                request.predicate = NSPredicate(format: "department != nil")
                request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
                let rows = try context.fetch(request)
                #expect(rows.map { $0["name"] as? String } == ["Ann", "Bob", "Cid", "Émile"])
                #expect(rows.map { ($0["sum"] as? NSNumber)?.doubleValue } == [154.5, 108, 140.25, 98])
                #expect(rows.map { ($0["doubled"] as? NSNumber)?.int64Value } == [68, 56, 90, 76])
                #expect(rows.map { ($0["half"] as? NSNumber)?.doubleValue } == [17, 14, 22.5, 19])
                #expect(rows.map { $0["department.head.name"] as? String } == ["Ann", "Ann", "Cid", "Cid"])

                // Grouped by a key path two relationships long; the group without a destination comes first.
                let grouped = NSFetchRequest<NSDictionary>(entityName: "Employee")
                grouped.resultType = .dictionaryResultType
                grouped.propertiesToFetch = ["department.head.name", aggregate("count", "count:", "name")]
                grouped.propertiesToGroupBy = ["department.head.name"]
                let groups = try context.fetch(grouped)
                #expect(groups.map { $0["department.head.name"] as? String } == [nil, "Ann", "Cid"])
                #expect(groups.map { ($0["count"] as? NSNumber)?.intValue } == [1, 2, 2])

                // Aggregates over no objects: a count of zero, the others absent.
                let none = NSFetchRequest<NSDictionary>(entityName: "Employee")
                none.resultType = .dictionaryResultType
                none.predicate = NSPredicate(format: "salary > 1000")
                none.propertiesToFetch = [
                    aggregate("count", "count:", "name"), aggregate("total", "sum:", "salary", .doubleAttributeType),
                    aggregate("oldest", "max:", "age"),
                ]
                let empty = try context.fetch(none)
                #expect(empty.count == 1)
                #expect((empty.first?["count"] as? NSNumber)?.intValue == 0)
                #expect(empty.first?["total"] == nil)
                #expect(empty.first?["oldest"] == nil)
            }
        },
        StoreConformanceCase("Grouped dictionary results filter groups with a having predicate") { fixture in
            let stack = try ConformanceStack(fixture)
            try ConformanceData.populate(stack.newContext())
            let context = stack.newContext()
            try context.run {
                let research = try ConformanceData.one(context, "Department", "name", "R&D")
                let sales = try ConformanceData.one(context, "Department", "name", "Sales")
                func grouped(_ having: NSPredicate?) -> NSFetchRequest<NSDictionary> {
                    let request = NSFetchRequest<NSDictionary>(entityName: "Employee")
                    request.resultType = .dictionaryResultType
                    request.propertiesToFetch = [
                        "department.name", aggregate("total", "sum:", "salary", .doubleAttributeType),
                        aggregate("oldest", "max:", "age", .integer32AttributeType),
                        aggregate("mean", "average:", "salary", .doubleAttributeType),
                    ]
                    request.propertiesToGroupBy = ["department.name"]
                    request.havingPredicate = having
                    return request
                }
                let all = try context.fetch(grouped(nil))
                #expect(all.map { $0["department.name"] as? String } == [nil, "R&D", "Sales"])
                #expect(all.map { ($0["total"] as? NSNumber)?.doubleValue } == [40, 200.5, 155.25])
                #expect(all.map { ($0["mean"] as? NSNumber)?.doubleValue } == [40, 100.25, 77.625])
                let byKey = try context.fetch(grouped(NSPredicate(format: "total > 150")))
                #expect(byKey.map { $0["department.name"] as? String } == ["R&D", "Sales"])
                let byVariable = try context.fetch(grouped(NSPredicate(format: "$oldest >= 45")))
                #expect(byVariable.map { $0["department.name"] as? String } == ["Sales"])
                // Offset and limit cut the groups.
                let cut = grouped(nil)
                cut.fetchOffset = 1
                cut.fetchLimit = 1
                #expect(try context.fetch(cut).map { $0["department.name"] as? String } == ["R&D"])

                // Grouped by a to-one relationship: its values are the destinations' IDs.
                let byDepartment = NSFetchRequest<NSDictionary>(entityName: "Employee")
                byDepartment.resultType = .dictionaryResultType
                byDepartment.propertiesToFetch = ["department", aggregate("count", "count:", "name")]
                byDepartment.propertiesToGroupBy = ["department"]
                byDepartment.havingPredicate = NSPredicate(format: "count > 1")
                let departments = try context.fetch(byDepartment)
                #expect(
                    Set(departments.compactMap { $0["department"] as? NSManagedObjectID })
                        == [research.objectID, sales.objectID])
                #expect(departments.map { ($0["count"] as? NSNumber)?.intValue } == [2, 2])
            }
        },
        StoreConformanceCase("Dictionary results: extremes, sums, distinct values and counts") { fixture in
            let stack = try ConformanceStack(fixture)
            try ConformanceData.populate(stack.newContext())
            let context = stack.newContext()
            try context.run {
                let request = NSFetchRequest<NSDictionary>(entityName: "Item")
                request.resultType = .dictionaryResultType
                request.propertiesToFetch = [
                    aggregate("first", "min:", "string", .stringAttributeType),
                    aggregate("last", "max:", "string", .stringAttributeType),
                    aggregate("earliest", "min:", "date", .dateAttributeType),
                    aggregate("latest", "max:", "date", .dateAttributeType),
                    aggregate("total", "sum:", "int16", .integer64AttributeType),
                    aggregate("counted", "count:", "int64", .integer64AttributeType),
                ]
                let rows = try context.fetch(request)
                #expect(rows.count == 1)
                let row = rows.first ?? [:]
                // Strings by code point, as Core Data's SQLite store orders them.
                #expect(row["first"] as? String == "Beta")
                #expect(row["last"] as? String == "Ålpha")
                #expect(row["earliest"] as? Date == ConformanceData.epoch.addingTimeInterval(-3_600))
                #expect(row["latest"] as? Date == ConformanceData.epoch.addingTimeInterval(86_400))
                #expect((row["total"] as? NSNumber)?.int64Value == 16)
                #expect((row["counted"] as? NSNumber)?.int64Value == 4)

                let distinct = NSFetchRequest<NSDictionary>(entityName: "Employee")
                distinct.resultType = .dictionaryResultType
                distinct.propertiesToFetch = ["department.name"]
                distinct.returnsDistinctResults = true
                distinct.sortDescriptors = [NSSortDescriptor(key: "department.name", ascending: false)]
                #expect(try context.fetch(distinct).map { $0["department.name"] as? String } == ["Sales", "R&D", nil])

                let count = NSFetchRequest<NSNumber>(entityName: "Employee")
                count.resultType = .countResultType
                count.predicate = NSPredicate(format: "salary > 70")
                #expect(try context.fetch(count).first?.intValue == 3)
                count.predicate = NSPredicate(format: "department.name BEGINSWITH 'R'")
                #expect(try context.fetch(count).first?.intValue == 2)
                #expect(try context.count(for: count) == 2)
            }
        },
    ]
}

/// An expression description computing `function` of key paths (strings) and constants (numbers).
private func expression(_ name: String, _ function: String, _ operands: [Any], _ type: NSAttributeType)
    -> NSExpressionDescription
{
    let description = NSExpressionDescription()
    description.name = name
    description.expression = NSExpression(
        forFunction: function,
        arguments: operands.map { operand in
            (operand as? String).map { NSExpression(forKeyPath: $0) } ?? NSExpression(forConstantValue: operand)
        })
    description.expressionResultType = type
    return description
}

/// An expression description aggregating a key path (`sum:`, `count:`, `min:`, `max:`, `average:`).
private func aggregate(
    _ name: String, _ function: String, _ keyPath: String, _ type: NSAttributeType = .integer64AttributeType
) -> NSExpressionDescription {
    expression(name, function, [keyPath], type)
}
