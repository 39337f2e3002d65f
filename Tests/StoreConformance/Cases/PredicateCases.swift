import Foundation
import OpenCoreData
import Testing

extension StoreConformanceCase {
    /// A predicate to run through the store, on an entity, with its arguments (made in the context, so that objects
    /// can be arguments).
    struct PredicateProbe {
        let entityName: String
        let format: String
        let arguments: (NSManagedObjectContext) throws -> [Any]

        init(_ entityName: String, _ format: String, _ arguments: @escaping (NSManagedObjectContext) throws -> [Any]) {
            self.entityName = entityName
            self.format = format
            self.arguments = arguments
        }

        init(_ entityName: String, _ format: String, _ arguments: [Any] = []) {
            self.init(entityName, format) { _ in arguments }
        }
    }

    static var predicateProbes: [PredicateProbe] {
        [
            // Numbers, of each width, and booleans.
            PredicateProbe("Item", "int16 > 5"), PredicateProbe("Item", "int32 <= 0"),
            PredicateProbe("Item", "int64 == 42"),
            PredicateProbe("Item", "int64 != 42"), PredicateProbe("Item", "int16 BETWEEN {0, 6}"),
            PredicateProbe("Item", "double >= 2.0"), PredicateProbe("Item", "float < 2"),
            PredicateProbe("Item", "decimal > 100"),
            PredicateProbe("Item", "decimal == %@", [NSDecimalNumber(string: "10.5")]),
            PredicateProbe("Item", "bool == YES"), PredicateProbe("Item", "bool == NO"),
            PredicateProbe("Item", "counter == 7"),
            PredicateProbe("Item", "int16 IN {3, 9, 100}"), PredicateProbe("Item", "int16 + int64 > 40"),
            // Strings.
            PredicateProbe("Item", "string == 'alpha'"), PredicateProbe("Item", "string ==[c] 'BETA'"),
            PredicateProbe("Item", "string BEGINSWITH 'a'"), PredicateProbe("Item", "string BEGINSWITH[cd] 'a'"),
            PredicateProbe("Item", "string CONTAINS 'e'"), PredicateProbe("Item", "string ENDSWITH 'ë'"),
            PredicateProbe("Item", "string ENDSWITH[d] 'e'"), PredicateProbe("Item", "string LIKE '?eta'"),
            PredicateProbe("Item", "string LIKE[c] '*A'"), PredicateProbe("Item", "string MATCHES '[a-z]+'"),
            PredicateProbe("Item", "string IN {'alpha', 'Beta', 'gamma'}"), PredicateProbe("Item", "string < 'b'"),
            // Nil.
            PredicateProbe("Item", "string == nil"), PredicateProbe("Item", "string != nil"),
            PredicateProbe("Item", "date == nil"), PredicateProbe("Item", "NOT (int32 > 0)"),
            // Dates, data, UUIDs, URLs.
            PredicateProbe("Item", "date > %@", [ConformanceData.epoch]),
            PredicateProbe("Item", "date <= %@", [ConformanceData.epoch]),
            PredicateProbe("Item", "data == %@", [Data([1, 2])]),
            PredicateProbe("Item", "uuid == %@", [ConformanceData.uuids[2]]),
            PredicateProbe("Item", "uri == %@", [URL(string: "https://a.example/y")!]),
            // Compound.
            PredicateProbe("Item", "int16 > 5 OR string == 'alpha'"),
            PredicateProbe("Item", "int16 > 5 AND bool == YES"),
            PredicateProbe("Item", "NOT (string BEGINSWITH 'a' OR bool == NO)"),
            PredicateProbe("Item", "TRUEPREDICATE"),
            PredicateProbe("Item", "FALSEPREDICATE"),
            // Relationships: to-one key paths, objects as arguments, to-many with modifiers, counts and subqueries.
            PredicateProbe("Employee", "department.name == 'R&D'"), PredicateProbe("Employee", "department == nil"),
            PredicateProbe("Employee", "department.budget > 1000"),
            PredicateProbe("Employee", "department == %@") {
                [try ConformanceData.one($0, "Department", "name", "Sales")]
            },
            PredicateProbe("Person", "self == %@") { [try ConformanceData.one($0, "Person", "name", "Paula")] },
            PredicateProbe("Person", "self IN %@") {
                [
                    [
                        try ConformanceData.one($0, "Person", "name", "Quinn"),
                        try ConformanceData.one($0, "Employee", "name", "Ann"),
                    ]
                ]
            },
            PredicateProbe("Person", "%@ IN projects") { [try ConformanceData.one($0, "Project", "title", "Apollo")] },
            PredicateProbe("Person", "ANY projects.title == 'Apollo'"),
            PredicateProbe("Person", "ANY projects.title BEGINSWITH 'A' AND age < 40"),
            PredicateProbe("Person", "NONE projects.title == 'Apollo'"),
            PredicateProbe("Person", "projects.@count >= 2"), PredicateProbe("Person", "projects.@count == 0"),
            PredicateProbe("Person", "SUBQUERY(projects, $p, $p.title BEGINSWITH 'B').@count > 0"),
            PredicateProbe("Employee", "headOf != nil"), PredicateProbe("Employee", "headOf.name == 'Sales'"),
            PredicateProbe("Department", "employees.@count == 2"),
            PredicateProbe("Department", "ANY employees.salary > 100"),
            PredicateProbe("Department", "employees.@avg.salary > 70"),
            PredicateProbe("Department", "head.name == 'Ann'"),
            PredicateProbe("Department", "projects.@count == 0"),
            PredicateProbe("Department", "SUBQUERY(employees, $e, $e.age > 30).@count == 1"),
            PredicateProbe("Project", "department.head.name == 'Cid'"),
        ]
    }

    static let predicates: [StoreConformanceCase] = [
        StoreConformanceCase("Predicates select what evaluating them in memory selects") { fixture in
            let stack = try ConformanceStack(fixture)
            try ConformanceData.populate(stack.newContext())
            let context = stack.newContext()
            try context.run {
                for probe in predicateProbes {
                    let predicate = NSPredicate(format: probe.format, argumentArray: try probe.arguments(context))
                    let everything = try context.objects(probe.entityName)
                    let expected = Set(everything.filter { predicate.evaluate(with: $0) }.map(\.objectID))
                    let request = NSFetchRequest<NSManagedObject>(entityName: probe.entityName)
                    request.predicate = predicate
                    let found = try context.fetch(request)
                    let key = nameKey(probe)
                    let inMemory = everything.filter { expected.contains($0.objectID) }
                    #expect(
                        Set(found.map(\.objectID)) == expected,
                        """
                        \(probe.entityName) where \(probe.format): the store found \
                        \(ConformanceData.names(found, key: key)), in memory \(ConformanceData.names(inMemory, key: key))
                        """)
                    let count = try context.count(for: request)
                    #expect(count == expected.count, "count of \(probe.entityName) where \(probe.format)")
                }
            }
        }
    ]

    /// The key that names the probe's objects in failure messages.
    private static func nameKey(_ probe: PredicateProbe) -> String {
        switch probe.entityName {
        case "Project": return "title"
        case "Item": return "string"
        default: return "name"
        }
    }
}
