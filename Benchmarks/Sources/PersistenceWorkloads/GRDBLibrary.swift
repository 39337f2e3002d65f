import Foundation
import GRDB

/// What both GRDB variants share: a `DatabaseQueue` in WAL mode with `synchronous=NORMAL`, GRDB's schema
/// (foreign keys with `ON DELETE CASCADE`, which GRDB enforces by default) and the search function.
public class GRDBDatabase {
    let queue: DatabaseQueue

    static let containsCD = DatabaseFunction("contains_cd", argumentCount: 2, pure: true) { values in
        guard let haystack = String.fromDatabaseValue(values[0]), let needle = String.fromDatabaseValue(values[1])
        else { return false }
        return haystack.range(of: needle, options: [.caseInsensitive, .diacriticInsensitive]) != nil
    }

    public required init(url: URL) throws {
        var configuration = Configuration()
        configuration.journalMode = .wal
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            db.add(function: GRDBDatabase.containsCD)
        }
        queue = try DatabaseQueue(path: url.path, configuration: configuration)
        try queue.write { db in
            try db.create(table: "item", options: .ifNotExists) { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("serial", .integer).notNull().indexed()
                table.column("quantity", .integer).notNull()
                table.column("flags", .integer).notNull()
                table.column("price", .double).notNull()
                table.column("ratio", .double).notNull()
                table.column("name", .text).notNull()
                table.column("category", .text).notNull()
                table.column("note", .text).notNull()
                table.column("payload", .blob).notNull()
                table.column("rank", .integer)
            }
            try db.create(table: "parent", options: .ifNotExists) { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("serial", .integer).notNull().indexed()
                table.column("title", .text).notNull()
            }
            try db.create(table: "child", options: .ifNotExists) { table in
                table.autoIncrementedPrimaryKey("id")
                table.belongsTo("parent", onDelete: .cascade)
                table.column("serial", .integer).notNull()
                table.column("value", .integer).notNull()
                table.column("label", .text).notNull()
            }
        }
    }

    public func close() throws {
        try queue.close()
    }
}

/// The workloads written with GRDB's low-level API: SQL, cached statements and `Row` cursors.
public final class GRDBStatementsLibrary: GRDBDatabase, PersistenceLibrary {
    public static let name = "GRDB statements"

    static let itemColumns = RawSQLiteLibrary.itemColumns

    @inline(__always)
    static func item(_ row: Row, from first: Int) -> ItemValues {
        ItemValues(
            serial: row[first], quantity: row[first + 1], flags: row[first + 2], price: row[first + 3],
            ratio: row[first + 4], name: row[first + 5], category: row[first + 6], note: row[first + 7],
            payload: row[first + 8], rank: row[first + 9])
    }

