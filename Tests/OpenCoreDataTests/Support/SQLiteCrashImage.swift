import Foundation
import OpenCoreDataShim
import Testing

#if canImport(CoreData)
import SQLite3
#else
import CSQLite
#endif

/// A journal configuration that Core Data users choose through `NSSQLitePragmasOption`.
struct SQLiteJournalSetting: Codable, Sendable, CustomTestStringConvertible {
    /// `nil` for the default (WAL).
    var journalMode: String?
    var synchronous: String?
    var walAutocheckpoint: Int?

    var isWAL: Bool { (journalMode ?? "WAL") == "WAL" }

    var pragmas: [String: String] {
        var pragmas: [String: String] = [:]
        pragmas["journal_mode"] = journalMode
        pragmas["synchronous"] = synchronous
        pragmas["wal_autocheckpoint"] = walAutocheckpoint.map(String.init)
        return pragmas
    }

    /// The store options (none for the default setting).
    var options: [AnyHashable: Any]? { pragmas.isEmpty ? nil : [NSSQLitePragmasOption: pragmas] }

    /// The same setting with another `wal_autocheckpoint`.
    func with(walAutocheckpoint: Int) -> SQLiteJournalSetting {
        var setting = self
        setting.walAutocheckpoint = walAutocheckpoint
        return setting
    }

    var testDescription: String {
        pragmas.isEmpty
            ? "default (WAL)" : pragmas.sorted { $0.key < $1.key }.map { "\($0)=\($1)" }.joined(separator: " ")
    }

    /// Every journal mode Core Data users set, with and without `synchronous=FULL`, with small and large
    /// `wal_autocheckpoint`.
    static let all: [SQLiteJournalSetting] = [
        SQLiteJournalSetting(),
        SQLiteJournalSetting(journalMode: "WAL", synchronous: "FULL", walAutocheckpoint: 1),
        SQLiteJournalSetting(journalMode: "WAL", walAutocheckpoint: 100_000),
        SQLiteJournalSetting(journalMode: "DELETE"),
        SQLiteJournalSetting(journalMode: "DELETE", synchronous: "FULL"),
        SQLiteJournalSetting(journalMode: "TRUNCATE"),
        SQLiteJournalSetting(journalMode: "PERSIST", synchronous: "FULL"),
    ]

    static let rollbackJournals = all.filter { !$0.isWAL }
}

/// The files a crash leaves, made without a crash: copies of a store's files taken at the moment a process could
/// have been killed (while a transaction is unfinished, between a commit and its checkpoint…), as they are.
enum SQLiteCrashImage {
    static let suffixes = ["", "-journal", "-wal", "-shm"]

    /// Copies the files of the store at `url` that exist into `directory`, under the same names.
    @discardableResult
    static func copy(_ url: URL, into directory: URL) throws -> URL {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let destination = directory.appendingPathComponent(url.lastPathComponent)
        for suffix in suffixes where FileManager.default.fileExists(atPath: url.path + suffix) {
            try FileManager.default.copyItem(atPath: url.path + suffix, toPath: destination.path + suffix)
        }
        return destination
    }

    /// The bytes of each of the store's files that exist, by suffix ("" for the main file); the `-shm` index is left
    /// out, since any reader rebuilds it.
    static func contents(_ url: URL) -> [String: Data] {
        var contents: [String: Data] = [:]
        for suffix in ["", "-journal", "-wal"] {
            if let data = FileManager.default.contents(atPath: url.path + suffix) { contents[suffix] = data }
        }
        return contents
    }

    /// The total size of the pages that the main file's header counts, and the page size.
    static func headerPages(_ url: URL) throws -> (bytes: Int, pageSize: Int) {
        let header = [UInt8](try Data(contentsOf: url).prefix(100))
        func integer(_ offset: Int, _ count: Int) -> Int {
            header[offset..<(offset + count)].reduce(0) { $0 << 8 | Int($1) }
        }
        let pageSize = integer(16, 2) == 1 ? 65_536 : integer(16, 2)
        return (integer(28, 4) * pageSize, pageSize)
    }

    /// A WAL header like `header` with another format version, and a checksum that matches, so that only the version
    /// is wrong.
    static func walHeader(_ header: Data, version: UInt32) -> Data {
        var bytes = [UInt8](header.prefix(32))
        func put(_ value: UInt32, at offset: Int) {
            for index in 0..<4 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (24 - 8 * index)) }
        }
        put(version, at: 4)
        // The checksum runs over 32-bit words in the byte order the magic number's low bit names.
        let bigEndian = bytes[3] & 1 == 1
        func word(_ offset: Int) -> UInt32 {
            let value = bytes[offset..<(offset + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            return bigEndian ? value : value.byteSwapped
        }
        var first: UInt32 = 0
        var second: UInt32 = 0
        for offset in stride(from: 0, to: 24, by: 8) {
            first = first &+ word(offset) &+ second
            second = second &+ word(offset + 4) &+ first
        }
        put(first, at: 24)
        put(second, at: 28)
        return Data(bytes) + header.dropFirst(32)
    }
}

/// A read-write connection through SQLite's C API that plays another program (or the moment before a crash): it
/// can hold a write transaction open while the files are copied.
final class RawSQLiteConnection {
    let handle: OpaquePointer

    init(_ url: URL) throws {
        var handle: OpaquePointer?
        guard sqlite3_open_v2(url.path, &handle, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let handle else {
            throw RawSQLite.Failure(description: "cannot open \(url.path)")
        }
        self.handle = handle
    }

    deinit {
        sqlite3_close_v2(handle)
    }

    func execute(_ sql: String) throws {
        guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else {
            throw RawSQLite.Failure(description: String(cString: sqlite3_errmsg(handle)))
        }
    }

    /// Starts a transaction that changes and adds more pages than SQLite's page cache (one page) holds, so that
    /// SQLite writes them before the commit: into the main file, after saving their originals in the rollback
    /// journal, or into the WAL as frames without a commit. The transaction stays open.
    func beginTransactionThatSpills(journalMode: String?, synchronous: String?) throws {
        // The journal mode of a rollback journal belongs to the connection; WAL is recorded in the file.
        if let journalMode, journalMode != "WAL" { try execute("PRAGMA journal_mode = \(journalMode)") }
        if let synchronous { try execute("PRAGMA synchronous = \(synchronous)") }
        try execute("PRAGMA cache_size = 1")
        try execute("BEGIN IMMEDIATE")
        try execute("UPDATE ZOWNER SET ZNAME = 'uncommitted ' || ZNAME")
        try execute("UPDATE Z_METADATA SET Z_UUID = 'uncommitted'")
        try execute("DELETE FROM ZITEM WHERE Z_PK % 2 = 0")
        try execute(
            """
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
            INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZNAME)
            SELECT 100000 + i, (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Item'), 1, printf('%0300d', i) FROM n
            """)
    }
}
