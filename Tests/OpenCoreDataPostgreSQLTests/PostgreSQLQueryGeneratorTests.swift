import Foundation
import OpenCoreData
import StoreConformance
import Testing

@testable import OpenCoreDataCore
@testable import OpenCoreDataPostgreSQL

/// Which predicates become SQL and which are left to in-memory evaluation: white-box, because the results are the same
/// either way (the conformance suite checks those) and only the SQL shows the difference. No server needed.
@Suite struct PostgreSQLQueryGeneratorTests {
    static let model = ConformanceModel.shared
    let schema = PostgreSQLSchema(model: model, configuration: nil, schema: "app")

    func plan(
        _ entityName: String, _ format: String, _ arguments: [Any] = [], sortedBy keys: [String] = [],
        limit: Int = 0, offset: Int = 0
    ) -> PostgreSQLFetchPlan {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.model)
        let store = PostgreSQLStore(
            persistentStoreCoordinator: coordinator, configurationName: nil, at: URL(string: "postgres:///db")!)
        let request = NSFetchRequest<NSFetchRequestResult>(entityName: entityName)
        request.entity = Self.model.entitiesByName[entityName]
        request.predicate = NSPredicate(format: format, argumentArray: arguments)
        request.sortDescriptors = keys.map { NSSortDescriptor(key: $0, ascending: true) }
        request.fetchLimit = limit
        request.fetchOffset = offset
        let generator = PostgreSQLQueryGenerator(schema: schema, store: store, foldsCase: true)
        return generator.plan(request, entity: schema.entity(request.entity!)!, selection: .rows)
    }

    @Test(arguments: [
        "int16 > 5", "int64 != 42", "int16 BETWEEN {0, 6}", "double >= 2.0", "decimal > 100", "bool == YES",
        "int16 IN {3, 9, 100}", "string ==[c] 'BETA'", "string BEGINSWITH 'a'", "string LIKE[c] '*A'",
        "string < 'b'", "string == nil", "NOT (int32 > 0)", "int16 > 5 OR string == 'alpha'", "TRUEPREDICATE",
    ])
    func itemPredicatesBecomeSQL(_ format: String) {
        #expect(plan("Item", format).isComplete)
    }

    @Test func toOneKeyPathsJoinTheDestinationTable() {
        let plan = plan("Project", "department.head.name == 'Cid'")
        #expect(plan.isComplete)
        #expect(plan.sql.contains("LEFT JOIN \"app\".\"ZDEPARTMENT\" t1 ON t1.\"Z_PK\" = t0.\"ZDEPARTMENT\""))
        #expect(plan.sql.contains("LEFT JOIN \"app\".\"ZPERSON\" t2 ON t2.\"Z_PK\" = t1.\"ZHEAD\""))
        #expect(plan.arguments.contains("Cid"))
    }

    @Test func valuesAreBoundNeverSpliced() {
        let plan = plan("Item", "string == %@", ["x'); DROP TABLE \"ZITEM\"; --"])
        #expect(plan.isComplete)
        #expect(!plan.sql.contains("DROP"))
        #expect(plan.arguments.contains("x'); DROP TABLE \"ZITEM\"; --"))
    }

    @Test(arguments: [
        "string ENDSWITH[d] 'e'", "string MATCHES '[a-z]+'", "int16 + int64 > 40",
    ])
    func whatPostgreSQLWouldAnswerDifferentlyIsLeftToMemory(_ format: String) {
        #expect(!plan("Item", format).isComplete)
    }

    @Test func toManyKeyPathsAreLeftToMemory() {
        #expect(!plan("Person", "ANY projects.title == 'Apollo'").isComplete)
        #expect(!plan("Department", "employees.@count == 2").isComplete)
    }

    @Test func theTranslatablePartsOfAnAndStillNarrowTheCandidates() {
        let plan = plan("Person", "ANY projects.title BEGINSWITH 'A' AND age < 40")
        #expect(!plan.isComplete)
        #expect(plan.sql.contains("t0.\"ZAGE\" < $"))
    }

    @Test func stringsSortByCodePointWithNilFirst() {
        let plan = plan("Item", "TRUEPREDICATE", sortedBy: ["string"])
        #expect(plan.sql.contains("ORDER BY t0.\"ZSTRING\" COLLATE \"C\" ASC NULLS FIRST, t0.\"Z_PK\""))
    }

    @Test func aLookupWithoutSortDescriptorsLeavesTheOrderToTheServer() {
        // `ORDER BY "Z_PK" LIMIT 1` makes PostgreSQL walk the primary key rather than use the filter's index.
        let lookup = plan("Item", "int64 == 42", limit: 1)
        #expect(lookup.isComplete)
        #expect(!lookup.sql.contains("ORDER BY"))
        #expect(lookup.sql.contains("LIMIT"))
        // An offset still means the same rows each time.
        #expect(plan("Item", "int64 > 0", limit: 5, offset: 10).sql.contains("ORDER BY t0.\"Z_PK\""))
    }

    /// The dictionary fetch of `request` on `Employee`, as SQL (or the reason it is left to memory).
    func dictionaryPlan(_ configure: (NSFetchRequest<NSFetchRequestResult>) -> Void) throws -> PostgreSQLDictionaryPlan
    {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.model)
        let store = PostgreSQLStore(
            persistentStoreCoordinator: coordinator, configurationName: nil, at: URL(string: "postgres:///db")!)
        let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Employee")
        request.entity = Self.model.entitiesByName["Employee"]
        request.resultType = .dictionaryResultType
        configure(request)
        let fetch = StoreDictionaryFetch(request, entity: request.entity!)
        let generator = PostgreSQLQueryGenerator(schema: schema, store: store, foldsCase: true)
        return try generator.dictionaryPlan(fetch, entity: schema.entity(request.entity!)!)
    }

    @Test func groupedAggregatesWithAHavingPredicateAreOneStatement() throws {
        let total = NSExpressionDescription()
        total.name = "total"
        total.expression = NSExpression(forFunction: "sum:", arguments: [NSExpression(forKeyPath: "salary")])
        total.expressionResultType = .doubleAttributeType
        let plan = try dictionaryPlan { request in
            request.propertiesToFetch = ["department.name", total]
            request.propertiesToGroupBy = ["department.name"]
            request.havingPredicate = NSPredicate(format: "total > 150")
            request.predicate = NSPredicate(format: "age > %d", 20)
        }
        #expect(plan.sql.contains("sum(t0.\"ZSALARY\")"))
        #expect(plan.sql.contains(" GROUP BY 1 HAVING (sum(t0.\"ZSALARY\") > $"))
        #expect(plan.sql.contains("ORDER BY t1.\"ZNAME\" COLLATE \"C\" ASC NULLS FIRST"))
        #expect(plan.arguments.contains("150") && plan.arguments.contains("20"))
    }

    @Test func divisionIsInFloatingPointAndByZeroNull() throws {
        let half = NSExpressionDescription()
        half.name = "half"
        half.expression = NSExpression(
            forFunction: "divide:by:", arguments: [NSExpression(forKeyPath: "age"), NSExpression(forKeyPath: "salary")])
        half.expressionResultType = .doubleAttributeType
        let plan = try dictionaryPlan { $0.propertiesToFetch = [half] }
        #expect(plan.sql.contains("((t0.\"ZAGE\")::double precision / NULLIF(t0.\"ZSALARY\", 0))"))
    }

    @Test func dictionaryFetchesSQLWouldAnswerDifferentlyAreLeftToMemory() {
        #expect(throws: PostgreSQLUntranslatable.self) {
            try dictionaryPlan {
                $0.propertiesToFetch = ["name"]
                $0.predicate = NSPredicate(format: "name MATCHES 'A.*'")
            }
        }
    }
}
