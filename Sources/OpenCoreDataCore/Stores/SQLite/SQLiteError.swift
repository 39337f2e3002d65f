import CSQLite
import Foundation

/// An error SQLite reported, with the statement it came from. The store turns it into a Core Data `NSError`
/// (`coreDataError(for:)`) before it leaves the store layer.
struct SQLiteError: Error, CustomStringConvertible {
    /// The primary result code (`SQLITE_BUSY`, `SQLITE_CORRUPT`…).
    let code: Int32
    /// The extended result code.
    let extendedCode: Int32
    let message: String
    /// The SQL text of the statement; it never holds user values, which are always bound.
    let sql: String?

    init(code: Int32, extendedCode: Int32? = nil, message: String, sql: String? = nil) {
        self.code = code & 0xFF
        self.extendedCode = extendedCode ?? code
        self.message = message
        self.sql = sql
    }

    /// The file is not a database, or its pages are damaged.
    var isCorruption: Bool { code == SQLITE_CORRUPT || code == SQLITE_NOTADB }

    var description: String {
        "SQLite error \(extendedCode): \(message)" + (sql.map { " (in \($0))" } ?? "")
    }

    /// The Core Data error for this SQLite error, raised while `action` ("opening", "saving"…) the store at `url`:
    /// Core Data's code, a message, the SQLite code under `NSSQLiteErrorDomain` (as Apple reports it) and the
    /// SQLite error as the underlying error.
    func coreDataError(url: URL?, action: String) -> NSError {
        let (code, reason) = classification(path: url?.path ?? "(unknown)")
        return coreDataError_(
            code, "\(reason) while \(action) (SQLite \(extendedCode): \(message))", userInfo(url: url))
    }

    /// The Core Data error for this SQLite error, raised while SQLite recovered the store at `url` with `companion`,
    /// the journal or write-ahead log that a process stopped while writing may have left: the message names both
    /// files and gives SQLite's reason, and the companion's path is under `NSFilePathErrorKey`.
    func recoveryError(url: URL, companion: URL, action: String) -> NSError {
        var (code, _) = classification(path: url.path)
        // A file SQLite cannot open or read while recovering is a file that cannot be read, as for Apple's framework.
        if self.code == SQLITE_IOERR { code = CocoaError.Code.fileReadUnknown.rawValue }
        var userInfo = userInfo(url: url)
        userInfo[NSFilePathErrorKey] = companion.path
        return coreDataError_(
            code,
            """
            The store at \(url.path) cannot be opened: SQLite refused it while \(action) \(companion.path) \
            (SQLite \(extendedCode): \(message))
            """,
            userInfo)
    }

    /// Core Data's code for this error, and what it means for the store at `path`.
    private func classification(path: String) -> (code: Int, reason: String) {
        switch self.code {
        case SQLITE_NOTADB, SQLITE_CORRUPT:
            return (
                CocoaError.Code.fileReadCorruptFile.rawValue, "The file at \(path) is not a SQLite store or is damaged"
            )
        case SQLITE_BUSY, SQLITE_LOCKED:
            return (
                NSPersistentStoreTimeoutError,
                "The store at \(path) stayed busy (locked by another connection) past its timeout"
            )
        case SQLITE_FULL:
            return (CocoaError.Code.fileWriteOutOfSpace.rawValue, "The disk holding the store at \(path) is full")
        case SQLITE_READONLY, SQLITE_PERM:
            return (CocoaError.Code.fileWriteNoPermission.rawValue, "The store at \(path) cannot be written")
        case SQLITE_CANTOPEN:
            // As Apple's framework reports a file SQLite cannot open: NSFileReadUnknownError with the SQLite code.
            return (CocoaError.Code.fileReadUnknown.rawValue, "The store file at \(path) cannot be opened")
        case SQLITE_CONSTRAINT:
            return (
                NSManagedObjectConstraintMergeError, "A save to the store at \(path) violates a uniqueness constraint"
            )
        default:
            return (NSSQLiteError, "SQLite failed with the store at \(path)")
        }
    }

    /// SQLite's code under `NSSQLiteErrorDomain` (as Apple reports it), the SQLite error as the underlying error, the
    /// store's URL and the statement.
    private func userInfo(url: URL?) -> [String: Any] {
        var userInfo: [String: Any] = [
            NSSQLiteErrorDomain: Int(extendedCode),
            NSUnderlyingErrorKey: NSError(
                domain: NSSQLiteErrorDomain, code: Int(extendedCode),
                userInfo: [NSLocalizedDescriptionKey: message]),
        ]
        if let url { userInfo[NSURLErrorKey] = url }
        if let sql { userInfo["NSSQLiteStatement"] = sql }
        return userInfo
    }
}

/// `coreDataError` under a name that does not clash with the method above.
@inline(__always)
private func coreDataError_(_ code: Int, _ message: String, _ userInfo: [String: Any]) -> NSError {
    coreDataError(code, message, userInfo: userInfo)
}