    public func insertItems(_ items: [ItemValues]) throws {
        try queue.write { db in
            let insert = try db.cachedStatement(
                sql: "INSERT INTO item (\(Self.itemColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
            for item in items {
                try insert.execute(arguments: [
                    item.serial, item.quantity, item.flags, item.price, item.ratio, item.name, item.category,
                    item.note, item.payload, item.rank,
                ])
            }
        }
    }

    public func insertParents(_ parents: Int, childrenEach children: Int) throws {
        try queue.write { db in
            let insertParent = try db.cachedStatement(sql: "INSERT INTO parent (serial, title) VALUES (?, ?)")
            let insertChild = try db.cachedStatement(
                sql: "INSERT INTO child (parentId, serial, value, label) VALUES (?, ?, ?, ?)")
            for parent in 0..<parents {
                try insertParent.execute(arguments: [Int64(parent), "parent \(parent)"])
                let parentID = db.lastInsertedRowID
                for child in 0..<children {
                    try insertChild.execute(arguments: [
                        parentID, Int64(parent * children + child), Int64(child), "child \(child)",
                    ])
                }
            }
        }
    }

    public func updateItems(serialsBelow serialLimit: Int64, quantity: Int64) throws {
        try queue.write { db in
            var items = try itemsWithIDs(db, serialsBelow: serialLimit)
            let update = try db.cachedStatement(sql: "UPDATE item SET quantity = ? WHERE id = ?")
            for index in items.indices {
                items[index].values.quantity = quantity
                try update.execute(arguments: [items[index].values.quantity, items[index].id])
            }
        }
    }

    public func editItems(serialsBelow serialLimit: Int64, quantity: Int64) throws {
        var items = try queue.read { db in try itemsWithIDs(db, serialsBelow: serialLimit) }
        for index in items.indices {
            items[index].values.quantity = quantity
            try queue.write { db in
                try db.cachedStatement(sql: "UPDATE item SET quantity = ? WHERE id = ?")
                    .execute(arguments: [items[index].values.quantity, items[index].id])
            }
        }
    }

    func itemsWithIDs(_ db: Database, serialsBelow serialLimit: Int64) throws -> [(id: Int64, values: ItemValues)] {
        var items: [(id: Int64, values: ItemValues)] = []
        let rows = try Row.fetchCursor(
            db, sql: "SELECT id, \(Self.itemColumns) FROM item WHERE serial < ?", arguments: [serialLimit])
        while let row = try rows.next() {
            items.append((row[0], Self.item(row, from: 1)))
        }
        return items
    }

    public func deleteParents(serialsBelow serialLimit: Int64) throws {
        try queue.write { db in
            let ids = try Int64.fetchAll(db, sql: "SELECT id FROM parent WHERE serial < ?", arguments: [serialLimit])
            let deleteChildren = try db.cachedStatement(sql: "DELETE FROM child WHERE parentId = ?")
            let deleteParent = try db.cachedStatement(sql: "DELETE FROM parent WHERE id = ?")
            for id in ids {
                try deleteChildren.execute(arguments: [id])
                try deleteParent.execute(arguments: [id])
            }
        }
    }

    func readItems(_ db: Database, _ sql: String, arguments: StatementArguments = []) throws -> [ItemValues] {
        var items: [ItemValues] = []
        let rows = try Row.fetchCursor(db, sql: sql, arguments: arguments)
        while let row = try rows.next() {
            items.append(Self.item(row, from: 0))
        }
        return items
    }

    public func fetchAllItems() throws -> Checksum {
        try queue.read { db in
            var checksum = Checksum()
            for item in try readItems(db, "SELECT \(Self.itemColumns) FROM item") { checksum.add(item) }
            return checksum
        }
    }

    public func references(serials: [Int64]) throws -> [Int64] {
        try queue.read { db in
            try serials.map { serial in
                guard let id = try Int64.fetchOne(db, sql: "SELECT id FROM item WHERE serial = ?", arguments: [serial])
                else { throw WorkloadMismatch(description: "no item \(serial)") }
                return id
            }
        }
    }

    public func lookUp(_ references: [Int64]) throws -> Checksum {
        try lookUp(references, sql: "SELECT \(Self.itemColumns) FROM item WHERE id = ?")
    }

    public func lookUp(serials: [Int64]) throws -> Checksum {
        try lookUp(serials, sql: "SELECT \(Self.itemColumns) FROM item WHERE serial = ?")
    }

    func lookUp(_ keys: [Int64], sql: String) throws -> Checksum {
        try queue.read { db in
            let select = try db.cachedStatement(sql: sql)
            var checksum = Checksum()
            for key in keys {
                if let row = try Row.fetchOne(select, arguments: [key]) {
                    checksum.add(Self.item(row, from: 0))
                }
            }
            return checksum
        }
    }

    public func walkParents() throws -> Checksum {
        try queue.read { db in
            let ids = try Int64.fetchAll(db, sql: "SELECT id FROM parent")
            let children = try db.cachedStatement(sql: "SELECT id, serial, value, label FROM child WHERE parentId = ?")
            var checksum = Checksum()
            for id in ids {
                let rows = try Row.fetchCursor(children, arguments: [id])
                while let row = try rows.next() {
                    checksum.add(row[2] as Int64)
                    checksum.object()
                }
            }
            return checksum
        }
    }

    public func searchNames(containing text: String) throws -> Checksum {
        try queue.read { db in
            var checksum = Checksum()
            let sql = "SELECT \(Self.itemColumns) FROM item WHERE contains_cd(name, ?)"
            for item in try readItems(db, sql, arguments: [text]) { checksum.add(item) }
            return checksum
        }
    }

    public func loadAllItems() throws -> (checksum: Checksum, keepAlive: Any) {
        try queue.read { db in
            let items = try readItems(db, "SELECT \(Self.itemColumns) FROM item")
            var checksum = Checksum()
            for item in items { checksum.add(item) }
            return (checksum, items)
        }
    }
}

/// The workloads written with GRDB's records: `Codable` structs and the query interface.
public final class GRDBRecordsLibrary: GRDBDatabase, PersistenceLibrary {
    public static let name = "GRDB records"

    struct Item: Codable, FetchableRecord, MutablePersistableRecord {
        static let databaseTableName = "item"
        var id: Int64?
        var serial: Int64
        var quantity: Int64
        var flags: Int64
        var price: Double
        var ratio: Double
        var name: String
        var category: String
        var note: String
        var payload: Data
        var rank: Int64?

        mutating func didInsert(_ inserted: InsertionSuccess) {
            id = inserted.rowID
        }

