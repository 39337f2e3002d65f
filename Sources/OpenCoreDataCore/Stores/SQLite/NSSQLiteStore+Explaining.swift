import Foundation

/// What the store would run for a fetch, for tools (`coredata explain`): the SQL its generator writes for the request
/// and SQLite's plan for it, without running the fetch.
package struct SQLiteFetchExplanation {
    /// The SELECT statement the fetch runs.
    package var sql: String
    /// The values bound to its parameters, in order, as the SQL debug log shows them.
    package var arguments: [String]
    /// Whether the SQL answers the predicate exactly; when `false`, the context filters the rows in memory.
    package var isExact: Bool
    /// SQLite's plan (`EXPLAIN QUERY PLAN`).
    package var plan: [SQLiteQueryPlanStep]

    /// Explains `request` as the SQLite store `store` would run it; throws if `store` is not a SQLite store.
    package static func explain(
        _ request: NSFetchRequest<NSFetchRequestResult>, in store: NSPersistentStore
    ) throws -> SQLiteFetchExplanation {
        guard let store = store as? NSSQLiteStore else {
            throw coreDataError(
                NSPersistentStoreInvalidTypeError,
                "Only a SQLite store can explain a fetch; the store at \(store.url?.path ?? "(none)") is a \(store.type) store"
            )
        }
        return try store.explainFetch(request)
    }
}

extension NSSQLiteStore {
    /// Explains the fetch `request` (whose entity is resolved against the coordinator's model if not set): the same
    /// generator and the same choice of columns as the fetch itself.
    package func explainFetch(_ request: NSFetchRequest<NSFetchRequestResult>) throws -> SQLiteFetchExplanation {
        try _serialized {
            let (connection, mapping) = try _openStore()
            let requested =
                request.entity
                ?? request.entityName.flatMap { persistentStoreCoordinator?.managedObjectModel.entitiesByName[$0] }
            guard let requested, let entity = mapping.entity(requested) else {
                throw coreDataError(
                    NSPersistentStoreInvalidTypeError,
                    "The store at \(_url?.path ?? "(in memory)") holds no entity '\(request.entityName ?? "")'")
            }
            let selection: SQLiteQueryGenerator.Selection
            if request.resultType == .countResultType {
                selection = .count
            } else {
                let wantsValues = request.includesPropertyValues && request.resultType != .managedObjectIDResultType
                selection = wantsValues && request.fetchBatchSize == 0 ? .rows : .keys
            }
            let plan = SQLiteQueryGenerator(mapping: mapping, store: self).plan(
                request, entity: entity, selection: selection)
            do {
                return SQLiteFetchExplanation(
                    sql: plan.sql, arguments: plan.arguments.map(SQLiteStatementTrace.describe),
                    isExact: plan.isComplete, plan: try connection.queryPlan(plan.sql))
            } catch let error as SQLiteError {
                throw error.coreDataError(url: _url, action: "explaining a fetch from")
            }
        }
    }
}
