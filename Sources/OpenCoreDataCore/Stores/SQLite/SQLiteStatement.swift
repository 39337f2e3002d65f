import CSQLite
import Foundation

/// A value as SQLite stores it: what statements bind and what generated SQL carries as arguments.
enum SQLiteValue: Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)
}

/// Tells SQLite to copy bound text and blobs before the call returns.
let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// A prepared statement. Statements are owned by their connection, which caches them by SQL text; a statement is
/// reset (and its bindings cleared) before each use.
final class SQLiteStatement {
    let handle: OpaquePointer
    let sql: String
    unowned let connection: SQLiteConnection

    /// Text and blobs up to this size are copied into the statement's own buffer for their parameter and bound
    /// without SQLite's copy. Bound as `SQLITE_TRANSIENT`, every value costs SQLite an allocation when bound and a
    /// release when bound again: for a row of short strings, more than writing the row. Larger values are rare, and
    /// keeping their size allocated for as long as the statement is cached would cost more than it saves.
    static let bufferedValueLimit = 4_096

    /// One buffer per parameter (index 0 for parameter 1), made on the first buffered binding. A parameter's buffer
    /// only changes when that parameter is bound again, and is freed after the statement is finalized: exactly how
    /// long SQLite requires the bytes of a value bound with `SQLITE_STATIC` to stay put.
    private var buffers: UnsafeMutablePointer<UnsafeMutableRawBufferPointer>?
    private var bufferCount = 0

    /// What `com.apple.CoreData.SQLDebug` logs of the current execution; `nil` while the switch is off, so that
    /// stepping and binding cost one comparison more (see `SQLiteStatement+Tracing.swift`).
    var trace: SQLiteStatementTrace?

    init(handle: OpaquePointer, sql: String, connection: SQLiteConnection) {
        self.handle = handle
        self.sql = sql
        self.connection = connection
        if _slowPath(SQLiteStatementTrace.isOn) { beginTrace() }
    }

    /// Releases SQLite's statement. The object must not be used afterwards.
    func finalize() {
        if _slowPath(trace != nil) { endTrace() }
        sqlite3_finalize(handle)
        releaseBuffers()
    }

    deinit {
        // Statements are finalized by their owners before they are let go; a buffer is never freed under a live
        // statement, which could still read it.
        releaseBuffers()
    }

    private func releaseBuffers() {
        guard let buffers else { return }
        for index in 0..<bufferCount { buffers[index].deallocate() }
        buffers.deinitialize(count: bufferCount)
        buffers.deallocate()
        self.buffers = nil
        bufferCount = 0
    }

    /// A copy of `bytes` in the buffer of parameter `index`, valid until that parameter is bound again; `nil` if the
    /// value is too large to keep, or the statement has no such parameter.
    @inline(__always)
    private func buffered(_ bytes: UnsafeRawBufferPointer, for index: Int32) -> UnsafeRawPointer? {
        guard bytes.count > 0, bytes.count <= Self.bufferedValueLimit, let base = bytes.baseAddress else { return nil }
        if buffers == nil {
            let count = Int(sqlite3_bind_parameter_count(handle))
            guard count > 0 else { return nil }
            let made = UnsafeMutablePointer<UnsafeMutableRawBufferPointer>.allocate(capacity: count)
            made.initialize(repeating: UnsafeMutableRawBufferPointer(start: nil, count: 0), count: count)
            buffers = made
            bufferCount = count
        }
        let slot = Int(index) - 1
        guard let buffers, slot >= 0, slot < bufferCount else { return nil }
        var buffer = buffers[slot]
        if buffer.count < bytes.count {
            // The old buffer may still be bound to this parameter, which is about to be bound to the new one; SQLite
            // does not read a static value when it lets go of it.
            buffer.deallocate()
            buffer = .allocate(byteCount: max(bytes.count, 32), alignment: 8)
            buffers[slot] = buffer
        }
        buffer.baseAddress!.copyMemory(from: base, byteCount: bytes.count)
        return UnsafeRawPointer(buffer.baseAddress!)
    }

    /// Makes the statement ready for a new execution.
    @inline(__always)
    func reset() {
        if _slowPath(trace != nil) { endTrace() }
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        if _slowPath(SQLiteStatementTrace.isOn) { beginTrace() }
    }

    /// Makes the statement ready to run again with the same parameters bound, for loops that bind every parameter
    /// anew: clearing the bindings first costs more than binding a row's values.
    @inline(__always)
    func rewind() {
        if _slowPath(trace != nil) { endTrace() }
        sqlite3_reset(handle)
        if _slowPath(SQLiteStatementTrace.isOn) { beginTrace() }
    }

    // MARK: Binding (indexes start at 1, as in SQLite)

    func bind(_ values: [SQLiteValue]) {
        for (offset, value) in values.enumerated() {
            bind(value, at: Int32(offset + 1))
        }
    }

    func bind(_ value: SQLiteValue, at index: Int32) {
        switch value {
        case .null: bindNull(at: index)
        case .integer(let number): bind(number, at: index)
        case .real(let number): bind(number, at: index)
        case .text(let string): bind(string, at: index)
        case .blob(let data): bind(data, at: index)
        }
    }

