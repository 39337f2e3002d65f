import Foundation
import OpenCoreData
import Testing

extension StoreConformanceCase {
    static let relationships: [StoreConformanceCase] = [
        StoreConformanceCase("Relationships of every kind come back with both sides") { fixture in
            let stack = try ConformanceStack(fixture)
            try ConformanceData.populate(stack.newContext())
            func check(_ context: NSManagedObjectContext) throws {
                try context.run {
                    let research = try ConformanceData.one(context, "Department", "name", "R&D")
                    let ann = try ConformanceData.one(context, "Employee", "name", "Ann")
                    // One-to-many, both sides.
                    #expect(ConformanceData.names(research.value(forKey: "employees")) == ["Ann", "Bob"])
                    #expect((ann.value(forKey: "department") as? NSManagedObject) == research)
                    // One-to-one, both sides.
                    #expect((research.value(forKey: "head") as? NSManagedObject) == ann)
                    #expect((ann.value(forKey: "headOf") as? NSManagedObject) == research)
                    // Ordered one-to-many keeps its order.
                    let projects = try #require(research.value(forKey: "projects") as? NSOrderedSet)
                    #expect(ConformanceData.names(projects, key: "title") == ["Artemis", "Apollo"])
                    // Many-to-many, both sides, through the subentity too.
                    let apollo = try ConformanceData.one(context, "Project", "title", "Apollo")
                    #expect(ConformanceData.names(apollo.value(forKey: "members")) == ["Ann", "Bob", "Paula"])
                    #expect(
                        ConformanceData.names(ann.value(forKey: "projects"), key: "title") == ["Apollo", "Artemis"])
                    let paula = try ConformanceData.one(context, "Person", "name", "Paula")
                    #expect(ConformanceData.names(paula.value(forKey: "projects"), key: "title") == ["Apollo"])
                    // Empty ones.
                    let dee = try ConformanceData.one(context, "Employee", "name", "Dee")
                    #expect(dee.value(forKey: "department") == nil)
                    #expect(ConformanceData.names(dee.value(forKey: "projects")).isEmpty)
                    let empty = try ConformanceData.one(context, "Department", "name", "Empty")
                    #expect((empty.value(forKey: "projects") as? NSOrderedSet)?.count == 0)
                }
            }
            try check(stack.newContext())
            if fixture.persists { try check(.conformance(try stack.reopen())) }
        },
        StoreConformanceCase("Changed relationships are saved on both sides") { fixture in
            let stack = try ConformanceStack(fixture)
            try ConformanceData.populate(stack.newContext())
            let editor = stack.newContext()
            try editor.run {
                let research = try ConformanceData.one(editor, "Department", "name", "R&D")
                let sales = try ConformanceData.one(editor, "Department", "name", "Sales")
                let bob = try ConformanceData.one(editor, "Employee", "name", "Bob")
                let dee = try ConformanceData.one(editor, "Employee", "name", "Dee")
                bob.setValue(sales, forKey: "department")
                dee.setValue(research, forKey: "department")
                sales.setValue(bob, forKey: "head")
                let projects = try #require(research.value(forKey: "projects") as? NSOrderedSet)
                let zephyr = try ConformanceData.one(editor, "Project", "title", "Zephyr")
                research.setValue(NSOrderedSet(array: [zephyr] + projects.array.reversed()), forKey: "projects")
                let apollo = try ConformanceData.one(editor, "Project", "title", "Apollo")
                apollo.setValue(Set([dee]), forKey: "members")
                try editor.save()
            }
            func check(_ context: NSManagedObjectContext) throws {
                try context.run {
                    let research = try ConformanceData.one(context, "Department", "name", "R&D")
                    let sales = try ConformanceData.one(context, "Department", "name", "Sales")
                    #expect(ConformanceData.names(research.value(forKey: "employees")) == ["Ann", "Dee"])
                    #expect(ConformanceData.names(sales.value(forKey: "employees")) == ["Bob", "Cid", "Émile"])
                    let bob = try ConformanceData.one(context, "Employee", "name", "Bob")
                    let cid = try ConformanceData.one(context, "Employee", "name", "Cid")
                    #expect((sales.value(forKey: "head") as? NSManagedObject) == bob)
                    #expect((bob.value(forKey: "headOf") as? NSManagedObject) == sales)
                    #expect(cid.value(forKey: "headOf") == nil)
                    let projects = try #require(research.value(forKey: "projects") as? NSOrderedSet)
                    #expect(
                        ConformanceData.names(projects, key: "title") == ["Zephyr", "Apollo", "Artemis"])
                    let zephyr = try ConformanceData.one(context, "Project", "title", "Zephyr")
                    #expect((zephyr.value(forKey: "department") as? NSManagedObject) == research)
                    let apollo = try ConformanceData.one(context, "Project", "title", "Apollo")
                    #expect(ConformanceData.names(apollo.value(forKey: "members")) == ["Dee"])
                    let ann = try ConformanceData.one(context, "Employee", "name", "Ann")
                    #expect(ConformanceData.names(ann.value(forKey: "projects"), key: "title") == ["Artemis"])
                }
            }
            try check(stack.newContext())
            if fixture.persists { try check(.conformance(try stack.reopen())) }
        },
    ]

    static let deleteRules: [StoreConformanceCase] = [
        StoreConformanceCase("Delete rules cascade, nullify and deny through the store") { fixture in
            let stack = try ConformanceStack(fixture)
            try ConformanceData.populate(stack.newContext())
            let context = stack.newContext()
            try context.run {
                // Nullify: an employee leaves; the department, its head slot and the projects forget him.
                context.delete(try ConformanceData.one(context, "Employee", "name", "Cid"))
                try context.save()
                // Deny: a department with projects cannot go; the context stays usable after the failed save.
                context.delete(try ConformanceData.one(context, "Department", "name", "Sales"))
                do {
                    try context.save()
                    Issue.record("deleting a department with projects (deny) saved")
                } catch let error as NSError {
                    let codes = [error.code] + ((error.userInfo[NSDetailedErrorsKey] as? [NSError])?.map(\.code) ?? [])
                    #expect(codes.contains(NSValidationRelationshipDeniedDeleteError))
                }
                context.rollback()
                // Cascade: R&D's projects move away first (deny), then R&D takes its employees with it.
                let research = try ConformanceData.one(context, "Department", "name", "R&D")
                research.setValue(NSOrderedSet(), forKey: "projects")
                context.delete(research)
                try context.save()
            }
            let reader = stack.newContext()
            try reader.run {
                let employees = try reader.values("Employee", "name")
                #expect(employees == ["Dee", "Émile"])
                let departments = try reader.values("Department", "name")
                #expect(departments == ["Empty", "Sales"])
                let sales = try ConformanceData.one(reader, "Department", "name", "Sales")
                #expect(ConformanceData.names(sales.value(forKey: "employees")) == ["Émile"])
                #expect(sales.value(forKey: "head") == nil)
                let borealis = try ConformanceData.one(reader, "Project", "title", "Borealis")
                #expect(ConformanceData.names(borealis.value(forKey: "members")) == ["Quinn"])
                let apollo = try ConformanceData.one(reader, "Project", "title", "Apollo")
                #expect(apollo.value(forKey: "department") == nil)
                #expect(ConformanceData.names(apollo.value(forKey: "members")) == ["Paula"])
            }
        },
        StoreConformanceCase("A many-to-many relationship forgets a deleted member on both sides") { fixture in
            let stack = try ConformanceStack(fixture)
            try ConformanceData.populate(stack.newContext())
            let context = stack.newContext()
            try context.run {
                context.delete(try ConformanceData.one(context, "Project", "title", "Apollo"))
                try context.save()
            }
            let reader = stack.newContext()
            try reader.run {
                let ann = try ConformanceData.one(reader, "Employee", "name", "Ann")
                #expect(ConformanceData.names(ann.value(forKey: "projects"), key: "title") == ["Artemis"])
                let paula = try ConformanceData.one(reader, "Person", "name", "Paula")
                #expect(ConformanceData.names(paula.value(forKey: "projects"), key: "title").isEmpty)
                let research = try ConformanceData.one(reader, "Department", "name", "R&D")
                let projects = try #require(research.value(forKey: "projects") as? NSOrderedSet)
                #expect(ConformanceData.names(projects, key: "title") == ["Artemis"])
            }
        },
    ]

    static let inheritance: [StoreConformanceCase] = [
        StoreConformanceCase("Fetches of an entity include its subentities unless told not to") { fixture in
            let stack = try ConformanceStack(fixture)
            try ConformanceData.populate(stack.newContext())
            let context = stack.newContext()
            try context.run {
                let people = try context.objects("Person", sortedBy: ["name"])
                #expect(
                    people.map { $0.value(forKey: "name") as? String } == [
                        "Ann", "Bob", "Cid", "Dee", "Paula", "Quinn", "Émile",
                    ])
                #expect(people.filter { $0.entity.name == "Employee" }.count == 5)
                let onlyPeople = try context.objects("Person", sortedBy: ["name"]) { $0.includesSubentities = false }
                #expect(ConformanceData.names(onlyPeople) == ["Paula", "Quinn"])
                let employees = try context.objects("Employee", "salary > 70", sortedBy: ["salary"])
                #expect(employees.map { $0.value(forKey: "name") as? String } == ["Bob", "Cid", "Ann"])
                let count = try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Person"))
                #expect(count == 7)
                let older = try context.objects("Person", "age > 40")
                #expect(ConformanceData.names(older) == ["Cid", "Paula"])
                let cid = try #require(older.first { $0.value(forKey: "name") as? String == "Cid" })
                #expect(cid.entity.name == "Employee")
                #expect((cid.value(forKey: "salary") as? NSNumber)?.doubleValue == 95.25)
            }
        }
    ]
}
