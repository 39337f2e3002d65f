import Foundation

// Persistent history in Apple's tables, in the store's own file (CoreDataPlus's SampleModel2 stores in shared/corpus
// were written with history on, and are the reference):
//
// - ATRANSACTION: one row per save (or batch request) that changed something: Z_PK is the transaction number a token
//   carries, ZTIMESTAMP the commit time (seconds since 2001), and the author, bundle ID, context name and process name
//   as keys into ATRANSACTIONSTRING (the …TS columns). The VARCHAR twins (ZAUTHOR…) are left NULL, as Apple leaves
//   them; they are read when set.
// - ACHANGE: one row per object a transaction inserted (ZCHANGETYPE 0), updated (1) or deleted (2): the entity's
//   number and primary key, the transaction, for an update ZCOLUMNS, a bitmap of the properties it wrote (bit n from
//   the most significant bit of the first byte is the n-th of the entity's stored properties, attributes and
//   relationships together, sorted by name), and for a deletion ZTOMBSTONE<n>, the value of the n-th (by name) of the
//   entity's attributes marked preservesValueInHistoryOnDeletion, as its own column held it.
// - ATRANSACTIONSTRING: every string once (unique index on ZNAME).
// - Z_PRIMARYKEY counts their keys under entity numbers 16001 (CHANGE), 16002 (TRANSACTION) and 16003
//   (TRANSACTIONSTRING); Z_OPT stays NULL.
//
// Tables written by a newer Apple OS may have columns this release does not know: they are left alone (NULL in the
// rows written here), and reading uses only the columns it knows, so their history stays readable. Changes of a kind
// or an entity this release cannot represent are skipped when read, never deleted but with their transaction.

/// Apple's names and numbers of the history tables.
enum SQLiteHistorySchema {
    static let changeEntity: Int64 = 16001
    static let transactionEntity: Int64 = 16002
    static let stringEntity: Int64 = 16003

    /// The CREATE statements, spelled as Apple's framework spells them (sqlite_master keeps the text), with
    /// `tombstones` tombstone columns.
    static func createStatements(tombstones: Int) -> [String] {
        let tombstoneColumns = (0..<tombstones).map { ", ZTOMBSTONE\($0) BLOB" }.joined()
        return [
            "CREATE TABLE ACHANGE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCHANGETYPE INTEGER, "
                + "ZENTITY INTEGER, ZENTITYPK INTEGER, ZTRANSACTIONID INTEGER, ZCOLUMNS BLOB\(tombstoneColumns) )",
            "CREATE TABLE ATRANSACTION ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZAUTHORTS INTEGER, "
                + "ZBUNDLEIDTS INTEGER, ZCONTEXTNAMETS INTEGER, ZPROCESSIDTS INTEGER, ZTIMESTAMP FLOAT, "
                + "ZAUTHOR VARCHAR, ZBUNDLEID VARCHAR, ZCONTEXTNAME VARCHAR, ZPROCESSID VARCHAR, ZQUERYGEN BLOB )",
            "CREATE TABLE ATRANSACTIONSTRING ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR )",
            "CREATE INDEX ACHANGE_ZTRANSACTIONID_INDEX ON ACHANGE (ZTRANSACTIONID)",
            "CREATE INDEX ATRANSACTION_ZAUTHORTS_INDEX ON ATRANSACTION (ZAUTHORTS)",
            "CREATE INDEX ATRANSACTION_ZBUNDLEIDTS_INDEX ON ATRANSACTION (ZBUNDLEIDTS)",
            "CREATE INDEX ATRANSACTION_ZCONTEXTNAMETS_INDEX ON ATRANSACTION (ZCONTEXTNAMETS)",
            "CREATE INDEX ATRANSACTION_ZPROCESSIDTS_INDEX ON ATRANSACTION (ZPROCESSIDTS)",
            "CREATE INDEX Z_TRANSACTION_TransactionAuthorIndex ON ATRANSACTION (ZAUTHOR COLLATE BINARY ASC)",
            "CREATE INDEX Z_TRANSACTION_TransactionTimestampIndex ON ATRANSACTION (ZTIMESTAMP COLLATE BINARY ASC)",
            "CREATE UNIQUE INDEX Z_TRANSACTIONSTRING_UNIQUE_NAME ON ATRANSACTIONSTRING (ZNAME COLLATE BINARY ASC)",
        ]
    }

