import Foundation
import SystemSQLite

/// The thinnest wrapper over the SQLite C API that keeps the workloads readable: a connection and prepared
/// statements with positional binding. Nothing is cached or boxed; this is the "obvious fast code" baseline.
final class SQLiteConnection {
    let handle: OpaquePointer

    init(url: URL) throws {
        var handle: OpaquePointer?
        let code = sqlite3_open_v2(url.path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil)
        guard code == SQLITE_OK, let handle else {
            sqlite3_close(handle)
            throw SQLiteFailure(code: code, message: "cannot open \(url.path)")
        }
        self.handle = handle
    }

    func close() throws {
        let code = sqlite3_close(handle)
        guard code == SQLITE_OK else { throw SQLiteFailure(code: code, message: "close") }
    }

    func execute(_ sql: String) throws {
        let code = sqlite3_exec(handle, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw failure(code, sql) }
    }

    func prepare(_ sql: String) throws -> SQLiteStatement {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else { throw failure(code, sql) }
        return SQLiteStatement(statement, connection: self)
    }

    func failure(_ code: Int32, _ sql: String) -> SQLiteFailure {
        SQLiteFailure(code: code, message: "\(String(cString: sqlite3_errmsg(handle))) — \(sql)")
    }
}

struct SQLiteFailure: Error, CustomStringConvertible {
    let code: Int32
    let message: String
    var description: String { "SQLite error \(code): \(message)" }
}

/// `SQLITE_TRANSIENT`: SQLite copies bound text and blobs.
let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

final class SQLiteStatement {
    let handle: OpaquePointer
    unowned let connection: SQLiteConnection

    init(_ handle: OpaquePointer, connection: SQLiteConnection) {
        self.handle = handle
        self.connection = connection
    }

    deinit {
        sqlite3_finalize(handle)
    }

    @inline(__always)
    func bind(_ index: Int32, _ value: Int64) {
        sqlite3_bind_int64(handle, index, value)
    }

    @inline(__always)
    func bind(_ index: Int32, _ value: Int64?) {
        if let value { sqlite3_bind_int64(handle, index, value) } else { sqlite3_bind_null(handle, index) }
    }

    @inline(__always)
    func bind(_ index: Int32, _ value: Double) {
        sqlite3_bind_double(handle, index, value)
    }

    @inline(__always)
    func bind(_ index: Int32, _ value: String) {
        sqlite3_bind_text(handle, index, value, -1, sqliteTransient)
    }

    @inline(__always)
    func bind(_ index: Int32, _ value: Data) {
        value.withUnsafeBytes { bytes in
            _ = sqlite3_bind_blob(handle, index, bytes.baseAddress, Int32(bytes.count), sqliteTransient)
        }
    }

    /// Steps once: true while there is a row.
    @inline(__always)
    func step() throws -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw connection.failure(code, String(cString: sqlite3_sql(handle)))
        }
    }

    /// Runs a statement that returns no rows, and resets it.
    @inline(__always)
    func run() throws {
        _ = try step()
        sqlite3_reset(handle)
    }

    @inline(__always)
    func reset() {
        sqlite3_reset(handle)
    }

    @inline(__always)
    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    @inline(__always)
    func optionalInt64(_ column: Int32) -> Int64? {
        sqlite3_column_type(handle, column) == SQLITE_NULL ? nil : sqlite3_column_int64(handle, column)
    }

    @inline(__always)
    func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }

    @inline(__always)
    func string(_ column: Int32) -> String {
        guard let text = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    @inline(__always)
    func data(_ column: Int32) -> Data {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard let bytes = sqlite3_column_blob(handle, column) else { return Data() }
        return Data(bytes: bytes, count: count)
    }
}
