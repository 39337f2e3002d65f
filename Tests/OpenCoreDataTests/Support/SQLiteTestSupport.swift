import Foundation
import OpenCoreDataShim

#if canImport(CoreData)
import SQLite3
#else
import CSQLite
#endif

/// A fresh temporary directory for one test, deleted with the object.
final class SQLiteTestDirectory {
    let url: URL

    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "OpenCoreDataSQLiteTests-\(UUID().uuidString)", isDirectory: true)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    /// A store URL in the directory.
    func store(_ name: String = "Store.sqlite") -> URL {
        url.appendingPathComponent(name)
    }

    /// Copies a corpus store (with its `-wal` and `-shm`, if any) into the directory, writable, and returns the copy.
    func copyCorpusStore(_ relativePath: String) throws -> URL {
        let source = SQLiteCorpus.root.appendingPathComponent(relativePath)
        let destination = url.appendingPathComponent(source.lastPathComponent)
        for suffix in ["", "-wal", "-shm"] {
            let from = URL(fileURLWithPath: source.path + suffix)
            let to = URL(fileURLWithPath: destination.path + suffix)
            guard FileManager.default.fileExists(atPath: from.path) else { continue }
            try FileManager.default.copyItem(at: from, to: to)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: to.path)
        }
        return destination
    }
}

/// Where the corpus of stores written by Apple's Core Data lives.
enum SQLiteCorpus {
    static var root: URL {
        if let path = ProcessInfo.processInfo.environment["OPENCOREDATA_CORPUS"] {
            return URL(fileURLWithPath: path)
        }
        // Tests/OpenCoreDataTests/Support/ → the repository → its sibling `shared/corpus`.
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { url.deleteLastPathComponent() }
        let beside = url.deletingLastPathComponent().appendingPathComponent("shared/corpus")
        if FileManager.default.fileExists(atPath: beside.path) { return beside }
        return URL(fileURLWithPath: "/work/shared/corpus")
    }

    static var isAvailable: Bool { FileManager.default.fileExists(atPath: root.appendingPathComponent("stores").path) }
}

/// Test helpers for the SQLite store.
enum SQLiteStack {
    /// A coordinator for `model` with the SQLite store at `url` added.
    static func coordinator(
        _ model: NSManagedObjectModel, at url: URL, options: [AnyHashable: Any]? = nil
    ) throws -> NSPersistentStoreCoordinator {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: options)
        return coordinator
    }

    /// A private-queue context on `coordinator`, used with `performAndWait`.
    static func context(_ coordinator: NSPersistentStoreCoordinator) -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    /// Runs `body` and lets go of what it made that nothing else holds before returning: on Apple platforms the
    /// objects Core Data hands out may wait in an autorelease pool, so `body` runs in a pool of its own.
    static func releasingObjects<T>(_ body: () throws -> T) rethrows -> T {
        #if canImport(ObjectiveC)
        try autoreleasepool(invoking: body)
        #else
        try body()
        #endif
    }

    /// Removes every store from `coordinator`, closing the files.
    static func close(_ coordinator: NSPersistentStoreCoordinator) throws {
        for store in coordinator.persistentStores { try coordinator.remove(store) }
    }
}

/// Reads a SQLite file directly through the C API, to check what the store wrote against what `sqlite3` shows.
enum RawSQLite {
    enum Value: Equatable, CustomStringConvertible {
        case null
        case integer(Int64)
        case real(Double)
        case text(String)
        case blob([UInt8])

        var description: String {
            switch self {
            case .null: return "NULL"
            case .integer(let value): return "\(value)"
            case .real(let value): return "\(value)"
            case .text(let value): return "'\(value)'"
            case .blob(let value): return "x'\(value.map { String(format: "%02X", $0) }.joined())'"
            }
        }

        var integer: Int64? {
            if case .integer(let value) = self { return value }
            return nil
        }

