import Foundation
import OpenCoreData
import OpenCoreDataCore

/// One row to insert: its key, its entity and its values in the entity's slot order.
struct PostgreSQLNewRow {
    let key: Int64
    let entity: PostgreSQLEntity
    let values: StoredValues
}

/// One row a save changes: its key, the version the saving context read (`nil` to skip the check, for the
/// overwrite policy) and, for an update, the text of the changed columns.
struct PostgreSQLChangedRow {
    let objectID: NSManagedObjectID
    let key: Int64
    let expectedVersion: Int64?
    var texts: [String?] = []
}

/// Writing many rows: one statement per table (and shape of change) and chunk of a few thousand rows, each column's
/// values bound as one array and read back with `ROWS FROM (unnest($1::bigint[]), unnest($2::integer[]), …)`. The
/// statement's text depends only on the table and the columns, so it is prepared once per connection, and a save of
/// 100,000 objects is a few dozen round trips instead of 100,000. (`ROWS FROM` takes one array per function, so a
/// table of any width fits: a many-argument `unnest` stops at 100.)
///
/// Updates and deletions name the version each row was read at; the rows they do not touch (changed or deleted by
/// another writer) are the save's conflicts. Where a save changes several rows of a table, they are first locked in key
/// order (`SELECT … ORDER BY "Z_PK" FOR UPDATE`), as every save locks them, so that two saves cannot deadlock.
extension PostgreSQLStore {
    /// Rows per statement, and about how many bytes of text: a statement's parameters stay a few megabytes, whatever
    /// the rows hold (a chunk of rows with large binary values goes out in several statements).
    static let chunkSize = 5_000
    static let chunkBytes = 8 << 20

    func insertRows(
        _ rows: [PostgreSQLNewRow], table: PostgreSQLTable, connection: PostgreSQLConnection, schema: PostgreSQLSchema
    ) throws {
        guard !rows.isEmpty else { return }
        let names = ["Z_PK", "Z_ENT", "Z_OPT"] + table.columns.map(\.name)
        let types = ["bigint", "integer", "bigint"] + table.columns.map(\.type)
        let sql = """
            INSERT INTO \(schema.qualified(table.name)) (\(names.map(quoted).joined(separator: ", "))) \
            SELECT * FROM \(Self.rowsFrom(types))
            """
        try Self.inChunks(rows, columnCount: names.count) { row in
            var texts = [String?](repeating: nil, count: names.count)
            texts[0] = String(row.key)
            texts[1] = String(row.entity.number)
            texts[2] = "1"
            for slot in row.entity.slotColumns.indices where slot < row.values.count {
                for (column, text) in try columnTexts(row.values[slot], slot: slot, entity: row.entity) {
                    if let position = table.position[column] { texts[position + 3] = text }
                }
            }
            return texts
        } send: { columns in
            try connection.query(sql, columns.map(Self.arrayLiteral))
        }
    }

    /// Updates `rows` of `table` (locked already, `lockRows`), each setting `columns` (name, type) to its texts and
    /// raising its version; returns the new version of each row it changed, by key.
    func updateRows(
        _ rows: [PostgreSQLChangedRow], columns: [(name: String, type: String)], table: PostgreSQLTable,
        connection: PostgreSQLConnection, schema: PostgreSQLSchema
    ) throws -> [Int64: Int64] {
        let assignments =
            columns.enumerated().map { "\(quoted($0.element.name)) = v.c\($0.offset)" } + [
                "\"Z_OPT\" = t.\"Z_OPT\" + 1"
            ]
        let sql = """
            UPDATE \(schema.qualified(table.name)) t SET \(assignments.joined(separator: ", ")) \
            FROM \(Self.rowsFrom(["bigint", "bigint"] + columns.map(\.type))) \
            AS v(k, o\(columns.indices.map { ", c\($0)" }.joined())) \
            WHERE t."Z_PK" = v.k AND (v.o IS NULL OR t."Z_OPT" = v.o) RETURNING t."Z_PK", t."Z_OPT"
            """
        var versions: [Int64: Int64] = [:]
        try Self.inChunks(rows, columnCount: columns.count + 2) { row in
            [String(row.key), row.expectedVersion.map { String($0) }] + row.texts
        } send: { arrays in
            let result = try connection.query(sql, arrays.map(Self.arrayLiteral))
            for index in 0..<result.rowCount {
                if let key = result.int64(index, 0), let version = result.int64(index, 1) { versions[key] = version }
            }
        }
        return versions
    }