    @inline(__always)
    func bindNull(at index: Int32) {
        sqlite3_bind_null(handle, index)
        if _slowPath(trace != nil) { trace?.bound(.null, at: index) }
    }

    @inline(__always)
    func bind(_ number: Int64, at index: Int32) {
        sqlite3_bind_int64(handle, index, number)
        if _slowPath(trace != nil) { trace?.bound(.integer(number), at: index) }
    }

    @inline(__always)
    func bind(_ number: Double, at index: Int32) {
        sqlite3_bind_double(handle, index, number)
        if _slowPath(trace != nil) { trace?.bound(.real(number), at: index) }
    }

    func bind(_ string: String, at index: Int32) {
        if _slowPath(trace != nil) { trace?.bound(.text(string), at: index) }
        // A native string's bytes are read where they are; `withUTF8`, which needs a mutable copy, retained and
        // released the string for every value bound.
        if string.utf8.withContiguousStorageIfAvailable({ bindText($0, at: index) }) != nil { return }
        var string = string
        string.withUTF8 { bindText($0, at: index) }
    }

    private func bindText(_ buffer: UnsafeBufferPointer<UInt8>, at index: Int32) {
        // An empty buffer may have no base address; SQLite would bind NULL for a null pointer.
        guard let base = buffer.baseAddress else {
            sqlite3_bind_text(handle, index, "", 0, sqliteTransient)
            return
        }
        if let kept = buffered(UnsafeRawBufferPointer(buffer), for: index) {
            // No destructor (`SQLITE_STATIC`): the bytes stay in the parameter's buffer.
            sqlite3_bind_text(handle, index, kept.assumingMemoryBound(to: CChar.self), Int32(buffer.count), nil)
        } else {
            let pointer = UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self)
            sqlite3_bind_text(handle, index, pointer, Int32(buffer.count), sqliteTransient)
        }
    }

    func bind(_ data: Data, at index: Int32) {
        if _slowPath(trace != nil) { trace?.bound(.blob(data), at: index) }
        if data.isEmpty {
            sqlite3_bind_zeroblob(handle, index, 0)
            return
        }
        data.withUnsafeBytes { buffer in
            if let kept = buffered(buffer, for: index) {
                _ = sqlite3_bind_blob(handle, index, kept, Int32(buffer.count), nil)
            } else {
                _ = sqlite3_bind_blob(handle, index, buffer.baseAddress, Int32(buffer.count), sqliteTransient)
            }
        }
    }

    // MARK: Stepping

    /// Advances to the next row: `true` if there is one, `false` when the statement is done.
    @inline(__always)
    func step() throws(SQLiteError) -> Bool {
        if _slowPath(trace != nil) { return try tracedStep() }
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw connection.error(code, sql: sql)
        }
    }

    /// Runs a statement that returns no rows.
    func run(_ values: [SQLiteValue] = []) throws(SQLiteError) {
        reset()
        bind(values)
        while try step() {}
    }

    /// The first column of the first row, as an integer.
    func scalarInteger(_ values: [SQLiteValue] = []) throws(SQLiteError) -> Int64? {
        reset()
        bind(values)
        // Reset after reading: a statement left on its row keeps its read transaction open, which holds a shared
        // lock on a rollback journal (other connections cannot commit) and keeps a write-ahead log from being
        // checkpointed past it.
        defer { reset() }
        guard try step() else { return nil }
        if sqlite3_column_type(handle, 0) == SQLITE_NULL { return nil }
        return sqlite3_column_int64(handle, 0)
    }

    // MARK: Reading columns (indexes start at 0)

    @inline(__always)
    func columnType(_ index: Int32) -> Int32 {
        sqlite3_column_type(handle, index)
    }

    @inline(__always)
    func isNull(_ index: Int32) -> Bool {
        sqlite3_column_type(handle, index) == SQLITE_NULL
    }

    @inline(__always)
    func int64(_ index: Int32) -> Int64 {
        sqlite3_column_int64(handle, index)
    }

    @inline(__always)
    func double(_ index: Int32) -> Double {
        sqlite3_column_double(handle, index)
    }

    func text(_ index: Int32) -> String {
        textIfNotNull(index) ?? ""
    }

    /// The column as text; `nil` for NULL.
    @inline(__always)
    func textIfNotNull(_ index: Int32) -> String? {
        guard let pointer = sqlite3_column_text(handle, index) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, index))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    /// The column as bytes; `nil` for NULL (an empty blob also has no pointer, so the storage class tells).
    @inline(__always)
    func blobIfNotNull(_ index: Int32) -> Data? {
        guard let pointer = sqlite3_column_blob(handle, index) else {
            return sqlite3_column_type(handle, index) == SQLITE_NULL ? nil : Data()
        }
        return Data(bytes: pointer, count: Int(sqlite3_column_bytes(handle, index)))
    }

    func blob(_ index: Int32) -> Data {
        blobIfNotNull(index) ?? Data()
    }

    /// The column as a `SQLiteValue`, whatever its storage class.
    func value(_ index: Int32) -> SQLiteValue {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER: return .integer(int64(index))
        case SQLITE_FLOAT: return .real(double(index))
        case SQLITE_TEXT: return .text(text(index))
        case SQLITE_BLOB: return .blob(blob(index))
        default: return .null
        }
    }
}
