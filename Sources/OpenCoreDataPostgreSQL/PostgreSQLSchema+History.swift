import Foundation
import OpenCoreDataCore

// Persistent history in the store's own schema, in the tables Apple's SQLite store keeps it in (see
// SQLiteHistory.swift), with PostgreSQL's types:
//
// - ATRANSACTION: one row per save or batch request that changed something. Z_PK is the transaction number, taken from
//   Z_PRIMARYKEY's TRANSACTION row inside the writer's transaction, whose row lock it holds until it commits: numbers
//   therefore follow the order of commits in every process (a sequence would hand 5 to one writer and 6 to another
//   that commits first, and a reader that had read up to 6 would never see 5). ZTIMESTAMP is the server's clock at
//   that moment, in seconds since 2001 (one clock for every host, so timestamps grow with the numbers); the author,
//   bundle ID, context name and process name are keys into ATRANSACTIONSTRING.
// - ACHANGE: one row per object a transaction inserted (ZCHANGETYPE 0), updated (1) or deleted (2), with the
//   entity's number and key; ZCOLUMNS (bytea) is the bitmap of the properties an update wrote
//   (`PersistentHistoryLayout`), ZTOMBSTONE<n> (text) the value of the n-th preserved attribute of a deleted object,
//   in libpq's text form of its own column.
// - ATRANSACTIONSTRING: every string once (a unique index on ZNAME).
//
// Z_PRIMARYKEY counts their keys under entity numbers 16001 (CHANGE), 16002 (TRANSACTION) and 16003
// (TRANSACTIONSTRING), as Apple's does.

/// Apple's names and numbers of the history tables, and their definitions in PostgreSQL.
enum PostgreSQLHistorySchema {
    static let changeEntity: Int64 = 16001
    static let transactionEntity: Int64 = 16002
    static let stringEntity: Int64 = 16003

    static let changeTable = "ACHANGE"
    static let transactionTable = "ATRANSACTION"
    static let stringTable = "ATRANSACTIONSTRING"

    /// The CREATE statements, in `schema`, with `tombstones` tombstone columns.
    static func createStatements(in schema: PostgreSQLSchema, tombstones: Int) -> [String] {
        let change = schema.qualified(changeTable)
        let transaction = schema.qualified(transactionTable)
        let string = schema.qualified(stringTable)
        let tombstoneColumns = (0..<tombstones).map { ", \(quoted("ZTOMBSTONE\($0)")) text" }.joined()
        return [
            """
            CREATE TABLE \(change) ("Z_PK" bigint PRIMARY KEY, "Z_ENT" integer, "Z_OPT" integer, \
            "ZCHANGETYPE" integer, "ZENTITY" integer, "ZENTITYPK" bigint, "ZTRANSACTIONID" bigint, \
            "ZCOLUMNS" bytea\(tombstoneColumns))
            """,
            """
            CREATE TABLE \(transaction) ("Z_PK" bigint PRIMARY KEY, "Z_ENT" integer, "Z_OPT" integer, \
            "ZAUTHORTS" bigint, "ZBUNDLEIDTS" bigint, "ZCONTEXTNAMETS" bigint, "ZPROCESSIDTS" bigint, \
            "ZTIMESTAMP" double precision, "ZAUTHOR" text, "ZBUNDLEID" text, "ZCONTEXTNAME" text, \
            "ZPROCESSID" text, "ZQUERYGEN" bytea)
            """,
            """
            CREATE TABLE \(string) ("Z_PK" bigint PRIMARY KEY, "Z_ENT" integer, "Z_OPT" integer, \
            "ZNAME" text COLLATE "C")
            """,
            "CREATE INDEX ON \(change) (\"ZTRANSACTIONID\")",
            "CREATE INDEX ON \(transaction) (\"ZAUTHORTS\")",
            "CREATE INDEX ON \(transaction) (\"ZBUNDLEIDTS\")",
            "CREATE INDEX ON \(transaction) (\"ZCONTEXTNAMETS\")",
            "CREATE INDEX ON \(transaction) (\"ZPROCESSIDTS\")",
            "CREATE INDEX ON \(transaction) (\"ZAUTHOR\" COLLATE \"C\")",
            "CREATE INDEX ON \(transaction) (\"ZTIMESTAMP\")",
            "CREATE UNIQUE INDEX ON \(string) (\"ZNAME\")",
        ]
    }

