import Foundation
import OpenCoreData
import Testing

extension StoreConformanceCase {
    static let batchRequests: [StoreConformanceCase] = [
        StoreConformanceCase("Batch updates change stored values and versions, not the context's objects") { fixture in
            let stack = try ConformanceStack(fixture)
            try ConformanceData.populate(stack.newContext())
            let reader = stack.newContext()
            try reader.run {
                let bob = try ConformanceData.one(reader, "Employee", "name", "Bob")
                #expect(bob.value(forKey: "salary") as? Double == 80)
                let update = NSBatchUpdateRequest(entityName: "Employee")
                update.predicate = NSPredicate(format: "salary < 90")
                update.propertiesToUpdate = [
                    "salary": NSExpression(
                        forFunction: "add:to:",
                        arguments: [NSExpression(forKeyPath: "salary"), NSExpression(forConstantValue: 10)]),
                    "nickname": "raised",
                ]
                update.resultType = .updatedObjectIDsResultType
                let result = try #require(try reader.execute(update) as? NSBatchUpdateResult)
                let ids = try #require(result.result as? [NSManagedObjectID])
                #expect(
                    Set(ids.map { reader.object(with: $0).value(forKey: "name") as? String }) == [
                        "Bob", "Dee", "Émile",
                    ])
                // The context's object keeps what it had read.
                #expect(bob.value(forKey: "salary") as? Double == 80)

                update.resultType = .updatedObjectsCountResultType
                update.predicate = NSPredicate(format: "name == 'Nobody'")
                let counted = try #require(try reader.execute(update) as? NSBatchUpdateResult)
                #expect((counted.result as? NSNumber)?.intValue == 0)

                // The row's version moved on: a save of the stale object is a conflict.
                bob.setValue(29, forKey: "age")
                #expect(throws: (any Error).self) { try reader.save() }
            }
            let fresh = stack.newContext()
            try fresh.run {
                let employees = try fresh.objects("Employee", sortedBy: ["name"])
                #expect(employees.map { $0.value(forKey: "salary") as? Double } == [120.5, 90, 95.25, 50, 70])
                #expect(
                    employees.map { $0.value(forKey: "nickname") as? String } == [
                        "Annie", "raised", nil, "raised", "raised",
                    ])
            }
        },
        StoreConformanceCase("Batch deletes apply cascade, nullify and deny rules") { fixture in
            let stack = try ConformanceStack(fixture)
            try ConformanceData.populate(stack.newContext())
            let context = stack.newContext()
            try context.run {
                func delete(_ entityName: String, _ format: String, _ arguments: [Any]) throws -> [NSManagedObjectID] {
                    let fetch = NSFetchRequest<NSFetchRequestResult>(entityName: entityName)
                    fetch.predicate = NSPredicate(format: format, argumentArray: arguments)
                    let request = NSBatchDeleteRequest(fetchRequest: fetch)
                    request.resultType = .resultTypeObjectIDs
                    let result = try #require(try context.execute(request) as? NSBatchDeleteResult)
                    return try #require(result.result as? [NSManagedObjectID])
                }
                // Sales still holds project Borealis, which its deny rule protects: nothing is deleted.
                #expect {
                    _ = try delete("Department", "name == %@", ["Sales"])
                } throws: { error in
                    (error as NSError).domain == NSCocoaErrorDomain
                        && (error as NSError).code == NSValidationRelationshipDeniedDeleteError
                }
                #expect(try context.values("Department", "name") == ["Empty", "R&D", "Sales"])

                #expect(try delete("Project", "title == %@", ["Borealis"]).count == 1)
                // Cascades to its employees; their references (R&D's head is Ann, not one of them) stay intact.
                let sales = try delete("Department", "name == %@", ["Sales"])
                #expect(sales.count == 3)
                #expect(Set(sales.map { $0.entity.name ?? "" }) == ["Department", "Employee"])

                // Deleting the head of R&D nullifies the department's to-one.
                let ann = try ConformanceData.one(context, "Employee", "name", "Ann")
                let byID = NSBatchDeleteRequest(objectIDs: [ann.objectID])
                byID.resultType = .resultTypeCount
                let counted = try #require(try context.execute(byID) as? NSBatchDeleteResult)
                #expect((counted.result as? NSNumber)?.intValue == 1)
            }
            let fresh = stack.newContext()
            try fresh.run {
                #expect(try fresh.values("Person", "name") == ["Bob", "Dee", "Paula", "Quinn"])
                #expect(try fresh.values("Department", "name") == ["Empty", "R&D"])
                #expect(try fresh.values("Project", "title") == ["Apollo", "Artemis", "Zephyr"])
                let research = try ConformanceData.one(fresh, "Department", "name", "R&D")
                #expect(research.value(forKey: "head") == nil)
                let quinn = try ConformanceData.one(fresh, "Person", "name", "Quinn")
                #expect(ConformanceData.names(quinn.value(forKey: "projects"), key: "title") == [])
                let apollo = try ConformanceData.one(fresh, "Project", "title", "Apollo")
                #expect(ConformanceData.names(apollo.value(forKey: "members")) == ["Bob", "Paula"])
            }
        },
        StoreConformanceCase("Batch inserts add objects with defaults under keys no save reuses") { fixture in
            let stack = try ConformanceStack(fixture)
            try ConformanceData.populate(stack.newContext())
            let context = stack.newContext()
            try context.run {
                let insert = NSBatchInsertRequest(
                    entityName: "Item",
                    objects: [["int16": 1, "string": "new one"], ["int16": 2, "string": "new two", "counter": 9]])
                insert.resultType = .objectIDs
                let result = try #require(try context.execute(insert) as? NSBatchInsertResult)
                let ids = try #require(result.result as? [NSManagedObjectID])
                #expect(ids.count == 2)
                #expect(ids.allSatisfy { !$0.isTemporaryID && $0.entity.name == "Item" })

                var remaining = 3
                let handled = NSBatchInsertRequest(entityName: "Item") { (dictionary: NSMutableDictionary) in
                    guard remaining > 0 else { return true }
                    dictionary["int16"] = 100 + remaining
                    remaining -= 1
                    return false
                }
                handled.resultType = .count
                let count = try #require(try context.execute(handled) as? NSBatchInsertResult)
                #expect((count.result as? NSNumber)?.intValue == 3)

                context.make("Item", ["int16": 200])
                try context.save()
            }
            let fresh = stack.newContext()
            try fresh.run {
                let items = try fresh.objects("Item", "int16 >= 1 AND int16 <= 2", sortedBy: ["int16"])
                #expect(items.map { $0.value(forKey: "string") as? String } == ["new one", "new two"])
                #expect(items.map { ($0.value(forKey: "counter") as? NSNumber)?.intValue } == [7, 9])
                let all = try fresh.objects("Item")
                #expect(all.count == 11)
                #expect(Set(all.map(\.objectID)).count == 11)
                #expect(try fresh.values("Item", "int16", "int16 > 100") == ["101", "102", "103", "200"])
            }
        },
    ]
}