    /// Deletes `rows` of `table`; returns the keys of the rows it deleted.
    func deleteRows(
        _ rows: [PostgreSQLChangedRow], table: PostgreSQLTable, connection: PostgreSQLConnection,
        schema: PostgreSQLSchema
    ) throws -> Set<Int64> {
        let sql = """
            DELETE FROM \(schema.qualified(table.name)) t USING \(Self.rowsFrom(["bigint", "bigint"])) AS v(k, o) \
            WHERE t."Z_PK" = v.k AND (v.o IS NULL OR t."Z_OPT" = v.o) RETURNING t."Z_PK"
            """
        var deleted = Set<Int64>()
        for chunk in Self.chunks(of: rows) {
            try lockRows(chunk.map(\.key), table: table, connection: connection, schema: schema)
            let keys = Self.arrayLiteral(chunk.map { String($0.key) })
            let versions = Self.arrayLiteral(chunk.map { $0.expectedVersion.map { String($0) } })
            let result = try connection.query(sql, [keys, versions])
            for index in 0..<result.rowCount {
                if let key = result.int64(index, 0) { deleted.insert(key) }
            }
        }
        return deleted
    }

    /// Locks the rows `keys` of `table` in key order, when there are several.
    func lockRows(
        _ keys: [Int64], table: PostgreSQLTable, connection: PostgreSQLConnection, schema: PostgreSQLSchema
    ) throws {
        guard keys.count > 1 else { return }
        try connection.query(
            """
            SELECT "Z_PK" FROM \(schema.qualified(table.name)) WHERE "Z_PK" = ANY($1::bigint[]) \
            ORDER BY "Z_PK" FOR UPDATE
            """, [Self.keyList(keys)])
    }

    /// `ROWS FROM (unnest($1::type[]), …)` over one array parameter per type.
    static func rowsFrom(_ types: [String]) -> String {
        "ROWS FROM (" + types.enumerated().map { "unnest($\($0.offset + 1)::\($0.element)[])" }.joined(separator: ", ")
            + ")"
    }

    /// Sends the texts of `rows` (one per column; `texts` makes them) as column arrays, in statements of at most
    /// `chunkSize` rows and about `chunkBytes` of text.
    static func inChunks<Row>(
        _ rows: [Row], columnCount: Int, texts: (Row) throws -> [String?], send: ([[String?]]) throws -> Void
    ) throws {
        var columns = [[String?]](repeating: [], count: columnCount)
        var count = 0
        var bytes = 0
        for row in rows {
            for (index, text) in try texts(row).enumerated() {
                columns[index].append(text)
                bytes += text?.utf8.count ?? 0
            }
            count += 1
            if count == chunkSize || bytes >= chunkBytes {
                try send(columns)
                columns = [[String?]](repeating: [], count: columnCount)
                count = 0
                bytes = 0
            }
        }
        if count > 0 { try send(columns) }
    }

    /// `elements` in slices of at most `chunkSize`.
    static func chunks<Element>(of elements: [Element]) -> [ArraySlice<Element>] {
        stride(from: 0, to: elements.count, by: chunkSize).map {
            elements[$0..<min($0 + chunkSize, elements.count)]
        }
    }

    /// PostgreSQL's text form of an array: every element quoted (backslashes and quotes escaped), `NULL` bare.
    static func arrayLiteral(_ elements: [String?]) -> String {
        let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        bytes.reserveCapacity(elements.reduce(2) { $0 + ($1?.utf8.count ?? 4) + 3 })
        for (index, element) in elements.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            guard let element else {
                bytes += "NULL".utf8
                continue
            }
            bytes.append(quote)
            for byte in element.utf8 {
                // UTF-8 continuation bytes are never these two, so escaping byte by byte is escaping by character.
                if byte == quote || byte == backslash { bytes.append(backslash) }
                bytes.append(byte)
            }
            bytes.append(quote)
        }
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Takes `count` keys for the rows of root entity `root` from `Z_PRIMARYKEY`, and returns the last.
    func reserveKeys(_ count: Int, root: Int64, _ connection: PostgreSQLConnection, _ schema: PostgreSQLSchema) throws
        -> Int64
    {
        let result = try connection.query(
            """
            UPDATE \(schema.qualified("Z_PRIMARYKEY")) SET "Z_MAX" = "Z_MAX" + $1::bigint \
            WHERE "Z_ENT" = $2::integer RETURNING "Z_MAX"
            """, [String(count), String(root)])
        guard let last = result.int64(0, 0) else {
            throw Self.error(
                CocoaError.Code.fileReadCorruptFile.rawValue,
                "The store at \(redactedURL) is damaged: Z_PRIMARYKEY has no row for entity \(root)")
        }
        return last
    }
}