    /// Whether the file has history tables.
    static func exists(in connection: SQLiteConnection) throws -> Bool {
        let tables = try connection.tableNames()
        return tables.contains("ATRANSACTION") && tables.contains("ACHANGE")
    }

    /// How many tombstone columns `mapping`'s entities need: the most preserved attributes of any entity.
    static func tombstonesNeeded(by mapping: SQLiteModelMapping) -> Int {
        mapping.entities.map { SQLiteHistory.preservedAttributes(of: $0.entity).count }.max() ?? 0
    }

    /// Creates the history tables, or adds the tombstone columns the model needs to existing ones, and the
    /// Z_PRIMARYKEY rows (inside the caller's transaction).
    static func prepare(_ connection: SQLiteConnection, tombstones: Int) throws {
        if try exists(in: connection) {
            let present = try connection.columns(of: "ACHANGE").map(\.name)
            var index = 0
            while index < tombstones {
                if !present.contains("ZTOMBSTONE\(index)") {
                    try connection.execute("ALTER TABLE ACHANGE ADD COLUMN ZTOMBSTONE\(index) BLOB")
                }
                index += 1
            }
        } else {
            for statement in createStatements(tombstones: tombstones) {
                try connection.execute(statement)
            }
        }
        let row = try connection.statement(
            "INSERT OR IGNORE INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, 0, ?)")
        for (number, name, table) in [
            (changeEntity, "CHANGE", "ACHANGE"), (transactionEntity, "TRANSACTION", "ATRANSACTION"),
            (stringEntity, "TRANSACTIONSTRING", "ATRANSACTIONSTRING"),
        ] {
            let max = try connection.scalar("SELECT IFNULL(MAX(Z_PK), 0) FROM \(table)") ?? 0
            try row.run([.integer(number), .text(name), .integer(max)])
        }
    }
}

/// One change to record: what happened to which row, and for updates and deletions what a change row holds.
struct SQLiteHistoryChange {
    var type: NSPersistentHistoryChangeType
    var entity: Int64
    var key: Int64
    /// The ZCOLUMNS bitmap of an update.
    var columns: Data?
    /// The tombstone values of a deletion, ZTOMBSTONE0 first.
    var tombstone: [SQLiteValue] = []
}

/// Who made a transaction: the saving context's `transactionAuthor` and `name`.
package struct StoreTransactionAuthor {
    package var author: String?
    package var contextName: String?

    package init(author: String? = nil, contextName: String? = nil) {
        self.author = author
        self.contextName = contextName
    }
}

/// The history of one open store: recording transactions inside the store's write transactions, reading and deleting
/// them.
final class SQLiteHistory {
    /// The columns the file's history tables have.
    private(set) var transactionColumns: Set<String>
    private(set) var tombstoneColumns: Int

    init(connection: SQLiteConnection) throws {
        transactionColumns = Set(try connection.columns(of: "ATRANSACTION").map(\.name))
        let changeColumns = Set(try connection.columns(of: "ACHANGE").map(\.name))
        var count = 0
        while changeColumns.contains("ZTOMBSTONE\(count)") { count += 1 }
        tombstoneColumns = count
    }

    /// The bundle identifier and process name recorded with every transaction of this process.
    static var processName: String { PersistentHistoryLayout.processName }
    static var bundleID: String { PersistentHistoryLayout.bundleID }

    // MARK: Layouts

    private let layout = PersistentHistoryLayout()

    static func recordedProperties(of entity: NSEntityDescription) -> [NSPropertyDescription] {
        PersistentHistoryLayout.recordedProperties(of: entity)
    }

    static func preservedAttributes(of entity: NSEntityDescription) -> [NSAttributeDescription] {
        PersistentHistoryLayout.preservedAttributes(of: entity)
    }

    /// The ZCOLUMNS bitmap of the properties named `names` of `entity`.
    func columnsBitmap(of names: some Sequence<String>, entity: NSEntityDescription) -> Data {
        layout.columnsBitmap(of: names, entity: entity)
    }

    /// The properties a ZCOLUMNS bitmap names (`nil` for a bitmap of another version of the model).
    func updatedProperties(_ bitmap: Data, entity: NSEntityDescription) -> Set<NSPropertyDescription>? {
        layout.updatedProperties(bitmap, entity: entity)
    }

    // MARK: Recording

