import CSQLite
import Foundation

/// Query generations of the SQLite store: a generation is a read transaction held open on a connection of its own.
/// In WAL mode SQLite gives a read transaction the database as it was at its first read, whatever is committed
/// after, for as long as it stays open (the "snapshot isolation" of a write-ahead log); so a context pinned to a
/// generation reads through that connection — fetches, counts, dictionaries, faults and to-many faults — and sees
/// the store as it was when the generation was made.
///
/// - Contexts pinned at the same moment share one generation: the store hands out the latest one again while
///   nothing was committed since (by this store, which `sqlite3_total_changes` on its connection counts, or by any
///   other connection or process, which `PRAGMA data_version` tells).
/// - The connection goes — its read transaction rolled back, the connection closed — when the last context pinned
///   to the generation moves on or goes away (the generation is then released), or when the store is removed. A
///   read transaction keeps SQLite from checkpointing the log past it, so none outlives its contexts.
/// - The row cache is bypassed, not kept per generation: a pinned read neither consults the store's snapshots
///   (which may be newer than its generation) nor adds to them, nor to the prefetched to-many destinations, nor to
///   the batches of `fetchBatchSize` (a pinned fetch loads the values of all its rows at once). Keeping a cache per
///   generation would cost every unpinned read a lookup of the generation and duplicate rows that rarely outlive a
///   generation; bypassing costs unpinned reads nothing — the only check on their path is whether the context is
///   pinned — while a pinned context keeps the rows it read in its objects, and fires a fault with a query by
///   primary key on its generation's connection.
/// - A store not in WAL mode (`journal_mode` given in `NSSQLitePragmasOption`, or a store at `/dev/null`) keeps no
///   generations: a read transaction there would lock writers out. Its pinned contexts read the latest commit, as
///   Apple's "gracefully revert to unpinned behavior".
extension NSSQLiteStore: PersistentStoreQueryGenerating {
    package func currentGeneration() throws -> (any PersistentStoreGeneration)? {
        guard _isWriteAheadLogged, let url = _url, let writer = _connection, let mapping = _mapping else { return nil }
        do {
            let before = try SQLiteCommitMark(writer)
            if let latest = _generations.latest, latest.mark == before, latest.isOpen { return latest }
            let generation = try SQLiteQueryGeneration(store: self, url: url, mapping: mapping)
            // Shared only if nothing was committed while its transaction began, so that the mark names its state.
            generation.mark = try SQLiteCommitMark(writer) == before ? before : nil
            _generations.add(generation)
            return generation
        } catch let error as SQLiteError {
            throw error.coreDataError(url: url, action: "pinning a query generation of")
        }
    }

    /// Ends every generation of the store: it is being removed or closed.
    func _closeGenerations() {
        _generations.closeAll()
    }
}

/// What has been committed to a store file, as one connection sees it: equal marks of the same connection mean no
/// commit in between.
struct SQLiteCommitMark: Equatable {
    let connection: ObjectIdentifier
    /// Changes by other connections and processes (`PRAGMA data_version`).
    let dataVersion: Int64
    /// Rows changed through this connection.
    let changes: Int64

    init(_ connection: SQLiteConnection) throws(SQLiteError) {
        let statement = try connection.statement("PRAGMA data_version")
        defer { statement.reset() }
        _ = try statement.step()
        self.connection = ObjectIdentifier(connection)
        dataVersion = statement.int64(0)
        changes = Int64(sqlite3_total_changes(connection.handle))
    }
}

/// The generations a store handed out, for sharing the latest and ending them all when the store closes. Used inside
/// the store's serialization.
struct SQLiteQueryGenerations {
    private var all: [Weak] = []
    private(set) weak var latest: SQLiteQueryGeneration?

    private struct Weak {
        weak var generation: SQLiteQueryGeneration?
    }

    mutating func add(_ generation: SQLiteQueryGeneration) {
        all.removeAll { $0.generation == nil }
        all.append(Weak(generation: generation))
        latest = generation
    }

    mutating func closeAll() {
        for entry in all { entry.generation?.close() }
        all = []
        latest = nil
    }
}

