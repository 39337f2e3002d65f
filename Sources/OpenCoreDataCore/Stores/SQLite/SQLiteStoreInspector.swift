import Foundation

/// What a SQLite store file holds, read without its model and without writing to it (for `coredata inspect`).
package struct SQLiteStoreSummary {
    /// One entity of `Z_PRIMARYKEY`.
    package struct Entity {
        package let number: Int64
        package let name: String
        package let superNumber: Int64
        /// The highest primary key handed out for the entity's hierarchy (kept on the root entity).
        package let maxKey: Int64
        /// The rows of exactly this entity; `nil` if its table is missing.
        package let rows: Int?
    }

    /// The metadata, as `metadataForPersistentStore(with:)` returns it.
    package let metadata: [String: Any]
    package let journalMode: String
    package let pageSize: Int
    package let pageCount: Int
    package let entities: [Entity]
}

/// Reads store files for tools.
package enum SQLiteStoreInspector {
    /// The summary of the SQLite store at `url`; throws the errors adding the store would (not a store, damaged…).
    package static func summary(of url: URL) throws -> SQLiteStoreSummary {
        try reading(url, action: "inspecting") { connection, url in
            let (metadata, _) = try SQLiteStoreMetadata.read(connection)
            let rows = try SQLiteStoreMetadata.entityRows(connection)
            let tables = try connection.tableNames()
            let byNumber = Dictionary(rows.map { ($0.number, $0) }, uniquingKeysWith: { first, _ in first })
            var counts: [String: [Int64: Int]] = [:]
            var entities: [SQLiteStoreSummary.Entity] = []
            for row in rows {
                var root = row
                var seen = Set<Int64>()
                while root.superNumber != 0, let parent = byNumber[root.superNumber],
                    seen.insert(parent.number).inserted
                {
                    root = parent
                }
                // Core Data's tables are Z<ENTITY>; its persistent-history entities' tables are A<ENTITY>.
                let table = ["Z", "A"].map { $0 + root.name.uppercased() }.first { tables.contains($0) }
                var count: Int?
                if let table {
                    if counts[table] == nil {
                        var byEntity: [Int64: Int] = [:]
                        // The table name comes from the file, which may be hostile: quoted, quotes doubled.
                        let quoted = table.replacingOccurrences(of: "\"", with: "\"\"")
                        let statement = try connection.prepare(
                            "SELECT Z_ENT, COUNT(*) FROM \"\(quoted)\" GROUP BY Z_ENT")
                        defer { statement.finalize() }
                        while try statement.step() { byEntity[statement.int64(0)] = Int(statement.int64(1)) }
                        counts[table] = byEntity
                    }
                    count = counts[table]?[row.number] ?? 0
                }
                entities.append(
                    SQLiteStoreSummary.Entity(
                        number: row.number, name: row.name, superNumber: row.superNumber, maxKey: row.max, rows: count))
            }
            func pragma(_ name: String) throws -> SQLiteValue {
                let statement = try connection.prepare("PRAGMA \(name)")
                defer { statement.finalize() }
                return try statement.step() ? statement.value(0) : .null
            }
            // The header tells the journal mode (an immutable connection reports none): 2 at byte 18 means WAL.
            let header = (try? FileHandle(forReadingFrom: url).read(upToCount: 20)) ?? Data()
            let journal = header.count == 20 && header[header.startIndex + 18] == 2 ? "wal" : "rollback journal"
            var pageSize = 0
            if case .integer(let value) = try pragma("page_size") { pageSize = Int(value) }
            var pageCount = 0
            if case .integer(let value) = try pragma("page_count") { pageCount = Int(value) }
            return SQLiteStoreSummary(
                metadata: metadata, journalMode: journal, pageSize: pageSize, pageCount: pageCount, entities: entities)
        }
    }

    /// Runs `body` on a read-only connection to the SQLite store at `url`, turning what fails into Core Data's
    /// errors for `action` ("inspecting"…). Nothing is written: a store that a crash left with a hot journal is
    /// refused until it is opened.
    private static func reading<T>(
        _ url: URL, action: String, _ body: (SQLiteConnection, URL) throws -> T
    ) throws -> T {
        let url = try NSSQLiteStore._fileURL(url)
        let attributes = try? FileManager.default.attributesOfItem(atPath: url.path)
        guard let size = (attributes?[.size] as? NSNumber)?.intValue else {
            throw coreDataError(
                CocoaError.Code.fileReadNoSuchFile.rawValue, "There is no SQLite store at \(url.path)",
                userInfo: [NSURLErrorKey: url])
        }
        try NSSQLiteStore._prepareToRead(url, size: size, timeout: 10, recover: false)
        let connection = try NSSQLiteStore._inspectionConnection(url)
        defer { connection.close() }
        do {
            return try body(connection, url)
        } catch {
            throw NSSQLiteStore._coreDataError(error, url: url, action: action)
        }
    }
}

extension SQLiteStoreInspector {
    /// What SQLite's `PRAGMA integrity_check` finds wrong in the store at `url`, one problem a line; empty when the
    /// file is sound. Reads the file without writing to it, as `summary(of:)` does.
    package static func integrityProblems(of url: URL) throws -> [String] {
        try reading(url, action: "checking") { connection, _ in
            let statement = try connection.prepare("PRAGMA integrity_check")
            defer { statement.finalize() }
            var lines: [String] = []
            while try statement.step() { lines.append(statement.text(0)) }
            return lines == ["ok"] ? [] : lines
        }
    }
}
