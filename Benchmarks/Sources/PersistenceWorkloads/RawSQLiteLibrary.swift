import Foundation
import SystemSQLite

/// The workloads written directly against the SQLite C API: prepared statements, one transaction per write, values
/// read column by column into plain structs.
public final class RawSQLiteLibrary: PersistenceLibrary {
    public static let name = "raw SQLite"

    /// The version of the SQLite library every workload uses.
    public static var sqliteVersion: String { String(cString: sqlite3_libversion()) }

    let connection: SQLiteConnection

    static let itemColumns = "serial, quantity, flags, price, ratio, name, category, note, payload, rank"

    public init(url: URL) throws {
        connection = try SQLiteConnection(url: url)
        try connection.execute("PRAGMA journal_mode = WAL")
        try connection.execute("PRAGMA synchronous = NORMAL")
        try connection.execute(
            """
            CREATE TABLE IF NOT EXISTS item (
                id INTEGER PRIMARY KEY, serial INTEGER NOT NULL, quantity INTEGER NOT NULL, flags INTEGER NOT NULL,
                price REAL NOT NULL, ratio REAL NOT NULL, name TEXT NOT NULL, category TEXT NOT NULL,
                note TEXT NOT NULL, payload BLOB NOT NULL, rank INTEGER);
            CREATE INDEX IF NOT EXISTS item_serial ON item (serial);
            CREATE TABLE IF NOT EXISTS parent (id INTEGER PRIMARY KEY, serial INTEGER NOT NULL, title TEXT NOT NULL);
            CREATE INDEX IF NOT EXISTS parent_serial ON parent (serial);
            CREATE TABLE IF NOT EXISTS child (
                id INTEGER PRIMARY KEY, parent INTEGER REFERENCES parent (id), serial INTEGER NOT NULL,
                value INTEGER NOT NULL, label TEXT NOT NULL);
            CREATE INDEX IF NOT EXISTS child_parent ON child (parent);
            """)
        try Self.registerContainsFunction(connection)
    }

    public func close() throws {
        try connection.close()
    }

