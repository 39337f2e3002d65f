import Foundation
import OpenCoreData
import OpenCoreDataCore

/// One row to insert: its key, its entity and its values in the entity's slot order.
struct PostgreSQLNewRow {
    let key: Int64
    let entity: PostgreSQLEntity
    let values: StoredValues
}

/// Inserting many rows: one `INSERT … SELECT * FROM ROWS FROM (unnest($1::bigint[]), unnest($2::integer[]), …)` per
/// table and chunk, each column's values bound as one array. The statement's text depends only on the table, so it is
/// prepared once per connection, and a save of 100,000 objects is a few dozen round trips instead of 100,000.
/// (`ROWS FROM` takes one array per function, so a table of any width fits: a many-argument `unnest` stops at 100.)
extension PostgreSQLStore {
    /// Rows per statement: bounded so that one statement's parameters stay a few megabytes.
    static let insertChunk = 5_000

    func insertRows(
        _ rows: [PostgreSQLNewRow], table: PostgreSQLTable, connection: PostgreSQLConnection, schema: PostgreSQLSchema
    ) throws {
        guard !rows.isEmpty else { return }
        let names = ["Z_PK", "Z_ENT", "Z_OPT"] + table.columns.map(\.name)
        let types = ["bigint", "integer", "bigint"] + table.columns.map(\.type)
        let sql = """
            INSERT INTO \(schema.qualified(table.name)) (\(names.map(quoted).joined(separator: ", "))) \
            SELECT * FROM ROWS FROM (\(types.enumerated().map { "unnest($\($0.offset + 1)::\($0.element)[])" }
                .joined(separator: ", ")))
            """
        var start = rows.startIndex
        while start < rows.endIndex {
            let end = min(start + Self.insertChunk, rows.endIndex)
            var columns = [[String?]](repeating: [], count: names.count)
            for index in columns.indices { columns[index].reserveCapacity(end - start) }
            for row in rows[start..<end] {
                var texts = [String?](repeating: nil, count: names.count)
                texts[0] = String(row.key)
                texts[1] = String(row.entity.number)
                texts[2] = "1"
                for slot in row.entity.slotColumns.indices where slot < row.values.count {
                    for (column, text) in try columnTexts(row.values[slot], slot: slot, entity: row.entity) {
                        if let position = table.position[column] { texts[position + 3] = text }
                    }
                }
                for (index, text) in texts.enumerated() { columns[index].append(text) }
            }
            try connection.query(sql, columns.map(Self.arrayLiteral))
            start = end
        }
    }

    /// PostgreSQL's text form of an array: every element quoted (backslashes and quotes escaped), `NULL` bare.
    static func arrayLiteral(_ elements: [String?]) -> String {
        var literal = "{"
        for (index, element) in elements.enumerated() {
            if index > 0 { literal.append(",") }
            guard let element else {
                literal.append("NULL")
                continue
            }
            literal.append("\"")
            for character in element.unicodeScalars {
                if character == "\\" || character == "\"" { literal.append("\\") }
                literal.unicodeScalars.append(character)
            }
            literal.append("\"")
        }
        literal.append("}")
        return literal
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
