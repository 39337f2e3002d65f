import CSQLite
import Foundation

/// Dictionary results in one SELECT (see `SQLiteQueryGenerator+Dictionaries.swift`): what cannot be expressed in SQL
/// exactly as memory computes it throws `NSPersistentStoreUnsupportedRequestTypeError` instead of loading rows.
extension NSSQLiteStore: PersistentStoreDictionaryFetching {
    package func fetchDictionaries(_ fetch: StoreDictionaryFetch) throws -> [NSDictionary] {
        let (connection, mapping) = try _openStore()
        return try _fetchDictionaries(fetch, connection: connection, mapping: mapping)
    }

    /// The dictionaries of `fetch`, read through `connection`.
    func _fetchDictionaries(_ fetch: StoreDictionaryFetch, connection: SQLiteConnection, mapping: SQLiteModelMapping)
        throws -> [NSDictionary]
    {
        guard let entity = mapping.entity(fetch.entity) else { return [] }
        do {
            let plan = try SQLiteQueryGenerator(mapping: mapping, store: self).dictionaryPlan(fetch, entity: entity)
            let statement = try connection.statement(plan.sql)
            statement.bind(plan.arguments)
            var references = SQLiteDestinationIDCache()
            var rows: [NSDictionary] = []
            while try statement.step() {
                let row = NSMutableDictionary()
                for (index, column) in plan.columns.enumerated() {
                    guard let key = column.key else { continue }
                    let position = Int32(index)
                    let value: Any?
                    switch column.read {
                    case .attribute(let type, let attribute):
                        value =
                            SQLiteValueCoding.read(statement, column: position, type: type, attribute: attribute)
                            .publicValue
                    case .object(let number):
                        if statement.isNull(position) {
                            value = nil
                        } else {
                            let entityNumber = number ?? statement.int64(position + 1)
                            value = mapping.entity(number: entityNumber).map {
                                references.objectID(entity: $0.entity, key: statement.int64(position), store: self)
                            }
                        }
                    case .computed(let type):
                        value = StoreDictionaryFetch.typed(Self._raw(statement.value(position)), type)
                    }
                    if let value { row[key] = value }
                }
                rows.append(row.copy() as! NSDictionary)
            }
            statement.reset()
            return rows
        } catch let untranslatable as SQLiteUntranslatable {
            throw coreDataError(
                NSPersistentStoreUnsupportedRequestTypeError,
                """
                The SQLite store cannot compute the dictionary results of '\(fetch.entity._name ?? "")' in SQL: \
                \(untranslatable.reason). Simplify the properties or the predicate
                """,
                userInfo: ["entity": fetch.entity._name ?? ""])
        } catch let error as SQLiteError {
            throw error.coreDataError(url: _url, action: "fetching from")
        }
    }

    private static func _raw(_ value: SQLiteValue) -> Any? {
        switch value {
        case .null: return nil
        case .integer(let number): return number
        case .real(let number): return number
        case .text(let text): return text
        case .blob(let data): return data
        }
    }
}