    func transaction(_ body: () throws -> Void) throws {
        try connection.execute("BEGIN IMMEDIATE")
        do {
            try body()
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    // MARK: Writing

    public func insertItems(_ items: [ItemValues]) throws {
        let insert = try connection.prepare(
            "INSERT INTO item (\(Self.itemColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
        try transaction {
            for item in items {
                insert.bind(1, item.serial)
                insert.bind(2, item.quantity)
                insert.bind(3, item.flags)
                insert.bind(4, item.price)
                insert.bind(5, item.ratio)
                insert.bind(6, item.name)
                insert.bind(7, item.category)
                insert.bind(8, item.note)
                insert.bind(9, item.payload)
                insert.bind(10, item.rank)
                try insert.run()
            }
        }
    }

    public func insertParents(_ parents: Int, childrenEach children: Int) throws {
        let insertParent = try connection.prepare("INSERT INTO parent (serial, title) VALUES (?, ?)")
        let insertChild = try connection.prepare(
            "INSERT INTO child (parent, serial, value, label) VALUES (?, ?, ?, ?)")
        try transaction {
            for parent in 0..<parents {
                insertParent.bind(1, Int64(parent))
                insertParent.bind(2, "parent \(parent)")
                try insertParent.run()
                let parentID = sqlite3_last_insert_rowid(connection.handle)
                for child in 0..<children {
                    insertChild.bind(1, parentID)
                    insertChild.bind(2, Int64(parent * children + child))
                    insertChild.bind(3, Int64(child))
                    insertChild.bind(4, "child \(child)")
                    try insertChild.run()
                }
            }
        }
    }

    public func updateItems(serialsBelow serialLimit: Int64, quantity: Int64) throws {
        // As an application does: load the objects, change them, write them back.
        var items = try itemsWithIDs(serialsBelow: serialLimit)
        let update = try connection.prepare("UPDATE item SET quantity = ? WHERE id = ?")
        try transaction {
            for index in items.indices {
                items[index].values.quantity = quantity
                update.bind(1, items[index].values.quantity)
                update.bind(2, items[index].id)
                try update.run()
            }
        }
    }

    public func editItems(serialsBelow serialLimit: Int64, quantity: Int64) throws {
        var items = try itemsWithIDs(serialsBelow: serialLimit)
        let update = try connection.prepare("UPDATE item SET quantity = ? WHERE id = ?")
        for index in items.indices {
            items[index].values.quantity = quantity
            try transaction {
                update.bind(1, items[index].values.quantity)
                update.bind(2, items[index].id)
                try update.run()
            }
        }
    }

    func itemsWithIDs(serialsBelow serialLimit: Int64) throws -> [(id: Int64, values: ItemValues)] {
        let select = try connection.prepare("SELECT id, \(Self.itemColumns) FROM item WHERE serial < ?")
        var items: [(id: Int64, values: ItemValues)] = []
        select.bind(1, serialLimit)
        while try select.step() {
            items.append((select.int64(0), Self.item(select, from: 1)))
        }
        select.reset()
        return items
    }

    public func deleteParents(serialsBelow serialLimit: Int64) throws {
        let select = try connection.prepare("SELECT id FROM parent WHERE serial < ?")
        var ids: [Int64] = []
        select.bind(1, serialLimit)
        while try select.step() { ids.append(select.int64(0)) }
        select.reset()
        let deleteChildren = try connection.prepare("DELETE FROM child WHERE parent = ?")
        let deleteParent = try connection.prepare("DELETE FROM parent WHERE id = ?")
        try transaction {
            for id in ids {
                deleteChildren.bind(1, id)
                try deleteChildren.run()
                deleteParent.bind(1, id)
                try deleteParent.run()
            }
        }
    }

    // MARK: Reading

    @inline(__always)
    static func item(_ statement: SQLiteStatement, from first: Int32) -> ItemValues {
        ItemValues(
            serial: statement.int64(first),
            quantity: statement.int64(first + 1),
            flags: statement.int64(first + 2),
            price: statement.double(first + 3),
            ratio: statement.double(first + 4),
            name: statement.string(first + 5),
            category: statement.string(first + 6),
            note: statement.string(first + 7),
            payload: statement.data(first + 8),
            rank: statement.optionalInt64(first + 9)
        )
    }

    func readItems(_ sql: String, bind: (SQLiteStatement) -> Void = { _ in }) throws -> [ItemValues] {
        let statement = try connection.prepare(sql)
        bind(statement)
        var items: [ItemValues] = []
        while try statement.step() {
            items.append(Self.item(statement, from: 0))
        }
        return items
    }

    public func fetchAllItems() throws -> Checksum {
        var checksum = Checksum()
        for item in try readItems("SELECT \(Self.itemColumns) FROM item") {
            checksum.add(item)
        }
        return checksum
    }

    public func references(serials: [Int64]) throws -> [Int64] {
        let select = try connection.prepare("SELECT id FROM item WHERE serial = ?")
        return try serials.map { serial in
            select.bind(1, serial)
            defer { select.reset() }
            guard try select.step() else { throw WorkloadMismatch(description: "no item \(serial)") }
            return select.int64(0)
        }
    }

    public func lookUp(_ references: [Int64]) throws -> Checksum {
        try lookUp(references, sql: "SELECT \(Self.itemColumns) FROM item WHERE id = ?")
    }

    public func lookUp(serials: [Int64]) throws -> Checksum {
        try lookUp(serials, sql: "SELECT \(Self.itemColumns) FROM item WHERE serial = ?")
    }

    func lookUp(_ keys: [Int64], sql: String) throws -> Checksum {
        let select = try connection.prepare(sql)
        var checksum = Checksum()
        for key in keys {
            select.bind(1, key)
            if try select.step() {
                checksum.add(Self.item(select, from: 0))
            }
            select.reset()
        }
        return checksum
    }

    public func walkParents() throws -> Checksum {
        let parents = try connection.prepare("SELECT id, serial, title FROM parent")
        var ids: [Int64] = []
        while try parents.step() {
            ids.append(parents.int64(0))
        }
        let children = try connection.prepare("SELECT id, serial, value, label FROM child WHERE parent = ?")
        var checksum = Checksum()
        for id in ids {
            children.bind(1, id)
            while try children.step() {
                checksum.add(children.int64(2))
                checksum.object()
            }
            children.reset()
        }
        return checksum
    }

    public func searchNames(containing text: String) throws -> Checksum {
        var checksum = Checksum()
        let items = try readItems("SELECT \(Self.itemColumns) FROM item WHERE contains_cd(name, ?)") {
            $0.bind(1, text)
        }
        for item in items {
            checksum.add(item)
        }
        return checksum
    }

    public func loadAllItems() throws -> (checksum: Checksum, keepAlive: Any) {
        let items = try readItems("SELECT \(Self.itemColumns) FROM item")
        var checksum = Checksum()
        for item in items { checksum.add(item) }
        return (checksum, items)
    }

    /// `contains_cd(haystack, needle)`: Foundation's case- and diacritic-insensitive search, the obvious way to
    /// give SQL what `CONTAINS[cd]` means (SQLite's LIKE folds ASCII case only).
    static func registerContainsFunction(_ connection: SQLiteConnection) throws {
        let code = sqlite3_create_function_v2(
            connection.handle, "contains_cd", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil,
            { context, _, arguments in
                guard let arguments, let haystack = sqlite3_value_text(arguments[0]),
                    let needle = sqlite3_value_text(arguments[1])
                else {
                    sqlite3_result_int(context, 0)
                    return
                }
                let found = String(cString: haystack).range(
                    of: String(cString: needle), options: [.caseInsensitive, .diacriticInsensitive])
                sqlite3_result_int(context, found == nil ? 0 : 1)
            }, nil, nil, nil)
        guard code == SQLITE_OK else { throw connection.failure(code, "contains_cd") }
    }
}
