import Foundation
import OpenCoreData
import OpenCoreDataCore

/// One change to record: what happened to which row, and for an update or a deletion what its change row holds.
struct PostgreSQLHistoryChange {
    var type: NSPersistentHistoryChangeType
    var entity: Int64
    var key: Int64
    /// The ZCOLUMNS bitmap of an update.
    var columns: Data?
    /// The tombstone values of a deletion (libpq's text of each preserved attribute's column), ZTOMBSTONE0 first.
    var tombstone: [String?] = []
}

/// A row named by entity number and primary key.
struct PostgreSQLHistoryKey: Hashable {
    let entity: Int64
    let key: Int64
}

/// The history of one open PostgreSQL store (`PostgreSQLSchema+History.swift` has the tables): recording one
/// transaction inside a save's or batch request's own database transaction, reading and deleting transactions.
final class PostgreSQLHistory {
    let schema: PostgreSQLSchema
    /// The tombstone columns ACHANGE has.
    let tombstoneColumns: Int
    let layout = PersistentHistoryLayout()
    /// Keys of strings of ATRANSACTIONSTRING that were committed when read. (A key this store inserted is not kept
    /// until a later read finds it: the save that inserted it may yet be rolled back, and the key handed out again.)
    private var stringKeys: [String: Int64] = [:]

    init(schema: PostgreSQLSchema, tombstoneColumns: Int) {
        self.schema = schema
        self.tombstoneColumns = tombstoneColumns
    }

    private var changes: String { schema.qualified(PostgreSQLHistorySchema.changeTable) }
    private var transactions: String { schema.qualified(PostgreSQLHistorySchema.transactionTable) }
    private var strings: String { schema.qualified(PostgreSQLHistorySchema.stringTable) }
    private var primaryKeys: String { schema.qualified("Z_PRIMARYKEY") }

    // MARK: Recording

    /// The tombstone values of rows about to be deleted, by entity number and key: read before the rows go.
    func tombstones(of rows: [(entity: PostgreSQLEntity, key: Int64)], connection: PostgreSQLConnection) throws
        -> [PostgreSQLHistoryKey: [String?]]
    {
        guard tombstoneColumns > 0 else { return [:] }
        var byEntity: [Int64: (entity: PostgreSQLEntity, keys: [Int64])] = [:]
        for row in rows { byEntity[row.entity.number, default: (row.entity, [])].keys.append(row.key) }
        var result: [PostgreSQLHistoryKey: [String?]] = [:]
        for (number, group) in byEntity.sorted(by: { $0.key < $1.key }) {
            let attributes = PersistentHistoryLayout.preservedAttributes(of: group.entity.entity)
            guard !attributes.isEmpty else { continue }
            let columns = attributes.map { attribute -> String in
                guard let slot = group.entity.slotIndex[attribute.name],
                    case .attribute(let column, _, _)? = group.entity.slotColumns[slot]
                else { return "NULL" }
                return quoted(column)
            }
            let found = try connection.query(
                """
                SELECT "Z_PK", \(columns.joined(separator: ", ")) FROM \(schema.qualified(group.entity.table.name)) \
                WHERE "Z_PK" = ANY($1::bigint[])
                """, [PostgreSQLStore.keyList(group.keys)])
            for row in 0..<found.rowCount {
                guard let key = found.int64(row, 0) else { continue }
                result[PostgreSQLHistoryKey(entity: number, key: key)] = columns.indices.map { found.text(row, $0 + 1) }
            }
        }
        return result
    }