    /// The tombstone values of the rows about to be deleted, by entity number and key: read before the rows go.
    func tombstones(
        of rows: [(entity: SQLiteEntityMapping, key: Int64)], connection: SQLiteConnection
    ) throws -> [SQLiteHistoryKey: [SQLiteValue]] {
        var byEntity: [ObjectIdentifier: (entity: SQLiteEntityMapping, keys: [Int64])] = [:]
        for row in rows {
            byEntity[ObjectIdentifier(row.entity), default: (row.entity, [])].keys.append(row.key)
        }
        var result: [SQLiteHistoryKey: [SQLiteValue]] = [:]
        for (_, group) in byEntity {
            let attributes = Self.preservedAttributes(of: group.entity.entity)
            guard !attributes.isEmpty else { continue }
            let columns = attributes.map { attribute -> String in
                let slot = group.entity.entity._caches.slotByName[attribute._name] ?? -1
                guard slot >= 0, slot < group.entity.slots.count,
                    case .attribute(let column, _, _) = group.entity.slots[slot]
                else { return "NULL" }
                return SQLiteName.quoted(group.entity.table.columns[column].name)
            }
            let statement = try connection.statement(
                "SELECT Z_PK, \(columns.joined(separator: ", ")) FROM \(SQLiteName.quoted(group.entity.table.name)) "
                    + "WHERE Z_PK IN \(SQLiteTable.boundKeys)")
            statement.bind(SQLiteTable.keyList(group.keys), at: 1)
            while try statement.step() {
                let values = (0..<columns.count).map { statement.value(Int32($0 + 1)) }
                result[SQLiteHistoryKey(entity: group.entity.number, key: statement.int64(0))] = values
            }
            statement.reset()
        }
        return result
    }

    /// Records one transaction of `changes` (none if there are none) inside the caller's write transaction, and
    /// returns its number.
    @discardableResult
    func record(_ changes: [SQLiteHistoryChange], author: StoreTransactionAuthor, connection: SQLiteConnection)
        throws -> Int64?
    {
        guard !changes.isEmpty else { return nil }
        let transaction = try reserve(1, of: SQLiteHistorySchema.transactionEntity, connection: connection)
        var names: [String: Int64] = [:]
        for name in [author.author, author.contextName, Self.bundleID, Self.processName].compactMap({ $0 }) {
            names[name] = try intern(name, connection: connection)
        }
        try connection.statement(
            "INSERT INTO ATRANSACTION (Z_PK, Z_ENT, ZAUTHORTS, ZBUNDLEIDTS, ZCONTEXTNAMETS, ZPROCESSIDTS, ZTIMESTAMP) "
                + "VALUES (?, ?, ?, ?, ?, ?, ?)"
        ).run([
            .integer(transaction), .integer(SQLiteHistorySchema.transactionEntity),
            author.author.flatMap { names[$0] }.map(SQLiteValue.integer) ?? .null,
            .integer(names[Self.bundleID]!),
            author.contextName.flatMap { names[$0] }.map(SQLiteValue.integer) ?? .null,
            .integer(names[Self.processName]!),
            .real(Date().timeIntervalSinceReferenceDate),
        ])
        var key = try reserve(Int64(changes.count), of: SQLiteHistorySchema.changeEntity, connection: connection)
        let tombstoneNames = (0..<tombstoneColumns).map { ", ZTOMBSTONE\($0)" }.joined()
        let insert = try connection.statement(
            "INSERT INTO ACHANGE (Z_PK, Z_ENT, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID, ZCOLUMNS"
                + "\(tombstoneNames)) VALUES (?, ?, ?, ?, ?, ?, ?"
                + String(repeating: ", ?", count: tombstoneColumns) + ")")
        for change in changes {
            insert.bind(key, at: 1)
            insert.bind(SQLiteHistorySchema.changeEntity, at: 2)
            insert.bind(Int64(change.type.rawValue), at: 3)
            insert.bind(change.entity, at: 4)
            insert.bind(change.key, at: 5)
            insert.bind(transaction, at: 6)
            insert.bind(change.columns.map(SQLiteValue.blob) ?? .null, at: 7)
            for index in 0..<tombstoneColumns {
                insert.bind(index < change.tombstone.count ? change.tombstone[index] : .null, at: Int32(8 + index))
            }
            while try insert.step() {}
            insert.reset()
            key += 1
        }
        return transaction
    }

