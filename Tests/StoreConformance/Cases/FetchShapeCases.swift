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
        StoreConformanceCase("Dictionary results aggregate, group and compare decimals") { fixture in
            let stack = try ConformanceStack(fixture)
            try ConformanceData.populate(stack.newContext())
            let context = stack.newContext()
            try context.run {
                context.make("Item", ["int16": 77, "decimal": NSDecimalNumber(string: "1.1")])
                context.make("Item", ["int16": 77, "decimal": NSDecimalNumber(string: "2.2")])
                context.make("Item", ["int16": 78, "decimal": NSDecimalNumber(string: "2.2")])
                try context.save()
                func expression(_ name: String, _ function: String?, _ format: String) -> NSExpressionDescription {
                    let description = NSExpressionDescription()
                    description.name = name
                    description.expression =
                        function.map { NSExpression(forFunction: $0, arguments: [NSExpression(format: format)]) }
                        ?? NSExpression(format: format)
                    description.expressionResultType = .decimalAttributeType
                    return description
                }
                func decimals(_ rows: [NSDictionary], _ key: String) -> [Decimal?] {
                    rows.map { ($0[key] as? NSDecimalNumber)?.decimalValue }
                }
                let aggregates = [
                    expression("total", "sum:", "decimal"), expression("mean", "average:", "decimal"),
                    expression("lowest", "min:", "decimal"), expression("highest", "max:", "decimal"),
                ]
                // The populated items hold 10.5, 250 and 100.25 (and two have none), sorted by the decimal, as
                // code that fetches an aggregate often does.
                let overall = NSFetchRequest<NSDictionary>(entityName: "Item")
                overall.resultType = .dictionaryResultType
                overall.predicate = NSPredicate(format: "int16 < 70")
                overall.sortDescriptors = [NSSortDescriptor(key: "decimal", ascending: false)]
                let count = NSExpressionDescription()
                count.name = "count"
                count.expression = NSExpression(forFunction: "count:", arguments: [NSExpression(forKeyPath: "decimal")])
                count.expressionResultType = .integer64AttributeType
                overall.propertiesToFetch = aggregates + [count]
                let row = try #require(try context.fetch(overall).first)
                #expect((row["total"] as? NSDecimalNumber)?.decimalValue == Decimal(string: "360.75"))
                #expect((row["mean"] as? NSDecimalNumber)?.decimalValue == Decimal(string: "120.25"))
                #expect((row["lowest"] as? NSDecimalNumber)?.decimalValue == Decimal(string: "10.5"))
                #expect((row["highest"] as? NSDecimalNumber)?.decimalValue == 250)
                #expect((row["count"] as? NSNumber)?.intValue == 3)
                // 1.1 + 2.2 is the decimal 3.3, though a double sum is 3.3000000000000003.
                overall.predicate = NSPredicate(format: "int16 == 77")
                let small = try #require(try context.fetch(overall).first)
                #expect((small["total"] as? NSDecimalNumber)?.decimalValue == Decimal(string: "3.3"))
                #expect((small["mean"] as? NSDecimalNumber)?.decimalValue == Decimal(string: "1.65"))
                #expect((small["lowest"] as? NSDecimalNumber)?.decimalValue == Decimal(string: "1.1"))
                // Arithmetic on decimals, per object.
                let tripled = NSFetchRequest<NSDictionary>(entityName: "Item")
                tripled.resultType = .dictionaryResultType
                tripled.predicate = NSPredicate(format: "int16 == 77")
                tripled.propertiesToFetch = [expression("tripled", nil, "decimal * 3")]
                tripled.sortDescriptors = [NSSortDescriptor(key: "decimal", ascending: true)]
                #expect(
                    decimals(try context.fetch(tripled), "tripled") == [Decimal(string: "3.3"), Decimal(string: "6.6")])
                // Grouped by a decimal, counted, with a having predicate.
                let byValue = NSFetchRequest<NSDictionary>(entityName: "Item")
                byValue.resultType = .dictionaryResultType
                byValue.predicate = NSPredicate(format: "decimal != nil")
                byValue.propertiesToFetch = ["decimal", count]
                byValue.propertiesToGroupBy = ["decimal"]
                byValue.sortDescriptors = [NSSortDescriptor(key: "decimal", ascending: true)]
                let groups = try context.fetch(byValue)
                #expect(
                    decimals(groups, "decimal") == ["1.1", "2.2", "10.5", "100.25", "250"].map { Decimal(string: $0) })
                #expect(groups.map { ($0["count"] as? NSNumber)?.intValue } == [1, 2, 1, 1, 1])
                byValue.havingPredicate = NSPredicate(format: "count > 1")
                #expect(decimals(try context.fetch(byValue), "decimal") == [Decimal(string: "2.2")])
                // A having predicate comparing a decimal sum sees the sum as it is returned: exactly 3.3.
                let byNumber = NSFetchRequest<NSDictionary>(entityName: "Item")
                byNumber.resultType = .dictionaryResultType
                byNumber.propertiesToFetch = ["int16", expression("total", "sum:", "decimal")]
                byNumber.propertiesToGroupBy = ["int16"]
                byNumber.sortDescriptors = [NSSortDescriptor(key: "int16", ascending: true)]
                byNumber.havingPredicate = NSPredicate(format: "total <= 3.3")
                let cheap = try context.fetch(byNumber)
                #expect(cheap.map { ($0["int16"] as? NSNumber)?.intValue } == [77, 78])
                #expect(decimals(cheap, "total") == [Decimal(string: "3.3"), Decimal(string: "2.2")])
            }
        },
        StoreConformanceCase("Objects fetched with propertiesToFetch read every property as stored") { fixture in
            let stack = try ConformanceStack(fixture)
            try ConformanceData.populate(stack.newContext())
            let context = stack.newContext()
            try context.run {
                let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
                request.propertiesToFetch = ["name"]
                request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
                let employees = try context.fetch(request)
                #expect(employees.map { $0.value(forKey: "name") as? String } == ["Ann", "Bob", "Cid", "Dee", "Émile"])
                #expect(employees.map { ($0.value(forKey: "age") as? NSNumber)?.intValue } == [34, 28, 45, 23, 38])
                let departments = employees.map {
                    ($0.value(forKey: "department") as? NSManagedObject)?.value(forKey: "name") as? String
                }
                #expect(departments == ["R&D", "R&D", "Sales", nil, "Sales"])
                employees[1].setValue(29, forKey: "age")
                try context.save()
            }
            let reader = stack.newContext()
            try reader.run {
                let bob = try ConformanceData.one(reader, "Employee", "name", "Bob")
                #expect((bob.value(forKey: "age") as? NSNumber)?.intValue == 29)
                #expect((bob.value(forKey: "salary") as? NSNumber)?.doubleValue == 80)
            }
        },
    ]
}