        func add(to checksum: inout Checksum) {
            checksum.add(serial)
            checksum.add(quantity)
            checksum.add(flags)
            checksum.add(price)
            checksum.add(ratio)
            checksum.add(name)
            checksum.add(category)
            checksum.add(note)
            checksum.add(payload)
            checksum.add(rank)
            checksum.object()
        }
    }

    struct Parent: Codable, FetchableRecord, MutablePersistableRecord {
        static let databaseTableName = "parent"
        static let children = hasMany(Child.self)
        var id: Int64?
        var serial: Int64
        var title: String

        mutating func didInsert(_ inserted: InsertionSuccess) {
            id = inserted.rowID
        }
    }

    struct Child: Codable, FetchableRecord, MutablePersistableRecord {
        static let databaseTableName = "child"
        var id: Int64?
        var parentId: Int64
        var serial: Int64
        var value: Int64
        var label: String

        mutating func didInsert(_ inserted: InsertionSuccess) {
            id = inserted.rowID
        }
    }

    public func insertItems(_ items: [ItemValues]) throws {
        try queue.write { db in
            for values in items {
                var item = Item(
                    id: nil, serial: values.serial, quantity: values.quantity, flags: values.flags,
                    price: values.price, ratio: values.ratio, name: values.name, category: values.category,
                    note: values.note, payload: values.payload, rank: values.rank)
                try item.insert(db)
            }
        }
    }

    public func insertParents(_ parents: Int, childrenEach children: Int) throws {
        try queue.write { db in
            for serial in 0..<parents {
                var parent = Parent(id: nil, serial: Int64(serial), title: "parent \(serial)")
                try parent.insert(db)
                for index in 0..<children {
                    var child = Child(
                        id: nil, parentId: parent.id!, serial: Int64(serial * children + index), value: Int64(index),
                        label: "child \(index)")
                    try child.insert(db)
                }
            }
        }
    }

    public func updateItems(serialsBelow serialLimit: Int64, quantity: Int64) throws {
        try queue.write { db in
            let items = try Item.filter(Column("serial") < serialLimit).fetchAll(db)
            for var item in items {
                item.quantity = quantity
                try item.update(db)
            }
        }
    }

    public func editItems(serialsBelow serialLimit: Int64, quantity: Int64) throws {
        let items = try queue.read { db in try Item.filter(Column("serial") < serialLimit).fetchAll(db) }
        for var item in items {
            item.quantity = quantity
            try queue.write { db in try item.update(db) }
        }
    }

    public func deleteParents(serialsBelow serialLimit: Int64) throws {
        try queue.write { db in
            for parent in try Parent.filter(Column("serial") < serialLimit).fetchAll(db) {
                try parent.delete(db)
            }
        }
    }

    public func fetchAllItems() throws -> Checksum {
        try queue.read { db in
            var checksum = Checksum()
            for item in try Item.fetchAll(db) { item.add(to: &checksum) }
            return checksum
        }
    }

    public func references(serials: [Int64]) throws -> [Int64] {
        try queue.read { db in
            try serials.map { serial in
                guard let id = try Item.filter(Column("serial") == serial).fetchOne(db)?.id else {
                    throw WorkloadMismatch(description: "no item \(serial)")
                }
                return id
            }
        }
    }

    public func lookUp(_ references: [Int64]) throws -> Checksum {
        try queue.read { db in
            var checksum = Checksum()
            for id in references {
                try Item.fetchOne(db, key: id)?.add(to: &checksum)
            }
            return checksum
        }
    }

    public func lookUp(serials: [Int64]) throws -> Checksum {
        try queue.read { db in
            var checksum = Checksum()
            for serial in serials {
                try Item.filter(Column("serial") == serial).fetchOne(db)?.add(to: &checksum)
            }
            return checksum
        }
    }

    public func walkParents() throws -> Checksum {
        try queue.read { db in
            var checksum = Checksum()
            for parent in try Parent.fetchAll(db) {
                for child in try parent.request(for: Parent.children).fetchAll(db) {
                    checksum.add(child.value)
                    checksum.object()
                }
            }
            return checksum
        }
    }

    public func searchNames(containing text: String) throws -> Checksum {
        try queue.read { db in
            var checksum = Checksum()
            for item in try Item.filter(GRDBDatabase.containsCD(Column("name"), text)).fetchAll(db) {
                item.add(to: &checksum)
            }
            return checksum
        }
    }

    public func loadAllItems() throws -> (checksum: Checksum, keepAlive: Any) {
        try queue.read { db in
            let items = try Item.fetchAll(db)
            var checksum = Checksum()
            for item in items { item.add(to: &checksum) }
            return (checksum, items)
        }
    }
}