    /// Reserves `count` keys of one of the history entities; returns the first.
    private func reserve(_ count: Int64, of entity: Int64, connection: SQLiteConnection) throws -> Int64 {
        try connection.statement("UPDATE Z_PRIMARYKEY SET Z_MAX = IFNULL(Z_MAX, 0) + ? WHERE Z_ENT = ?")
            .run([.integer(count), .integer(entity)])
        guard let max = try connection.scalar("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?", [.integer(entity)])
        else {
            throw coreDataError(
                CocoaError.Code.fileReadCorruptFile.rawValue,
                "The store has history tables but no Z_PRIMARYKEY row for history entity \(entity)")
        }
        return max - count + 1
    }

    /// The key of `name` in ATRANSACTIONSTRING, added if it is not there.
    private func intern(_ name: String, connection: SQLiteConnection) throws -> Int64 {
        if let key = try connection.scalar("SELECT Z_PK FROM ATRANSACTIONSTRING WHERE ZNAME = ?", [.text(name)]) {
            return key
        }
        let key = try reserve(1, of: SQLiteHistorySchema.stringEntity, connection: connection)
        try connection.statement("INSERT INTO ATRANSACTIONSTRING (Z_PK, Z_ENT, ZNAME) VALUES (?, ?, ?)")
            .run([.integer(key), .integer(SQLiteHistorySchema.stringEntity), .text(name)])
        return key
    }

    // MARK: Reading

    /// The number of the last transaction recorded (0 if none ever was).
    func lastTransactionNumber(connection: SQLiteConnection) throws -> Int64 {
        let counted =
            try connection.scalar(
                "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?", [.integer(SQLiteHistorySchema.transactionEntity)])
            ?? 0
        let stored = try connection.scalar("SELECT IFNULL(MAX(Z_PK), 0) FROM ATRANSACTION") ?? 0
        return max(counted, stored)
    }

    /// Whether transactions after `number` were deleted (a token that old has expired).
    func hasDeletedTransactions(after number: Int64, connection: SQLiteConnection) throws -> Bool {
        let oldest = try connection.scalar("SELECT MIN(Z_PK) FROM ATRANSACTION")
        let next = try oldest ?? (lastTransactionNumber(connection: connection) + 1)
        return number < next - 1
    }

    /// The transactions in `range`, oldest first, with their changes if `withChanges`.
    func transactions(
        in range: PersistentHistoryRange, withChanges: Bool, store: NSSQLiteStore, mapping: SQLiteModelMapping,
        connection: SQLiteConnection
    ) throws -> [NSPersistentHistoryTransaction] {
        var strings: [Int64: String] = [:]
        let readStrings = try connection.statement("SELECT Z_PK, ZNAME FROM ATRANSACTIONSTRING")
        while try readStrings.step() {
            if let name = readStrings.textIfNotNull(1) { strings[readStrings.int64(0)] = name }
        }
        readStrings.reset()
        // Each string from its key, else from its plain twin, when the file has the columns.
        let fields = ["AUTHOR", "BUNDLEID", "CONTEXTNAME", "PROCESSID"]
        var select = ["Z_PK", transactionColumns.contains("ZTIMESTAMP") ? "ZTIMESTAMP" : "NULL"]
        for field in fields {
            select.append(transactionColumns.contains("Z\(field)TS") ? "Z\(field)TS" : "NULL")
            select.append(transactionColumns.contains("Z\(field)") ? "Z\(field)" : "NULL")
        }
        let (condition, arguments) = range.condition
        let statement = try connection.statement(
            "SELECT \(select.joined(separator: ", ")) FROM ATRANSACTION WHERE \(condition) ORDER BY Z_PK")
        statement.bind(arguments)
        var transactions: [(number: Int64, values: [String?], timestamp: Date)] = []
        while try statement.step() {
            var values: [String?] = []
            for index in fields.indices {
                let keyColumn = Int32(2 + index * 2)
                let key: String? = statement.isNull(keyColumn) ? nil : strings[statement.int64(keyColumn)]
                values.append(key ?? statement.textIfNotNull(keyColumn + 1))
            }
            let timestamp = Date(timeIntervalSinceReferenceDate: statement.isNull(1) ? 0 : statement.double(1))
            transactions.append((statement.int64(0), values, timestamp))
        }
        statement.reset()
        guard let first = transactions.first, let last = transactions.last else { return [] }
        var changes: [Int64: [NSPersistentHistoryChange]] = [:]
        if withChanges {
            changes = try self.changes(
                from: first.number, through: last.number, store: store, mapping: mapping, connection: connection)
        }
        let storeID = store.identifier ?? ""
        return transactions.map { row in
            NSPersistentHistoryTransaction(
                transactionNumber: row.number, timestamp: row.timestamp, storeID: storeID, author: row.values[0],
                bundleID: row.values[1] ?? "", processID: row.values[3] ?? "", contextName: row.values[2],
                changes: withChanges ? changes[row.number] ?? [] : nil)
        }
    }

