import CSQLite
import Foundation

/// The store's files: emptying a store in place, replacing one store's content with another's, as Apple's SQLite
/// store does with SQLite's backup API under SQLite's own locks.
extension NSSQLiteStore {
    /// The store file and its companions.
    static func _files(of url: URL) -> [URL] {
        ["", "-wal", "-shm", "-journal"].map { URL(fileURLWithPath: url.path + $0) }
    }

    /// Empties the store at `url` in place, as Apple's SQLite store does: an empty database is copied over it with
    /// SQLite's backup API, under SQLite's own locks, so that connections other coordinators or processes hold stay
    /// valid (they see an empty database, not a deleted file). The file stays; adding a store there creates a new
    /// one. Nothing is done to a URL with no file or to `/dev/null`; anything else that is not a SQLite file is
    /// refused and left as it is.
    static func _emptyStore(at url: URL) throws {
        let url = try _fileURL(url)
        switch StoreLocation(url) {
        case .devNull, .missing:
            return
        case .notAFile(let kind):
            throw StoreLocation.notAFileError(url, kind: kind, action: "destroy")
        case .regularFile(let size):
            if size > 0 { try _prepareToRead(url, size: size, timeout: 240) }
        }
        let empty = try _connect(URL(fileURLWithPath: "/dev/null"), readOnly: false, create: true, timeout: 0)
        defer { empty.close() }
        let target = try _connect(url, readOnly: false, create: false, timeout: 240)
        defer { target.close() }
        try _copyDatabase(from: empty, to: target, url: url, action: "destroying")
        // The backup went through the WAL if the file is in WAL mode; give its space back.
        _ = try? target.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    /// Copies the store at `source` (with what its WAL holds) over the store at `destination` through SQLite's
    /// backup API, in place, so that connections to the destination elsewhere stay valid.
    static func _copyStore(at source: URL, over destination: URL) throws {
        let source = try _fileURL(source)
        let destination = try _fileURL(destination)
        switch StoreLocation(source) {
        case .regularFile:
            break
        case .devNull:
            throw coreDataError(
                CocoaError.Code.fileReadNoSuchFile.rawValue,
                "A store at /dev/null lives in memory only, in the coordinator that added it; there is no file to copy",
                userInfo: [NSURLErrorKey: source])
        case .missing:
            throw coreDataError(
                CocoaError.Code.fileReadNoSuchFile.rawValue, "There is no SQLite store at \(source.path) to copy",
                userInfo: [NSURLErrorKey: source])
        case .notAFile(let kind):
            throw StoreLocation.notAFileError(source, kind: kind, action: "copy")
        }
        switch StoreLocation(destination) {
        case .devNull, .notAFile:
            throw coreDataError(
                CocoaError.Code.fileWriteUnknown.rawValue,
                "Cannot replace \(destination.path) with a store: it is not a store file",
                userInfo: [NSURLErrorKey: destination])
        case .regularFile(let size) where size > 0:
            try _prepareToRead(destination, size: size, timeout: 240)
        case .missing, .regularFile:
            break
        }
        let sourceSize =
            ((try? FileManager.default.attributesOfItem(atPath: source.path))?[.size] as? NSNumber)?.intValue ?? 0
        try _prepareToRead(source, size: sourceSize, timeout: 240)
        let from = try _connect(source, readOnly: true, create: false, timeout: 240)
        defer { from.close() }
        do {
            _ = try SQLiteStoreMetadata.read(from)
        } catch {
            throw _coreDataError(error, url: source, action: "copying")
        }
        let to = try _connect(destination, readOnly: false, create: true, timeout: 240)
        defer { to.close() }
        try _copyDatabase(from: from, to: to, url: destination, action: "replacing")
    }

    /// Copies every page of `from` over `to` with SQLite's backup API.
    static func _copyDatabase(
        from: SQLiteConnection, to: SQLiteConnection, url: URL, action: String
    ) throws {
        guard let backup = sqlite3_backup_init(to.handle, "main", from.handle, "main") else {
            throw to.error(sqlite3_errcode(to.handle)).coreDataError(url: url, action: action)
        }
        let code = sqlite3_backup_step(backup, -1)
        sqlite3_backup_finish(backup)
        guard code == SQLITE_DONE else {
            throw SQLiteError(code: code, message: String(cString: sqlite3_errstr(code)))
                .coreDataError(url: url, action: action)
        }
    }
}
