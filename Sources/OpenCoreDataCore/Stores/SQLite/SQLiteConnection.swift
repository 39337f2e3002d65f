import CSQLite
import Foundation

/// One connection to a SQLite file through the C API, with its prepared statements cached by SQL text.
///
/// A connection is used by one thread at a time: the store's coordinator serialises every call into its stores.
final class SQLiteConnection {
    let handle: OpaquePointer
    let path: String
    let isReadOnly: Bool
    @exclusivity(unchecked) private var statements: [String: SQLiteStatement] = [:]
    /// Statements found recently, by the representation of their SQL string (see `statement(_:)`).
    @exclusivity(unchecked) private var recent = [SQLiteStatement?](repeating: nil, count: 64)
    private var isClosed = false
    /// How many statements the cache holds before it is emptied (generated fetches can vary without bound).
    private static let statementCacheLimit = 512

    /// Opens (and, if `create`, creates) the database at `path`. An `immutable` connection reads the file as it is,
    /// creating no `-wal` or `-shm` file beside it; it must not be used while another connection writes.
    init(path: String, readOnly: Bool, create: Bool, immutable: Bool = false) throws(SQLiteError) {
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI
        if readOnly {
            flags |= SQLITE_OPEN_READONLY
        } else {
            flags |= SQLITE_OPEN_READWRITE
            if create { flags |= SQLITE_OPEN_CREATE }
        }
        var handle: OpaquePointer?
        let code = sqlite3_open_v2(Self.fileURI(path) + (immutable ? "?immutable=1" : ""), &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
            if let handle { sqlite3_close_v2(handle) }
            throw SQLiteError(code: code, message: message)
        }
        self.handle = handle
        self.path = path
        isReadOnly = readOnly
        sqlite3_extended_result_codes(handle, 1)
    }