    /// The changes of the transactions numbered `first` to `last`, by transaction.
    private func changes(
        from first: Int64, through last: Int64, store: NSSQLiteStore, mapping: SQLiteModelMapping,
        connection: SQLiteConnection
    ) throws -> [Int64: [NSPersistentHistoryChange]] {
        let tombstones = (0..<tombstoneColumns).map { ", ZTOMBSTONE\($0)" }.joined()
        let statement = try connection.statement(
            "SELECT Z_PK, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID, ZCOLUMNS\(tombstones) FROM ACHANGE "
                + "WHERE ZTRANSACTIONID BETWEEN ? AND ? ORDER BY Z_PK")
        statement.bind([.integer(first), .integer(last)])
        var result: [Int64: [NSPersistentHistoryChange]] = [:]
        var references = SQLiteDestinationIDCache()
        while try statement.step() {
            guard let type = NSPersistentHistoryChangeType(rawValue: Int(statement.int64(1))),
                let entity = mapping.entity(number: statement.int64(2))
            else { continue }
            let objectID = references.rowID(entity: entity.entity, key: statement.int64(3), store: store)
            var updated: Set<NSPropertyDescription>?
            if type == .update, let bitmap = statement.blobIfNotNull(5) {
                updated = updatedProperties(bitmap, entity: entity.entity)
            }
            var tombstone: [AnyHashable: Any]?
            if type == .delete {
                let attributes = Self.preservedAttributes(of: entity.entity)
                var values: [AnyHashable: Any] = [:]
                for (index, attribute) in attributes.enumerated() where index < tombstoneColumns {
                    let value = SQLiteValueCoding.read(
                        statement, column: Int32(6 + index), type: attribute._attributeType, attribute: attribute)
                    if let value = value.publicValue { values[attribute._name] = value }
                }
                tombstone = attributes.isEmpty ? nil : values
            }
            result[statement.int64(4), default: []].append(
                NSPersistentHistoryChange(
                    changeID: statement.int64(0), changedObjectID: objectID, changeType: type, tombstone: tombstone,
                    updatedProperties: updated))
        }
        statement.reset()
        return result
    }

    // MARK: Deleting

    /// Deletes the transactions in `range` and their changes; returns how many changes went.
    func delete(_ range: PersistentHistoryRange, connection: SQLiteConnection) throws -> Int {
        let (condition, arguments) = range.condition
        try connection.statement(
            "DELETE FROM ACHANGE WHERE ZTRANSACTIONID IN (SELECT Z_PK FROM ATRANSACTION WHERE \(condition))"
        ).run(arguments)
        let changes = connection.changes
        try connection.statement("DELETE FROM ATRANSACTION WHERE \(condition)").run(arguments)
        return changes
    }
}

extension PersistentHistoryRange {
    /// The range as a condition on ATRANSACTION, with its arguments.
    var condition: (sql: String, arguments: [SQLiteValue]) {
        switch self {
        case .all: return ("1", [])
        case .none: return ("0", [])
        case .after(let number): return ("Z_PK > ?", [.integer(number)])
        case .through(let number): return ("Z_PK <= ?", [.integer(number)])
        case .afterDate(let date): return ("ZTIMESTAMP > ?", [.real(date.timeIntervalSinceReferenceDate)])
        case .beforeDate(let date): return ("ZTIMESTAMP < ?", [.real(date.timeIntervalSinceReferenceDate)])
        }
    }
}

/// A row named by entity number and primary key.
struct SQLiteHistoryKey: Hashable {
    let entity: Int64
    let key: Int64
}

extension SQLiteConnection {
    /// The first column of the first row of `sql`, as an integer; the statement is reset at once, so that it does not
    /// hold a read transaction open (which would keep the connection reading an old snapshot of the file).
    func scalar(_ sql: String, _ arguments: [SQLiteValue] = []) throws -> Int64? {
        let statement = try self.statement(sql)
        defer { statement.reset() }
        return try statement.scalarInteger(arguments)
    }
}

/// Identifiers from the model in SQL: double-quoted, with quotes inside doubled, so that a name can never become SQL.
enum SQLiteName {
    static func quoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
