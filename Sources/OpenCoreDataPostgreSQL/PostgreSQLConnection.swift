import CLibPQ
import Foundation

/// One connection to a PostgreSQL server through libpq, used by one store inside its serialization: statements are
/// sent with their values as text parameters (`PQexecParams`), never spliced into the SQL.
///
/// A connection the server dropped (a restart, a network failure) fails the statement in flight with the server's
/// or libpq's message; the next statement connects again first (`PQreset`), so that the store stays usable.
final class PostgreSQLConnection {
    private var handle: OpaquePointer?
    let configuration: PostgreSQLConfiguration
    /// Whether a transaction is open on this connection (`BEGIN` sent, no `COMMIT`/`ROLLBACK` yet).
    private(set) var inTransaction = false

    init(_ configuration: PostgreSQLConfiguration) throws(PostgreSQLError) {
        self.configuration = configuration
        let parameters = configuration.connectionParameters
        // libpq copies what it needs: the C strings live for the call only.
        let keywords = parameters.map { strdup($0.key) }
        let values = parameters.map { strdup($0.value) }
        defer {
            keywords.forEach { free($0) }
            values.forEach { free($0) }
        }
        let keywordArray: [UnsafePointer<CChar>?] = keywords.map { UnsafePointer($0) } + [nil]
        let valueArray: [UnsafePointer<CChar>?] = values.map { UnsafePointer($0) } + [nil]
        handle = PQconnectdbParams(keywordArray, valueArray, 0)
        guard let handle, PQstatus(handle) == CONNECTION_OK else {
            let message = handle.map { Self.message(of: $0) } ?? "libpq could not allocate a connection"
            if let handle { PQfinish(handle) }
            self.handle = nil
            throw PostgreSQLError(kind: .connection, message: message, sqlState: nil)
        }
        // Notices (NOTICE: relation already exists…) would go to standard error by default.
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
    }

    deinit {
        if let handle { PQfinish(handle) }
    }

    /// Whether the connection is open and the server has not dropped it (as far as libpq has seen).
    var isUsable: Bool {
        handle.map { PQstatus($0) == CONNECTION_OK } ?? false
    }

    /// libpq's connection, for waiting on its socket (`PostgreSQLChangeListener`).
    var rawHandle: OpaquePointer? { handle }

    /// A connection that the server dropped is opened again before the next statement, outside a transaction only:
    /// inside one, what the transaction did is gone, and the statement must fail.
    private func usableHandle() throws(PostgreSQLError) -> OpaquePointer {
        guard let handle else {
            throw PostgreSQLError(kind: .connection, message: "the connection is closed", sqlState: nil)
        }
        if PQstatus(handle) != CONNECTION_OK {
            if inTransaction {
                throw PostgreSQLError(
                    kind: .connection, message: "the connection was lost during a transaction", sqlState: nil)
            }
            PQreset(handle)
            // A new session: the statements prepared on the old one are gone.
            prepared.removeAll()
            guard PQstatus(handle) == CONNECTION_OK else {
                throw PostgreSQLError(kind: .connection, message: Self.message(of: handle), sqlState: nil)
            }
        }
        return handle
    }

    /// Runs one statement with `parameters` bound to `$1`, `$2`… (as text; `nil` is SQL NULL) and returns its rows.
    ///
    /// Outside a transaction, a statement that finds the connection gone (the server restarted since the last one) is
    /// sent once more on a new connection: nothing of it ran.
    @discardableResult
    func query(_ sql: String, _ parameters: [String?] = []) throws(PostgreSQLError) -> PostgreSQLResult {
        do {
            return try send(sql, parameters)
        } catch  where error.kind == .connection && !inTransaction {
            return try send(sql, parameters)
        }
    }

    private func send(_ sql: String, _ parameters: [String?]) throws(PostgreSQLError) -> PostgreSQLResult {
        let handle = try usableHandle()
        let name = try preparedName(sql, parameterCount: parameters.count, handle: handle)
        let copies = parameters.map { $0.map { strdup($0) } ?? nil }
        defer { copies.forEach { free($0) } }
        let pointers: [UnsafePointer<CChar>?] = copies.map { $0.map { UnsafePointer($0) } }
        let result = pointers.withUnsafeBufferPointer { buffer in
            if let name {
                return PQexecPrepared(handle, name, Int32(parameters.count), buffer.baseAddress, nil, nil, 0)
            }
            return PQexecParams(handle, sql, Int32(parameters.count), nil, buffer.baseAddress, nil, nil, 0)
        }
        return try check(result, handle: handle)
    }

    /// Statements prepared on this connection, by their SQL: each is parsed by the server once, not at every use.
    private var prepared: [String: String] = [:]
    /// How many statements a connection keeps prepared; others (predicates with lists of every length, say) are sent
    /// whole each time.
    static let preparedLimit = 256

