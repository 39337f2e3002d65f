import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL
import StoreConformance
import Testing

/// Dictionary results of the PostgreSQL store against the SQLite store's, request by request, over the same objects:
/// the two must be equal (object IDs compared by the object they name, as the stores' IDs differ).
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, Comment(rawValue: PostgreSQLTestServer.skipMessage)))
final class PostgreSQLDictionaryResultTests {
    let sqliteURL = FileManager.default.temporaryDirectory.appendingPathComponent("pg-dictionaries-\(UUID()).sqlite")
    let postgresURL = PostgreSQLTestServer.newURL()
    let sqlite: NSManagedObjectContext
    let postgres: NSManagedObjectContext

    init() throws {
        PostgreSQLStore.register()
        func context(_ type: String, _ url: URL?) throws -> NSManagedObjectContext {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: ConformanceModel.shared)
            try coordinator.addPersistentStore(ofType: type, configurationName: nil, at: url, options: nil)
            let context = NSManagedObjectContext.conformance(coordinator)
            try ConformanceData.populate(context)
            return context
        }
        sqlite = try context(NSSQLiteStoreType, sqliteURL)
        postgres = try context(PostgreSQLStoreType, postgresURL)
    }

    deinit {
        PostgreSQLTestServer.drop(postgresURL)
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: sqliteURL.path + suffix)
        }
    }

    static func expression(_ name: String, _ function: String, _ keyPaths: [Any], _ type: NSAttributeType)
        -> NSExpressionDescription
    {
        let description = NSExpressionDescription()
        description.name = name
        description.expression = NSExpression(
            forFunction: function,
            arguments: keyPaths.map {
                ($0 as? String).map(NSExpression.init(forKeyPath:)) ?? .init(forConstantValue: $0)
            })
        description.expressionResultType = type
        return description
    }

    /// Requests over `Item`: every aggregate of every attribute that SQL orders or sums.
    static var itemRequests: [String: (NSFetchRequest<NSFetchRequestResult>) -> Void] {
        var requests: [String: (NSFetchRequest<NSFetchRequestResult>) -> Void] = [:]
        let numeric = ["int16", "int32", "int64", "double", "float", "date"]
        // (Decimal aggregates are left out: the SQLite store does not compute them in SQL yet.)
        for name in numeric + ["string", "bool", "uuid"] {
            requests["min/max/count of \(name)"] = { request in
                request.propertiesToFetch = [
                    expression("least", "min:", [name], .undefinedAttributeType),
                    expression("most", "max:", [name], .undefinedAttributeType),
                    expression("counted", "count:", [name], .integer64AttributeType),
                ]
            }
        }
        for name in numeric {
            requests["sum/average of \(name)"] = { request in
                request.propertiesToFetch = [
                    expression("total", "sum:", [name], .undefinedAttributeType),
                    expression("mean", "average:", [name], .undefinedAttributeType),
                ]
            }
            requests["grouped by bool, \(name)"] = { request in
                request.propertiesToFetch = ["bool", expression("total", "sum:", [name], .doubleAttributeType)]
                request.propertiesToGroupBy = ["bool"]
            }
            requests["arithmetic on \(name)"] = { request in
                request.propertiesToFetch = [
                    "string", expression("plus", "add:to:", [name, 1], .undefinedAttributeType),
                    expression("times", "multiply:by:", [name, "int16"], .undefinedAttributeType),
                    expression("ratio", "divide:by:", [name, "int32"], .doubleAttributeType),
                ]
            }
        }
        requests["distinct int64, limited"] = { request in
            request.propertiesToFetch = ["int64"]
            request.returnsDistinctResults = true
            request.fetchLimit = 2
            request.fetchOffset = 1
        }
        requests["every attribute"] = { _ in }
        requests["grouped by string, having"] = { request in
            request.propertiesToFetch = ["string", expression("counted", "count:", ["int16"], .integer64AttributeType)]
            request.propertiesToGroupBy = ["string"]
            request.havingPredicate = NSPredicate(format: "counted >= 1")
        }
        requests["left to memory: MATCHES"] = { request in
            request.propertiesToFetch = ["string", "int16"]
            request.predicate = NSPredicate(format: "string MATCHES '[a-z].*'")
            request.sortDescriptors = [NSSortDescriptor(key: "int16", ascending: false)]
        }
        return requests
    }

    static var employeeRequests: [String: (NSFetchRequest<NSFetchRequestResult>) -> Void] {
        // A to-many relationship's count, as CoreDataQueryInterface fetches one per group.
        let projectCount = NSExpressionDescription()
        projectCount.name = "projects"
        projectCount.expression = NSExpression(forKeyPath: "projects.title.@count")
        projectCount.expressionResultType = .integer64AttributeType
        return [
            "to-one key paths, sorted": { request in
                request.propertiesToFetch = ["name", "department", "department.name", "department.head.name", "headOf"]
                request.sortDescriptors = [NSSortDescriptor(key: "department.name", ascending: false)]
            },
            "grouped by department, having and sorted by a group": { request in
                request.propertiesToFetch = [
                    "department.name", expression("total", "sum:", ["salary"], .doubleAttributeType),
                    expression("oldest", "max:", ["age"], .integer32AttributeType),
                ]
                request.propertiesToGroupBy = ["department.name"]
                request.havingPredicate = NSPredicate(format: "total > %@ OR oldest < 30", NSNumber(value: 100))
                request.sortDescriptors = [NSSortDescriptor(key: "department.name", ascending: false)]
            },
            "grouped, with an expression of one object per group": { request in
                request.propertiesToFetch = [
                    "name", expression("sum", "add:to:", ["salary", "age"], .doubleAttributeType),
                    projectCount,
                ]
                request.propertiesToGroupBy = ["name"]
                request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            },
            "grouped by a relationship": { request in
                request.propertiesToFetch = [
                    "department", expression("counted", "count:", ["name"], .integer64AttributeType),
                ]
                request.propertiesToGroupBy = ["department"]
            },
            "distinct department names with a predicate": { request in
                request.propertiesToFetch = ["department.name"]
                request.returnsDistinctResults = true
                request.predicate = NSPredicate(format: "salary >= 60")
            },
        ]
    }

    /// `rows` with object IDs replaced by the name (or title) of the object they name, so that stores compare.
    func normalized(_ rows: [Any], in context: NSManagedObjectContext) -> [NSDictionary] {
        rows.map { row in
            var dictionary: [String: Any] = [:]
            for case (let key as String, let value) in row as! NSDictionary {
                if let id = value as? NSManagedObjectID {
                    let object = context.object(with: id)
                    let label = object.entity.attributesByName["name"] != nil ? "name" : "title"
                    dictionary[key] = "\(id.entity.name ?? ""):\(object.value(forKey: label) ?? "")"
                } else {
                    dictionary[key] = value
                }
            }
            return NSDictionary(dictionary: dictionary)
        }
    }

    func compare(_ entityName: String, _ label: String, _ configure: (NSFetchRequest<NSFetchRequestResult>) -> Void)
        throws
    {
        var results: [[NSDictionary]] = []
        for context in [sqlite, postgres] {
            try context.run {
                let request = NSFetchRequest<NSFetchRequestResult>(entityName: entityName)
                request.resultType = .dictionaryResultType
                configure(request)
                results.append(normalized(try context.fetch(request), in: context))
            }
        }
        #expect(results[0] == results[1], "\(entityName): \(label)")
    }

    @Test func itemResultsEqualTheSQLiteStore() throws {
        for (label, configure) in Self.itemRequests.sorted(by: { $0.key < $1.key }) {
            #expect(throws: Never.self, "Item: \(label)") { try compare("Item", label, configure) }
        }
    }

    @Test func employeeResultsEqualTheSQLiteStore() throws {
        for (label, configure) in Self.employeeRequests.sorted(by: { $0.key < $1.key }) {
            #expect(throws: Never.self, "Employee: \(label)") { try compare("Employee", label, configure) }
        }
    }
}
