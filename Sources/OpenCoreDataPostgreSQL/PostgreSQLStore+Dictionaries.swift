import Foundation
import OpenCoreData
import OpenCoreDataCore

/// Dictionary results (`.dictionaryResultType`) in one SELECT (`PostgreSQLQueryGenerator+Dictionaries.swift`), read
/// into the same dictionaries the SQLite store returns. A request whose parts SQL cannot compute as memory does
/// (a predicate left to memory, say) is computed by the framework from the matching objects instead, as it is for
/// stores without SQL.
extension PostgreSQLStore: PersistentStoreDictionaryFetching {
    package func fetchDictionaries(_ fetch: StoreDictionaryFetch) throws -> [NSDictionary] {
        let (connection, schema) = try open()
        guard let entity = schema.entity(fetch.entity) else { return [] }
        let plan: PostgreSQLDictionaryPlan
        let result: PostgreSQLResult
        do {
            let generator = PostgreSQLQueryGenerator(schema: schema, store: self, foldsCase: try foldsCase(connection))
            plan = try generator.dictionaryPlan(fetch, entity: entity)
            result = try connection.query(plan.sql, plan.arguments)
        } catch is PostgreSQLUntranslatable {
            return try NSManagedObjectContext._emulate(fetch, in: self)
        } catch {
            throw self.error(error, code: NSPersistentStoreOperationError, action: "fetching from")
        }
        var rows: [NSDictionary] = []
        rows.reserveCapacity(result.rowCount)
        for index in 0..<result.rowCount {
            let row = NSMutableDictionary()
            for (position, column) in plan.columns.enumerated() {
                guard let key = column.key, let text = result.text(index, position) else { continue }
                let value: Any?
                switch column.read {
                case .attribute(let type, let attribute):
                    value = PostgreSQLValueCoding.value(text, type: type, attribute: attribute).publicValue
                case .object(let number):
                    let entityNumber = number ?? result.int64(index, position + 1)
                    value = entityNumber.flatMap { schema.entity(number: $0) }.flatMap { destination in
                        Int64(text).map { objectID(destination.entity, key: $0) }
                    }
                case .computed(let type, let isText):
                    value = StoreDictionaryFetch.typed(isText ? text : Self.number(text, type: type), type)
                case .entityNumber:
                    value = nil
                }
                if let value { row[key] = value }
            }
            rows.append(row.copy() as! NSDictionary)
        }
        return rows
    }

    /// A computed number as libpq's text gives it: integers (`count`, the `numeric` sum of integers) as integers,
    /// decimals for a decimal result, other numbers as doubles — the values SQLite hands the SQLite store.
    static func number(_ text: String, type: NSAttributeType) -> Any? {
        if type == .decimalAttributeType, let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
        {
            return NSDecimalNumber(decimal: decimal)
        }
        if let integer = Int64(text) { return integer }
        return Double(text)
    }
}