    /// A `file:` URI for `path`, so that names with `?` or `#` open the right file.
    private static func fileURI(_ path: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "?#%")
        return "file:" + (path.addingPercentEncoding(withAllowedCharacters: allowed) ?? path)
    }

    deinit {
        close()
    }

    /// Finalizes every statement and closes the connection (checkpointing the WAL if this is its last user).
    func close() {
        guard !isClosed else { return }
        isClosed = true
        for statement in statements.values { statement.finalize() }
        statements = [:]
        for index in recent.indices { recent[index] = nil }
        sqlite3_close_v2(handle)
    }

    func error(_ code: Int32, sql: String? = nil) -> SQLiteError {
        SQLiteError(
            code: code, extendedCode: sqlite3_extended_errcode(handle),
            message: String(cString: sqlite3_errmsg(handle)),
            sql: sql)
    }

    /// Runs one statement without parameters whose rows, if any, are not needed: schema statements, transactions
    /// and pragmas. Like every statement here it is prepared alone: SQL holding a second statement is refused rather
    /// than run, so that text built from a model or a file can never smuggle one in (`sqlite3_exec` would run them
    /// all).
    func execute(_ sql: String) throws(SQLiteError) {
        if SQLiteStatementLog.isRecording { SQLiteStatementLog.record(sql) }
        let statement = try prepare(sql, persistent: false)
        defer { statement.finalize() }
        while try statement.step() {}
    }

    /// `execute(_:)` with a cached statement: for the statements every transaction runs, whose preparing and
    /// finalizing was a tenth of the work of saving one changed object.
    func executeCached(_ sql: String) throws(SQLiteError) {
        let statement = try statement(sql)
        defer { statement.reset() }
        while try statement.step() {}
    }

    /// The cached prepared statement for `sql`, reset and ready to bind.
    func statement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if SQLiteStatementLog.isRecording { SQLiteStatementLog.record(sql) }
        // Most SQL comes from strings the store keeps (a table's queries, plans): the same string, with the same
        // representation, as the statement holds. Comparing representations costs a few instructions; hashing
        // the text for the dictionary, over a thousand.
        let representation = stringRepresentation(sql)
        let slot = representation.map { stringRepresentationHash($0.0, $0.1) & (recent.count - 1) }
        if let representation, let slot, let cached = recent[slot],
            let held = stringRepresentation(cached.sql), held == representation
        {
            cached.reset()
            return cached
        }
        let statement: SQLiteStatement
        if let cached = statements[sql] {
            cached.reset()
            statement = cached
        } else {
            if statements.count >= Self.statementCacheLimit {
                for statement in statements.values { statement.finalize() }
                statements = [:]
                for index in recent.indices { recent[index] = nil }
            }
            statement = try prepare(sql)
            statements[sql] = statement
        }
        if let slot { recent[slot] = statement }
        return statement
    }

    /// A new prepared statement that is not cached (the caller finalizes it). `sql` must hold exactly one statement
    /// (comments and white space around it are fine): SQLite compiles only the first statement of a string and would
    /// silently ignore the rest, so a string with more is refused with `SQLITE_MISUSE`.
    func prepare(_ sql: String, persistent: Bool = true) throws(SQLiteError) -> SQLiteStatement {
        var pointer: OpaquePointer?
        let flags = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
        let result: Result<Void, SQLiteError> = sql.withCString { text in
            var tail: UnsafePointer<CChar>?
            let code = sqlite3_prepare_v3(handle, text, -1, flags, &pointer, &tail)
            guard code == SQLITE_OK, pointer != nil else {
                return .failure(code == SQLITE_OK ? Self.empty(sql) : error(code, sql: sql))
            }
            guard let tail, Self.holdsAnotherStatement(tail, on: handle) else { return .success(()) }
            return .failure(
                SQLiteError(
                    code: SQLITE_MISUSE, message: "the SQL holds more than one statement; each is prepared alone",
                    sql: sql))
        }
        switch result {
        case .success: return SQLiteStatement(handle: pointer!, sql: sql, connection: self)
        case .failure(let failure):
            if let pointer { sqlite3_finalize(pointer) }
            throw failure
        }
    }

    private static func empty(_ sql: String) -> SQLiteError {
        SQLiteError(code: SQLITE_MISUSE, message: "the SQL holds no statement", sql: sql)
    }

    /// Whether the text after a prepared statement holds another one. Usually it is empty; otherwise SQLite itself
    /// decides, by preparing what follows, so that comments and white space in any form count as nothing.
    private static func holdsAnotherStatement(_ tail: UnsafePointer<CChar>, on handle: OpaquePointer) -> Bool {
        var rest = tail
        while rest.pointee != 0 {
            if rest.pointee == 0x20 || (rest.pointee >= 0x09 && rest.pointee <= 0x0D) {
                rest += 1
                continue
            }
            var next: OpaquePointer?
            var after: UnsafePointer<CChar>?
            let code = sqlite3_prepare_v2(handle, rest, -1, &next, &after)
            if let next {
                sqlite3_finalize(next)
                return true
            }
            // A syntax error after the statement is another statement too, if a broken one.
            guard code == SQLITE_OK, let after, after > rest else { return true }
            rest = after
        }
        return false
    }

    /// Rows changed by the most recent INSERT, UPDATE or DELETE.
    var changes: Int { Int(sqlite3_changes(handle)) }

    /// Whether a transaction is open.
    var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Runs `body` in a transaction: committed if it returns, rolled back if it throws. `immediate` takes the write
    /// lock at once, so that what `body` reads cannot change before it writes.
    func transaction<T>(immediate: Bool, _ body: () throws -> T) throws -> T {
        try executeCached(immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED")
        do {
            let result = try body()
            try executeCached("COMMIT")
            return result
        } catch {
            if isInTransaction { try? execute("ROLLBACK") }
            throw error
        }
    }

    /// How long SQLite retries before giving up on a locked file.
    func setBusyTimeout(seconds: Double) {
        sqlite3_busy_timeout(handle, Int32(max(0, min(seconds * 1000, Double(Int32.max)))))
    }

    /// The names of the tables in the database.
    func tableNames() throws(SQLiteError) -> Set<String> {
        let statement = try self.statement("SELECT name FROM sqlite_master WHERE type = 'table'")
        var names = Set<String>()
        while try statement.step() { names.insert(statement.text(0)) }
        return names
    }

    /// The columns of `table` with their declared types, in table order.
    func columns(of table: String) throws(SQLiteError) -> [(name: String, type: String)] {
        // Table names cannot be bound; this one comes from the model or sqlite_master, and is quoted.
        let statement = try prepare("PRAGMA table_info(\"\(table.replacingOccurrences(of: "\"", with: "\"\""))\")")
        defer { statement.finalize() }
        var columns: [(String, String)] = []
        while try statement.step() { columns.append((statement.text(1), statement.text(2))) }
        return columns
    }
}
