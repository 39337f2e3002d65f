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
        let path = url?.path ?? "(unknown)"
        let code: Int
        let reason: String
        switch self.code {
        case SQLITE_NOTADB, SQLITE_CORRUPT:
            code = CocoaError.Code.fileReadCorruptFile.rawValue
            reason = "The file at \(path) is not a SQLite store or is damaged"
        case SQLITE_BUSY, SQLITE_LOCKED:
            code = NSPersistentStoreTimeoutError
            reason = "The store at \(path) stayed busy (locked by another connection) past its timeout"
        case SQLITE_FULL:
            code = CocoaError.Code.fileWriteOutOfSpace.rawValue
            reason = "The disk holding the store at \(path) is full"
        case SQLITE_READONLY, SQLITE_PERM:
            code = CocoaError.Code.fileWriteNoPermission.rawValue
            reason = "The store at \(path) cannot be written"
        case SQLITE_CANTOPEN:
            code = NSPersistentStoreOpenError
            reason = "The store file at \(path) cannot be opened"
        case SQLITE_CONSTRAINT:
            code = NSManagedObjectConstraintMergeError
            reason = "A save to the store at \(path) violates a uniqueness constraint"
        default:
            code = NSSQLiteError
            reason = "SQLite failed while \(action) the store at \(path)"
        }
        var userInfo: [String: Any] = [
            NSSQLiteErrorDomain: Int(extendedCode),
            NSUnderlyingErrorKey: NSError(
                domain: NSSQLiteErrorDomain, code: Int(extendedCode),
                userInfo: [NSLocalizedDescriptionKey: message]),
        ]
        if let url { userInfo[NSURLErrorKey] = url }
        if let sql { userInfo["NSSQLiteStatement"] = sql }
        return coreDataError_(code, "\(reason) while \(action) (SQLite \(extendedCode): \(message))", userInfo)
    }
}

/// `coreDataError` under a name that does not clash with the method above.
@inline(__always)
private func coreDataError_(_ code: Int, _ message: String, _ userInfo: [String: Any]) -> NSError {
    coreDataError(code, message, userInfo: userInfo)
}