    /// The name of `sql` prepared on this connection, preparing it if there is room; `nil` for a statement without
    /// parameters (`BEGIN`, `COMMIT`…) or when the connection keeps enough already.
    private func preparedName(_ sql: String, parameterCount: Int, handle: OpaquePointer) throws(PostgreSQLError)
        -> String?
    {
        if let name = prepared[sql] { return name }
        guard parameterCount > 0, prepared.count < Self.preparedLimit else { return nil }
        let name = "opencoredata_\(prepared.count + 1)"
        _ = try check(PQprepare(handle, name, sql, Int32(parameterCount), nil), handle: handle)
        prepared[sql] = name
        return name
    }

    /// Runs statements without parameters (several, separated by semicolons, for schema definitions).
    func execute(_ sql: String) throws(PostgreSQLError) {
        let handle = try usableHandle()
        _ = try check(PQexec(handle, sql), handle: handle)
    }

    private func check(_ result: OpaquePointer?, handle: OpaquePointer) throws(PostgreSQLError) -> PostgreSQLResult {
        guard let result else {
            throw PostgreSQLError(kind: .connection, message: Self.message(of: handle), sqlState: nil)
        }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return PostgreSQLResult(result)
        default:
            let field = { (code: Int32) -> String? in
                PQresultErrorField(result, code).map { String(cString: $0) }
            }
            let sqlState = field(Int32(UInt8(ascii: "C")))  // PG_DIAG_SQLSTATE
            let primary = field(Int32(UInt8(ascii: "M")))  // PG_DIAG_MESSAGE_PRIMARY
            let message = primary ?? Self.message(of: handle)
            PQclear(result)
            let lost = PQstatus(handle) != CONNECTION_OK
            throw PostgreSQLError(kind: lost ? .connection : .server, message: message, sqlState: sqlState)
        }
    }

    static func message(of handle: OpaquePointer) -> String {
        guard let text = PQerrorMessage(handle) else { return "unknown error" }
        return String(cString: text).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    // MARK: Transactions

    /// Runs `body` in a transaction: committed if it returns, rolled back if it throws (the error is rethrown).
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try query("BEGIN")  // Sent again on a new connection if the server went away since the last statement.
        inTransaction = true
        do {
            let value = try body()
            try query("COMMIT")
            inTransaction = false
            return value
        } catch {
            inTransaction = false
            if let handle, PQstatus(handle) == CONNECTION_OK {
                _ = try? query("ROLLBACK")
            }
            throw error
        }
    }
}

/// The rows of one statement, read as text (libpq's text format) and decoded by the caller.
final class PostgreSQLResult {
    private let result: OpaquePointer
    let rowCount: Int
    let columnCount: Int

    init(_ result: OpaquePointer) {
        self.result = result
        rowCount = Int(PQntuples(result))
        columnCount = Int(PQnfields(result))
    }

    deinit { PQclear(result) }

    /// The value at `row`, `column` as text, or `nil` for SQL NULL.
    func text(_ row: Int, _ column: Int) -> String? {
        guard PQgetisnull(result, Int32(row), Int32(column)) == 0,
            let value = PQgetvalue(result, Int32(row), Int32(column))
        else { return nil }
        return String(cString: value)
    }

    /// The value at `row`, `column` as libpq holds it (text, without the terminating NUL), or `nil` for SQL NULL.
    /// Valid while this result lives: read it in place instead of making a `String` of every column.
    func bytes(_ row: Int, _ column: Int) -> UnsafeBufferPointer<UInt8>? {
        let (row, column) = (Int32(row), Int32(column))
        guard PQgetisnull(result, row, column) == 0, let value = PQgetvalue(result, row, column) else { return nil }
        return UnsafeBufferPointer(
            start: UnsafeRawPointer(value).assumingMemoryBound(to: UInt8.self),
            count: Int(PQgetlength(result, row, column)))
    }

    func int64(_ row: Int, _ column: Int) -> Int64? {
        withExtendedLifetime(self) { bytes(row, column).flatMap(PostgreSQLValueCoding.int64) }
    }

    /// The number of rows an `INSERT`, `UPDATE` or `DELETE` touched.
    var affectedRows: Int {
        PQcmdTuples(result).flatMap { Int(String(cString: $0)) } ?? 0
    }
}

/// What went wrong talking to the server: the server's own message and SQLSTATE, or libpq's for a connection that
/// failed. Never holds the password: libpq's messages name the host, port and user only.
struct PostgreSQLError: Error, CustomStringConvertible {
    enum Kind {
        /// No connection could be made, or it was lost.
        case connection
        /// The server refused a statement.
        case server
    }

    let kind: Kind
    let message: String
    let sqlState: String?

    var description: String {
        sqlState.map { "\(message) (SQLSTATE \($0))" } ?? message
    }

    /// The SQLSTATE of a unique violation, which a uniqueness constraint raises.
    var isUniqueViolation: Bool { sqlState == "23505" }
}