    /// Records one transaction of `changes` (none if there are none) inside the caller's database transaction, and
    /// returns its number. Taking the number locks Z_PRIMARYKEY's TRANSACTION row until the caller's transaction
    /// ends, so that numbers follow the order of commits; it is the last thing a writer does before it commits.
    @discardableResult
    func record(
        _ changes: [PostgreSQLHistoryChange], author: StoreTransactionAuthor, connection: PostgreSQLConnection
    ) throws -> Int64? {
        guard !changes.isEmpty else { return nil }
        let bundleID = PersistentHistoryLayout.bundleID
        let processName = PersistentHistoryLayout.processName
        let keys = try stringKeys(
            for: [author.author, author.contextName, bundleID, processName].compactMap { $0 }, connection: connection)
        let recorded = try connection.query(
            """
            WITH n AS (UPDATE \(primaryKeys) SET "Z_MAX" = "Z_MAX" + 1 \
            WHERE "Z_ENT" = \(PostgreSQLHistorySchema.transactionEntity) RETURNING "Z_MAX") \
            INSERT INTO \(transactions) ("Z_PK", "Z_ENT", "ZAUTHORTS", "ZBUNDLEIDTS", "ZCONTEXTNAMETS", \
            "ZPROCESSIDTS", "ZTIMESTAMP") \
            SELECT n."Z_MAX", \(PostgreSQLHistorySchema.transactionEntity), $1::bigint, $2::bigint, $3::bigint, \
            $4::bigint, (EXTRACT(EPOCH FROM clock_timestamp()) - 978307200)::double precision FROM n RETURNING "Z_PK"
            """,
            [
                author.author.flatMap { keys[$0] }.map { String($0) }, keys[bundleID].map { String($0) },
                author.contextName.flatMap { keys[$0] }.map { String($0) }, keys[processName].map { String($0) },
            ])
        guard let number = recorded.int64(0, 0) else { throw missingCounter(PostgreSQLHistorySchema.transactionEntity) }

        // The change rows, a few thousand per statement, their keys taken from Z_PRIMARYKEY in the same statement.
        let tombstoneNames = (0..<tombstoneColumns).map { ", \(quoted("ZTOMBSTONE\($0)"))" }.joined()
        let tombstoneValues = (0..<tombstoneColumns).map { ", v.t\($0)" }.joined()
        let types = ["integer", "integer", "bigint", "bytea"] + Array(repeating: "text", count: tombstoneColumns)
        let rowsFrom = types.enumerated().map { "unnest($\($0.offset + 3)::\($0.element)[])" }
        let sql = """
            WITH k AS (UPDATE \(primaryKeys) SET "Z_MAX" = "Z_MAX" + $1::bigint \
            WHERE "Z_ENT" = \(PostgreSQLHistorySchema.changeEntity) RETURNING "Z_MAX") \
            INSERT INTO \(self.changes) ("Z_PK", "Z_ENT", "ZCHANGETYPE", "ZENTITY", "ZENTITYPK", "ZTRANSACTIONID", \
            "ZCOLUMNS"\(tombstoneNames)) \
            SELECT k."Z_MAX" - $1::bigint + v.n, \(PostgreSQLHistorySchema.changeEntity), v.ct, v.en, v.pk, \
            $2::bigint, v.cols\(tombstoneValues) \
            FROM k, ROWS FROM (\(rowsFrom.joined(separator: ", "))) WITH ORDINALITY \
            AS v(ct, en, pk, cols\((0..<tombstoneColumns).map { ", t\($0)" }.joined()), n)
            """
        try PostgreSQLStore.inChunks(changes, columnCount: 4 + tombstoneColumns) { change in
            var texts: [String?] = [
                String(change.type.rawValue), String(change.entity), String(change.key),
                change.columns.map(PostgreSQLValueCoding.hex),
            ]
            for index in 0..<tombstoneColumns {
                texts.append(index < change.tombstone.count ? change.tombstone[index] : nil)
            }
            return texts
        } send: { columns in
            let inserted = try connection.query(
                sql, [String(columns[0].count), String(number)] + columns.map(PostgreSQLStore.arrayLiteral))
            guard inserted.affectedRows == columns[0].count else {
                throw missingCounter(PostgreSQLHistorySchema.changeEntity)
            }
        }
        return number
    }