        var text: String? {
            if case .text(let value) = self { return value }
            return nil
        }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The rows of `sql` in the database at `url`, opened read-only.
    static func query(_ url: URL, _ sql: String) throws -> [[Value]] {
        var handle: OpaquePointer?
        guard sqlite3_open_v2(url.path, &handle, SQLITE_OPEN_READONLY, nil) == SQLITE_OK, let handle else {
            throw Failure(description: "cannot open \(url.path)")
        }
        defer { sqlite3_close_v2(handle) }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw Failure(description: String(cString: sqlite3_errmsg(handle)))
        }
        defer { sqlite3_finalize(statement) }
        var rows: [[Value]] = []
        while true {
            let code = sqlite3_step(statement)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else { throw Failure(description: String(cString: sqlite3_errmsg(handle))) }
            var row: [Value] = []
            for column in 0..<sqlite3_column_count(statement) {
                switch sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER: row.append(.integer(sqlite3_column_int64(statement, column)))
                case SQLITE_FLOAT: row.append(.real(sqlite3_column_double(statement, column)))
                case SQLITE_TEXT: row.append(.text(String(cString: sqlite3_column_text(statement, column))))
                case SQLITE_BLOB:
                    let count = Int(sqlite3_column_bytes(statement, column))
                    let bytes = sqlite3_column_blob(statement, column)
                    row.append(.blob(bytes.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []))
                default: row.append(.null)
                }
            }
            rows.append(row)
        }
        return rows
    }

    /// The rows of `table` by primary key, each as its columns by name.
    static func rowsByKey(_ url: URL, table: String) throws -> [Int64: [String: Value]] {
        let names = try query(url, "PRAGMA table_info(\(table))").compactMap { $0[1].text }
        var rows: [Int64: [String: Value]] = [:]
        for row in try query(url, "SELECT \(names.joined(separator: ", ")) FROM \(table)") {
            var byName: [String: Value] = [:]
            for (name, value) in zip(names, row) { byName[name] = value }
            if let key = byName["Z_PK"]?.integer { rows[key] = byName }
        }
        return rows
    }

    /// Checkpoints the write-ahead log of the database at `url` with `PRAGMA wal_checkpoint(<mode>)` through a
    /// connection of its own, which waits for no one, and returns SQLite's three numbers: `busy` is 1 when a reader
    /// kept the checkpoint from completing, then the frames in the log and the frames checkpointed.
    static func checkpoint(_ url: URL, mode: String = "TRUNCATE") throws -> (busy: Int64, log: Int64, done: Int64) {
        var handle: OpaquePointer?
        guard sqlite3_open_v2(url.path, &handle, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let handle else {
            throw Failure(description: "cannot open \(url.path)")
        }
        defer { sqlite3_close_v2(handle) }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, "PRAGMA wal_checkpoint(\(mode))", -1, &statement, nil) == SQLITE_OK,
            let statement
        else {
            throw Failure(description: String(cString: sqlite3_errmsg(handle)))
        }
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW else {
            throw Failure(description: String(cString: sqlite3_errmsg(handle)))
        }
        return (
            sqlite3_column_int64(statement, 0), sqlite3_column_int64(statement, 1), sqlite3_column_int64(statement, 2)
        )
    }

    /// Runs SQL that changes the database (to simulate another program, or damage).
    static func execute(_ url: URL, _ sql: String) throws {
        var handle: OpaquePointer?
        guard sqlite3_open_v2(url.path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK,
            let handle
        else {
            throw Failure(description: "cannot open \(url.path)")
        }
        defer { sqlite3_close_v2(handle) }
        guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else {
            throw Failure(description: String(cString: sqlite3_errmsg(handle)))
        }
    }

    /// Runs the prepared statement `sql` once per row of `rows` (bound by position), in one transaction: what a
    /// program using the C API directly does to insert many rows.
    static func run(_ url: URL, _ sql: String, rows: [[Value]]) throws {
        var handle: OpaquePointer?
        guard sqlite3_open_v2(url.path, &handle, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let handle else {
            throw Failure(description: "cannot open \(url.path)")
        }
        defer { sqlite3_close_v2(handle) }
        var statement: OpaquePointer?
        guard sqlite3_exec(handle, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK,
            sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement
        else {
            throw Failure(description: String(cString: sqlite3_errmsg(handle)))
        }
        defer { sqlite3_finalize(statement) }
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        for row in rows {
            sqlite3_reset(statement)
            for (index, value) in zip(Int32(1)..., row) {
                switch value {
                case .null: sqlite3_bind_null(statement, index)
                case .integer(let number): sqlite3_bind_int64(statement, index, number)
                case .real(let number): sqlite3_bind_double(statement, index, number)
                case .text(let text): sqlite3_bind_text(statement, index, text, -1, transient)
                case .blob(let bytes): sqlite3_bind_blob(statement, index, bytes, Int32(bytes.count), transient)
                }
            }
            guard sqlite3_step(statement) == SQLITE_DONE else {
                throw Failure(description: String(cString: sqlite3_errmsg(handle)))
            }
        }
        guard sqlite3_exec(handle, "COMMIT", nil, nil, nil) == SQLITE_OK else {
            throw Failure(description: String(cString: sqlite3_errmsg(handle)))
        }
    }

    /// The schema's CREATE statements (tables, indexes, triggers), normalised: one space between tokens, no space
    /// inside parentheses, no trailing semicolon.
    static func schema(_ url: URL, excluding: Set<String> = []) throws -> Set<String> {
        let rows = try query(url, "SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL")
        return Set(
            rows.compactMap { row -> String? in
                guard let name = row[0].text, !excluding.contains(name), let sql = row[1].text else { return nil }
                return normalize(sql)
            })
    }

    static func normalize(_ sql: String) -> String {
        var text = sql.trimmingCharacters(in: .whitespacesAndNewlines)
        if text.hasSuffix(";") { text.removeLast() }
        text = text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" }).joined(separator: " ")
        text = text.replacingOccurrences(of: "( ", with: "(").replacingOccurrences(of: " )", with: ")")
        return text
    }

    /// The CREATE statements listed in a corpus `.schema.txt` file, normalised like `schema(_:)`.
    static func corpusSchema(_ url: URL, excluding: Set<String> = []) throws -> Set<String> {
        let text = try String(contentsOf: url, encoding: .utf8)
        var statements = Set<String>()
        for line in text.split(separator: "\n") where line.hasPrefix("CREATE ") {
            let statement = normalize(String(line))
            let words = statement.split(separator: " ")
            // CREATE TABLE name / CREATE INDEX name / CREATE UNIQUE INDEX name / CREATE TRIGGER name
            let name = words.count > 3 && words[1] == "UNIQUE" ? String(words[3]) : String(words[2])
            if !excluding.contains(name) { statements.insert(statement) }
        }
        return statements
    }
}