    /// How many tombstone columns `schema`'s entities need: the most preserved attributes of any entity.
    static func tombstonesNeeded(by schema: PostgreSQLSchema) -> Int {
        schema.entities.map { PersistentHistoryLayout.preservedAttributes(of: $0.entity).count }.max() ?? 0
    }

    /// Whether the schema has history tables.
    static func exists(in schema: PostgreSQLSchema, connection: PostgreSQLConnection) throws -> Bool {
        let found = try connection.query(
            "SELECT to_regclass($1), to_regclass($2)",
            [schema.qualified(transactionTable), schema.qualified(changeTable)])
        return found.text(0, 0) != nil && found.text(0, 1) != nil
    }

    /// Whether the schema's history holds a transaction (so that writing without recording would leave a hole).
    static func holdsTransactions(in schema: PostgreSQLSchema, connection: PostgreSQLConnection) throws -> Bool {
        let found = try connection.query("SELECT EXISTS (SELECT 1 FROM \(schema.qualified(transactionTable)))")
        return found.text(0, 0) == "t"
    }

    /// The tombstone columns ACHANGE has: ZTOMBSTONE0 onwards, as many as follow each other.
    static func tombstoneColumns(in schema: PostgreSQLSchema, connection: PostgreSQLConnection) throws -> Int {
        let found = try connection.query(
            """
            SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 \
            AND column_name LIKE 'ZTOMBSTONE%'
            """, [schema.schema, changeTable])
        let names = Set((0..<found.rowCount).compactMap { found.text($0, 0) })
        var count = 0
        while names.contains("ZTOMBSTONE\(count)") { count += 1 }
        return count
    }

    /// Creates the history tables, or adds the tombstone columns the model needs to existing ones, and the
    /// Z_PRIMARYKEY rows (inside the caller's transaction, which holds the schema's advisory lock).
    ///
    /// Other processes may be recording history meanwhile: what is there already is only read, never written again
    /// (an `ALTER TABLE` takes ACHANGE's strongest lock, and an insert into Z_PRIMARYKEY that meets the TRANSACTION
    /// row waits for the writer holding it, which may be waiting for that table: a deadlock).
    static func prepare(_ schema: PostgreSQLSchema, connection: PostgreSQLConnection, tombstones: Int) throws {
        if try exists(in: schema, connection: connection) {
            let present = try tombstoneColumns(in: schema, connection: connection)
            for index in present..<max(present, tombstones) {
                try connection.execute(
                    """
                    ALTER TABLE \(schema.qualified(changeTable)) ADD COLUMN IF NOT EXISTS \
                    \(quoted("ZTOMBSTONE\(index)")) text
                    """)
            }
        } else {
            for statement in createStatements(in: schema, tombstones: tombstones) {
                try connection.execute(statement)
            }
        }
        let counted = try connection.query(
            "SELECT \"Z_ENT\" FROM \(schema.qualified("Z_PRIMARYKEY")) WHERE \"Z_ENT\" > 16000")
        let present = Set((0..<counted.rowCount).compactMap { counted.int64($0, 0) })
        for (number, name, table) in [
            (changeEntity, "CHANGE", changeTable), (transactionEntity, "TRANSACTION", transactionTable),
            (stringEntity, "TRANSACTIONSTRING", stringTable),
        ] where !present.contains(number) {
            try connection.query(
                """
                INSERT INTO \(schema.qualified("Z_PRIMARYKEY")) ("Z_ENT", "Z_NAME", "Z_SUPER", "Z_MAX") \
                SELECT $1::integer, $2::text, 0, COALESCE(MAX("Z_PK"), 0) FROM \(schema.qualified(table)) \
                ON CONFLICT ("Z_ENT") DO NOTHING
                """, [String(number), name])
        }
    }
}