    /// The keys of `names` in ATRANSACTIONSTRING, adding those that are not there.
    private func stringKeys(for names: [String], connection: PostgreSQLConnection) throws -> [String: Int64] {
        var keys: [String: Int64] = [:]
        var missing: [String] = []
        for name in Set(names) {
            if let key = stringKeys[name] { keys[name] = key } else { missing.append(name) }
        }
        guard !missing.isEmpty else { return keys }
        let list = PostgreSQLStore.arrayLiteral(missing)
        let found = try connection.query(
            "SELECT \"ZNAME\", \"Z_PK\" FROM \(strings) WHERE \"ZNAME\" = ANY($1::text[])", [list])
        for row in 0..<found.rowCount {
            guard let name = found.text(row, 0), let key = found.int64(row, 1) else { continue }
            keys[name] = key
            stringKeys[name] = key
        }
        missing.removeAll { keys[$0] != nil }
        guard !missing.isEmpty else { return keys }
        // A string another writer adds meanwhile is left to it (ON CONFLICT), and read back after.
        let added = try connection.query(
            """
            WITH k AS (UPDATE \(primaryKeys) SET "Z_MAX" = "Z_MAX" + $1::bigint \
            WHERE "Z_ENT" = \(PostgreSQLHistorySchema.stringEntity) RETURNING "Z_MAX") \
            INSERT INTO \(strings) ("Z_PK", "Z_ENT", "ZNAME") \
            SELECT k."Z_MAX" - $1::bigint + v.n, \(PostgreSQLHistorySchema.stringEntity), v.name \
            FROM k, unnest($2::text[]) WITH ORDINALITY AS v(name, n) \
            ON CONFLICT ("ZNAME") DO NOTHING RETURNING "ZNAME", "Z_PK"
            """, [String(missing.count), PostgreSQLStore.arrayLiteral(missing)])
        for row in 0..<added.rowCount {
            if let name = added.text(row, 0), let key = added.int64(row, 1) { keys[name] = key }
        }
        missing.removeAll { keys[$0] != nil }
        if !missing.isEmpty {
            let again = try connection.query(
                "SELECT \"ZNAME\", \"Z_PK\" FROM \(strings) WHERE \"ZNAME\" = ANY($1::text[])",
                [PostgreSQLStore.arrayLiteral(missing)])
            for row in 0..<again.rowCount {
                if let name = again.text(row, 0), let key = again.int64(row, 1) { keys[name] = key }
            }
        }
        return keys
    }

    private func missingCounter(_ entity: Int64) -> NSError {
        PostgreSQLStore.error(
            CocoaError.Code.fileReadCorruptFile.rawValue,
            "The schema \(schema.schema) has history tables but no Z_PRIMARYKEY row for history entity \(entity)")
    }

    // MARK: Reading

    /// The number of the last transaction recorded (0 if none ever was).
    func lastTransactionNumber(connection: PostgreSQLConnection) throws -> Int64 {
        let found = try connection.query(
            """
            SELECT GREATEST((SELECT "Z_MAX" FROM \(primaryKeys) WHERE "Z_ENT" = \
            \(PostgreSQLHistorySchema.transactionEntity)), (SELECT MAX("Z_PK") FROM \(transactions)), 0)
            """)
        return found.int64(0, 0) ?? 0
    }

    /// Whether transactions after `number` were deleted (a token that old has expired).
    func hasDeletedTransactions(after number: Int64, connection: PostgreSQLConnection) throws -> Bool {
        let oldest = try connection.query("SELECT MIN(\"Z_PK\") FROM \(transactions)").int64(0, 0)
        let next = try oldest ?? (lastTransactionNumber(connection: connection) + 1)
        return number < next - 1
    }

    /// The transactions in `range`, oldest first, with their changes if `withChanges` (in the caller's transaction,
    /// so that the changes read are those of the transactions read).
    func transactions(
        in range: PersistentHistoryRange, withChanges: Bool, store: PostgreSQLStore, connection: PostgreSQLConnection
    ) throws -> [NSPersistentHistoryTransaction] {
        let (condition, arguments) = range.postgreSQLCondition(column: "t.")
        let fields = ["AUTHOR", "BUNDLEID", "CONTEXTNAME", "PROCESSID"]
        // Each string from its key, else from its plain twin.
        let select = fields.enumerated().map { "COALESCE(s\($0.offset).\"ZNAME\", t.\(quoted("Z" + $0.element)))" }
        let joins = fields.enumerated().map {
            "LEFT JOIN \(strings) s\($0.offset) ON s\($0.offset).\"Z_PK\" = t.\(quoted("Z\($0.element)TS"))"
        }
        let found = try connection.query(
            """
            SELECT t."Z_PK", t."ZTIMESTAMP", \(select.joined(separator: ", ")) FROM \(transactions) t \
            \(joins.joined(separator: " ")) WHERE \(condition) ORDER BY t."Z_PK"
            """, arguments)
        guard found.rowCount > 0, let first = found.int64(0, 0), let last = found.int64(found.rowCount - 1, 0) else {
            return []
        }
        let changes =
            withChanges ? try self.changes(from: first, through: last, store: store, connection: connection) : [:]
        let storeID = store.identifier ?? ""
        return (0..<found.rowCount).compactMap { row in
            guard let number = found.int64(row, 0) else { return nil }
            return NSPersistentHistoryTransaction(
                transactionNumber: number,
                timestamp: Date(timeIntervalSinceReferenceDate: found.text(row, 1).flatMap { Double($0) } ?? 0),
                storeID: storeID, author: found.text(row, 2), bundleID: found.text(row, 3) ?? "",
                processID: found.text(row, 5) ?? "", contextName: found.text(row, 4),
                changes: withChanges ? changes[number] ?? [] : nil)
        }
    }

