import Foundation
import OpenCoreData
import Testing

extension StoreConformanceCase {
    static let fetchShapes: [StoreConformanceCase] = [
        StoreConformanceCase("Sort descriptors order results as sorting in memory does") { fixture in
            let stack = try ConformanceStack(fixture)
            try ConformanceData.populate(stack.newContext())
            let context = stack.newContext()
            try context.run {
                let orders: [(String, [NSSortDescriptor])] = [
                    ("Employee", [NSSortDescriptor(key: "salary", ascending: false)]),
                    ("Person", [NSSortDescriptor(key: "age", ascending: true)]),
                    (
                        "Employee",
                        [
                            NSSortDescriptor(key: "department.name", ascending: true),
                            NSSortDescriptor(key: "name", ascending: false),
                        ]
                    ),
                    (
                        "Item",
                        [
                            NSSortDescriptor(key: "date", ascending: true),
                            NSSortDescriptor(key: "int16", ascending: true),
                        ]
                    ),
                    (
                        "Item",
                        [
                            NSSortDescriptor(key: "decimal", ascending: false),
                            NSSortDescriptor(key: "int16", ascending: true),
                        ]
                    ),
                    (
                        "Item",
                        [
                            NSSortDescriptor(key: "bool", ascending: true),
                            NSSortDescriptor(key: "int64", ascending: false),
                            NSSortDescriptor(key: "int16", ascending: true),
                        ]
                    ),
                ]
                for (entityName, descriptors) in orders {
                    let request = NSFetchRequest<NSManagedObject>(entityName: entityName)
                    request.sortDescriptors = descriptors
                    let found = try context.fetch(request).map(\.objectID)
                    let everything = try context.objects(entityName)
                    let expected = everything.sorted(using: descriptors).map(\.objectID)
                    #expect(found == expected, "\(entityName) sorted by \(descriptors.map { $0.key ?? "" })")
                }
            }
        },
        StoreConformanceCase("Limits and offsets cut the sorted results, counts agree") { fixture in
            let stack = try ConformanceStack(fixture)
            try ConformanceData.populate(stack.newContext())
            let context = stack.newContext()
            try context.run {
                let all = try context.values("Person", "name")
                #expect(all.count == 7)
                for (offset, limit) in [(0, 3), (2, 3), (5, 10), (7, 1), (3, 0), (0, 0)] {
                    let names = try context.objects("Person", sortedBy: ["name"]) {
                        $0.fetchOffset = offset
                        $0.fetchLimit = limit
                    }.map { $0.value(forKey: "name") as! String }
                    let expected = Array(all.dropFirst(offset).prefix(limit == 0 ? all.count : limit))
                    #expect(names == expected, "offset \(offset), limit \(limit)")
                    let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
                    request.fetchOffset = offset
                    request.fetchLimit = limit
                    #expect(
                        try context.count(for: request) == expected.count, "count, offset \(offset), limit \(limit)")
                }
                // With unsaved changes, the limit applies to the results that include them.
                context.make("Person", ["name": "Aaron", "age": 60])
                let first = try context.objects("Person", sortedBy: ["name"]) { $0.fetchLimit = 2 }
                #expect(first.map { $0.value(forKey: "name") as? String } == ["Aaron", "Ann"])
                let counted = try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Person"))
                #expect(counted == 8)
                let idRequest = NSFetchRequest<NSManagedObjectID>(entityName: "Department")
                idRequest.resultType = .managedObjectIDResultType
                #expect(try context.fetch(idRequest).count == 3)
            }
        },
        StoreConformanceCase("Dictionary results project, group and aggregate saved values") { fixture in
            let stack = try ConformanceStack(fixture)
            try ConformanceData.populate(stack.newContext())
            let context = stack.newContext()
            try context.run {
                let research = try ConformanceData.one(context, "Department", "name", "R&D")
                // Attributes and a to-one relationship (as its destination's ID).
                let plain = NSFetchRequest<NSDictionary>(entityName: "Employee")
                plain.resultType = .dictionaryResultType
                plain.propertiesToFetch = ["name", "department", "department.name"]
                plain.predicate = NSPredicate(format: "salary > 70")
                plain.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
                let rows = try context.fetch(plain)
                #expect(rows.map { $0["name"] as? String } == ["Ann", "Bob", "Cid"])
                #expect(rows[0]["department"] as? NSManagedObjectID == research.objectID)
                #expect(rows[0]["department.name"] as? String == "R&D")
                #expect(rows[2]["department.name"] as? String == "Sales")
                // Distinct values.
                let distinct = NSFetchRequest<NSDictionary>(entityName: "Item")
                distinct.resultType = .dictionaryResultType
                distinct.propertiesToFetch = ["int64"]
                distinct.returnsDistinctResults = true
                distinct.predicate = NSPredicate(format: "int64 != nil")
                let values = try context.fetch(distinct).compactMap { ($0["int64"] as? NSNumber)?.int64Value }
                #expect(values.sorted() == [-9, 7, 42])
                // Grouped, with aggregates.
                let count = NSExpressionDescription()
                count.name = "count"
                count.expression = NSExpression(forFunction: "count:", arguments: [NSExpression(forKeyPath: "name")])
                count.expressionResultType = .integer64AttributeType
                let total = NSExpressionDescription()
                total.name = "total"
                total.expression = NSExpression(forFunction: "sum:", arguments: [NSExpression(forKeyPath: "salary")])
                total.expressionResultType = .doubleAttributeType
                let oldest = NSExpressionDescription()
                oldest.name = "oldest"
                oldest.expression = NSExpression(forFunction: "max:", arguments: [NSExpression(forKeyPath: "age")])
                oldest.expressionResultType = .integer32AttributeType
                let grouped = NSFetchRequest<NSDictionary>(entityName: "Employee")
                grouped.resultType = .dictionaryResultType
                grouped.propertiesToFetch = ["department.name", count, total, oldest]
                grouped.propertiesToGroupBy = ["department.name"]
                grouped.predicate = NSPredicate(format: "department != nil")
                grouped.sortDescriptors = [NSSortDescriptor(key: "department.name", ascending: true)]
                let groups = try context.fetch(grouped)
                #expect(groups.map { $0["department.name"] as? String } == ["R&D", "Sales"])
                #expect(groups.map { ($0["count"] as? NSNumber)?.intValue } == [2, 2])
                #expect(groups.map { ($0["total"] as? NSNumber)?.doubleValue } == [200.5, 155.25])
                #expect(groups.map { ($0["oldest"] as? NSNumber)?.intValue } == [34, 45])
                // Aggregates over everything.
                let overall = NSFetchRequest<NSDictionary>(entityName: "Person")
                overall.resultType = .dictionaryResultType
                let average = NSExpressionDescription()
                average.name = "average"
                average.expression = NSExpression(forFunction: "average:", arguments: [NSExpression(forKeyPath: "age")])
                average.expressionResultType = .doubleAttributeType
                overall.propertiesToFetch = [average]
                let result = try context.fetch(overall)
                #expect(result.count == 1)
                let mean = (result.first?["average"] as? NSNumber)?.doubleValue ?? 0
                #expect(abs(mean - 238.0 / 7) < 1e-9)
            }
        },
    ]
}