/// One generation of one SQLite store: a read-only connection in an open read transaction, and the reads of a
/// pinned context through it. Saves and permanent IDs are the store's own: generations are for reading.
final class SQLiteQueryGeneration: @unchecked Sendable {
    // @unchecked: the connection is used under `lock` only (pinned contexts on several threads share a generation,
    // and fetches read it beside the store's other calls); `mark` is set and read inside the store's serialization.
    let sqliteStore: NSSQLiteStore
    let mapping: SQLiteModelMapping
    private var connection: SQLiteConnection?
    private let lock = NSLock()
    var mark: SQLiteCommitMark?

    var store: NSPersistentStore { sqliteStore }

    init(store: NSSQLiteStore, url: URL, mapping: SQLiteModelMapping) throws {
        sqliteStore = store
        self.mapping = mapping
        let connection = try NSSQLiteStore._connect(url, readOnly: true, create: false, timeout: store._timeout)
        do {
            // The transaction takes its snapshot at its first read.
            try connection.execute("BEGIN DEFERRED")
            let statement = try connection.statement("SELECT count(*) FROM sqlite_master")
            _ = try statement.step()
            statement.reset()
        } catch {
            connection.close()
            throw error
        }
        self.connection = connection
    }

    deinit {
        close()
    }

    var isOpen: Bool { lock.withLock { connection != nil } }

    /// Ends the read transaction and closes the connection.
    func close() {
        lock.withLock {
            guard let connection else { return }
            try? connection.execute("ROLLBACK")
            connection.close()
            self.connection = nil
        }
    }

    /// Runs `body` with the generation's connection, its SQLite errors as Core Data's.
    private func read<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try lock.withLock {
            guard let connection else {
                throw coreDataError(
                    NSPersistentStoreOperationError,
                    """
                    The SQLite store at \(sqliteStore._url?.path ?? "(unknown)") was removed from its coordinator: \
                    the query generation pinned to it can no longer be read
                    """)
            }
            do {
                return try body(connection)
            } catch let error as SQLiteError {
                throw error.coreDataError(url: sqliteStore._url, action: "fetching from")
            }
        }
    }

    // MARK: Reading

    func fetchRows(_ request: NSFetchRequest<NSFetchRequestResult>) throws -> StoreFetchResult {
        try read { connection in
            try sqliteStore._fetchRowsLeavingNoState(
                request, connection: connection, mapping: mapping, storeReference: sqliteStore._objectIDReference)
        }
    }

    func fetchRowsBesideOtherCalls(_ request: NSFetchRequest<NSFetchRequestResult>) throws -> StoreFetchResult? {
        try fetchRows(request)
    }

    func row(for objectID: NSManagedObjectID) throws -> StoreRow? {
        guard let key = objectID._primaryKey, let entity = mapping.entity(objectID._entity) else { return nil }
        return try read { connection in
            let statement = try connection.statement(entity.table.selectByPrimaryKeySQL)
            statement.bind(key, at: 1)
            defer { statement.reset() }
            guard try statement.step() else { return nil }
            let row = try sqliteStore._decodeRow(statement, of: entity.table, mapping: mapping, values: true)
            return row.objectID._entity._name == objectID._entity._name ? row : nil
        }
    }

    func destinations(of relationship: NSRelationshipDescription, from objectID: NSManagedObjectID) throws
        -> [NSManagedObjectID]
    {
        try destinationRows(of: relationship, from: objectID).map(\.objectID)
    }

    func destinationRows(of relationship: NSRelationshipDescription, from objectID: NSManagedObjectID) throws
        -> [StoreRow]
    {
        try read { connection in
            try sqliteStore._destinationRows(
                of: relationship, from: objectID, connection: connection, mapping: mapping, current: false)
        }
    }

    func fetchDictionaries(_ fetch: StoreDictionaryFetch) throws -> [NSDictionary] {
        try read { connection in try sqliteStore._fetchDictionaries(fetch, connection: connection, mapping: mapping) }
    }

    // MARK: Writing, which generations leave to the store

    func permanentIDs(for objects: [NSManagedObject]) throws -> [NSManagedObjectID] {
        try sqliteStore.permanentIDs(for: objects)
    }

    func save(_ changes: StoreSaveChanges) throws -> StoreSaveResult {
        try sqliteStore.save(changes)
    }
}

extension SQLiteQueryGeneration: PersistentStoreGeneration, PersistentStoreConcurrentFetching,
    PersistentStoreToManyRows, PersistentStoreDictionaryFetching
{}