    /// The changes of the transactions numbered `first` to `last`, by transaction. Changes of an entity or of a kind
    /// this model does not know are left out (and left in the table).
    private func changes(
        from first: Int64, through last: Int64, store: PostgreSQLStore, connection: PostgreSQLConnection
    ) throws -> [Int64: [NSPersistentHistoryChange]] {
        let tombstones = (0..<tombstoneColumns).map { ", \(quoted("ZTOMBSTONE\($0)"))" }.joined()
        let found = try connection.query(
            """
            SELECT "Z_PK", "ZCHANGETYPE", "ZENTITY", "ZENTITYPK", "ZTRANSACTIONID", "ZCOLUMNS"\(tombstones) \
            FROM \(changes) WHERE "ZTRANSACTIONID" BETWEEN $1::bigint AND $2::bigint ORDER BY "Z_PK"
            """, [String(first), String(last)])
        var result: [Int64: [NSPersistentHistoryChange]] = [:]
        for row in 0..<found.rowCount {
            guard let id = found.int64(row, 0), let kind = found.int64(row, 1),
                let type = NSPersistentHistoryChangeType(rawValue: Int(kind)),
                let entity = found.int64(row, 2).flatMap({ schema.entity(number: $0) }),
                let key = found.int64(row, 3), let transaction = found.int64(row, 4)
            else { continue }
            var updated: Set<NSPropertyDescription>?
            if type == .update, let bitmap = found.text(row, 5).flatMap(PostgreSQLValueCoding.data) {
                updated = layout.updatedProperties(bitmap, entity: entity.entity)
            }
            var tombstone: [AnyHashable: Any]?
            if type == .delete {
                let attributes = PersistentHistoryLayout.preservedAttributes(of: entity.entity)
                var values: [AnyHashable: Any] = [:]
                for (index, attribute) in attributes.enumerated() where index < tombstoneColumns {
                    guard let text = found.text(row, 6 + index) else { continue }
                    let value = PostgreSQLValueCoding.value(text, type: attribute.attributeType, attribute: attribute)
                    if let value = value.publicValue { values[attribute.name] = value }
                }
                tombstone = attributes.isEmpty ? nil : values
            }
            result[transaction, default: []].append(
                NSPersistentHistoryChange(
                    changeID: id, changedObjectID: store.objectID(entity.entity, key: key), changeType: type,
                    tombstone: tombstone, updatedProperties: updated))
        }
        return result
    }

    // MARK: Deleting

    /// Deletes the transactions in `range` and their changes; returns how many changes went.
    func delete(_ range: PersistentHistoryRange, connection: PostgreSQLConnection) throws -> Int {
        let (condition, arguments) = range.postgreSQLCondition(column: "")
        let deleted = try connection.query(
            """
            DELETE FROM \(changes) WHERE "ZTRANSACTIONID" IN (SELECT "Z_PK" FROM \(transactions) WHERE \(condition))
            """, arguments)
        try connection.query("DELETE FROM \(transactions) WHERE \(condition)", arguments)
        return deleted.affectedRows
    }
}

extension PersistentHistoryRange {
    /// The range as a condition on ATRANSACTION (its columns prefixed with `column`), with its arguments.
    func postgreSQLCondition(column prefix: String) -> (sql: String, arguments: [String?]) {
        switch self {
        case .all: return ("TRUE", [])
        case .none: return ("FALSE", [])
        case .after(let number): return ("\(prefix)\"Z_PK\" > $1::bigint", [String(number)])
        case .through(let number): return ("\(prefix)\"Z_PK\" <= $1::bigint", [String(number)])
        case .afterDate(let date):
            return (
                "\(prefix)\"ZTIMESTAMP\" > $1::double precision",
                [PostgreSQLValueCoding.text(date.timeIntervalSinceReferenceDate)]
            )
        case .beforeDate(let date):
            return (
                "\(prefix)\"ZTIMESTAMP\" < $1::double precision",
                [PostgreSQLValueCoding.text(date.timeIntervalSinceReferenceDate)]
            )
        }
    }
}
