import Foundation

/// What a process that stopped while writing (killed, crashed, lost power) leaves beside a store file, and how the
/// store lets SQLite recover from it before judging the file.
///
/// SQLite recovers on the next open, and only a connection that may write can do it for a rollback journal: a
/// read-only connection that meets a hot journal fails with `SQLITE_READONLY_ROLLBACK` (776) and cannot read the
/// store at all. In WAL mode the main file alone is not the store: a checkpoint interrupted after writing page 1
/// leaves a header that counts pages only the `-wal` file holds. Checks made on the bytes of the main file therefore
/// ask `SQLiteCompanionFiles` first.
struct SQLiteCompanionFiles {
    /// The main file.
    let url: URL
    /// A rollback journal (journal modes DELETE, TRUNCATE, PERSIST) that SQLite would call hot: not empty and not
    /// zeroed, beside a main file that is not empty. Unless another connection is writing (SQLite tells), it holds
    /// the original of pages that an unfinished transaction changed, and must be played back before the main file
    /// is read.
    let hotJournal: URL?
    /// Whether the hot journal starts with SQLite's journal header; SQLite ignores (and deletes) one that does not.
    let hotJournalIsSQLite: Bool
    /// A write-ahead log with frames in it: pages newer than the main file's, committed or not, that the main file
    /// alone does not show.
    let wal: URL?

    /// The first bytes of every rollback journal SQLite writes.
    static let journalMagic: [UInt8] = [0xD9, 0xD5, 0x05, 0xF9, 0x20, 0xA1, 0x63, 0xD7]
    /// The size of a WAL header; a `-wal` file no longer than this holds no page.
    static let walHeaderSize = 32

    init(of url: URL, mainFileSize: Int) {
        self.url = url
        let journal = URL(fileURLWithPath: url.path + "-journal")
        let attributes = mainFileSize > 0 ? try? FileManager.default.attributesOfItem(atPath: journal.path) : nil
        let start = attributes == nil ? [] : Self.firstBytes(of: journal, count: Self.journalMagic.count)
        if let attributes {
            // One that cannot be read as a file is left for SQLite to judge, and to refuse.
            let isFile = attributes[.type] as? FileAttributeType == .typeRegular
            let size = (attributes[.size] as? NSNumber)?.intValue ?? 0
            hotJournal = !isFile || (size > 0 && start.first != 0) ? journal : nil
        } else {
            hotJournal = nil
        }
        hotJournalIsSQLite = hotJournal != nil && start == Self.journalMagic
        let walPath = url.path + "-wal"
        let walSize = (try? FileManager.default.attributesOfItem(atPath: walPath)[.size] as? NSNumber)?.intValue ?? 0
        wal = walSize > Self.walHeaderSize ? URL(fileURLWithPath: walPath) : nil
    }

    private static func firstBytes(of url: URL, count: Int) -> [UInt8] {
        guard let handle = FileHandle(forReadingAtPath: url.path) else { return [] }
        defer { try? handle.close() }
        return [UInt8]((try? handle.read(upToCount: count)) ?? Data())
    }
}

extension NSSQLiteStore {
    /// Makes the file at `url` ready to be judged by its bytes and read by a read-only connection, and returns its
    /// size then: a hot journal is played back by SQLite first, through a connection that may write (what any SQLite
    /// program opening the file does), unless `recover` is false, when the file is refused instead. Then checks the
    /// header, unless the file is empty and `emptyIsNew` (a transaction that created the store was rolled back). A
    /// file that is not a SQLite file, with no SQLite journal beside it, is refused without anything being written.
    @discardableResult
    static func _prepareToRead(
        _ url: URL, size: Int, timeout: Double, recover: Bool = true, emptyIsNew: Bool = false
    ) throws -> Int {
        var size = size
        var companions = SQLiteCompanionFiles(of: url, mainFileSize: size)
        // A journal that is not SQLite's, beside a file that is not SQLite's, is no crash SQLite would recover from:
        // the header check refuses the pair untouched.
        if let journal = companions.hotJournal, companions.hotJournalIsSQLite || _hasSQLiteMagic(url) {
            guard recover else {
                throw coreDataError(
                    NSPersistentStoreOpenError,
                    """
                    The store at \(url.path) has an unfinished transaction in \(journal.path), left by a process that \
                    stopped while saving; open the store with a coordinator (or the sqlite3 tool) to roll it back, \
                    then try again
                    """,
                    userInfo: [NSURLErrorKey: url, NSFilePathErrorKey: journal.path])
            }
            try _rollBackHotJournal(url, journal: journal, timeout: timeout)
            size = ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber)?.intValue ?? 0
            companions = SQLiteCompanionFiles(of: url, mainFileSize: size)
        }
        if size == 0, emptyIsNew { return 0 }
        try _checkHeader(of: url, size: size, companions: companions)
        return size
    }

    static func _hasSQLiteMagic(_ url: URL) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: url.path) else { return false }
        defer { try? handle.close() }
        return [UInt8]((try? handle.read(upToCount: 16)) ?? Data()).elementsEqual(Array("SQLite format 3\u{0}".utf8))
    }

    /// Lets SQLite play back (or, if it is not a valid journal, discard) the hot journal beside `url`: SQLite does it
    /// on the first read of a connection that may write. If another connection is in the middle of writing, the
    /// journal is not hot and SQLite leaves it alone.
    static func _rollBackHotJournal(_ url: URL, journal: URL, timeout: Double) throws {
        do {
            let connection = try SQLiteConnection(path: url.path, readOnly: false, create: false)
            defer { connection.close() }
            connection.setBusyTimeout(seconds: timeout)
            let statement = try connection.prepare("SELECT count(*) FROM sqlite_master")
            defer { statement.finalize() }
            _ = try statement.step()
        } catch {
            throw error.recoveryError(
                url: url, companion: journal, action: "rolling back the unfinished transaction in")
        }
    }

    /// `error`, raised by the first read of the file at `url`, as the Core Data error callers see; when SQLite read a
    /// write-ahead log with it, the message names the log, which may be what SQLite refused.
    static func _firstReadError(_ error: Error, url: URL, companions: SQLiteCompanionFiles) -> Error {
        if let sqlite = error as? SQLiteError, let wal = companions.wal {
            return sqlite.recoveryError(url: url, companion: wal, action: "reading it with the write-ahead log")
        }
        return _coreDataError(error, url: url, action: "opening")
    }
}
