import CSQLite
import Foundation

/// The SQLite store (`NSSQLiteStoreType`): Core Data's default store, one SQLite file in Apple's on-disk layout, so
/// that a store written by an Apple device opens here and the reverse.
///
/// ```swift
/// try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url,
///                                    options: [NSSQLitePragmasOption: ["synchronous": "FULL"]])
/// ```
///
/// Options: `NSSQLitePragmasOption` (pragmas by name; `journal_mode` is `WAL` unless given),
/// `NSSQLiteManualVacuumOption` and `NSSQLiteAnalyzeOption` (run `VACUUM`/`ANALYZE` when the store is added),
/// `NSReadOnlyPersistentStoreOption`, `NSPersistentStoreTimeoutOption` (seconds to wait for a locked file).
///
/// A file that is not a store, a damaged or truncated one, or one of a newer format is refused with an error and is
/// not written to: existing files are read through a read-only connection until they are known to be compatible.
/// What a process that stopped while saving left is recovered first, as SQLite does for any program that opens the
/// file: a hot rollback journal is played back, and a write-ahead log completes the main file.
final class NSSQLiteStore: NSPersistentStore, @unchecked Sendable {
    // @unchecked: the state below is used inside the store's serialization only (`NSPersistentStore._serialized`),
    // except the reading connection and its mapping, used under `_readerLock`. It is touched for every row read or
    // written, so without the run-time exclusivity checks of class properties (see `NSManagedObject._values`).
    @exclusivity(unchecked) var _connection: SQLiteConnection?
    @exclusivity(unchecked) var _mapping: SQLiteModelMapping?
    /// The generation of the metadata (`_metadataGeneration`) last read from the file or written to it, so that saves
    /// rewrite it only when it changed.
    var _storedMetadataGeneration: Int?
    /// The file was created by this store object (its schema and metadata are the model's).
    var _createdStore = false

    /// The row cache: a snapshot of each row read or written (in batches of up to a tenth of its capacity, see
    /// `_makeRoomInRowCache(for:)`), with when, for fulfilling faults without SQL while the asking context's
    /// `stalenessInterval` allows. A snapshot shares its values with the objects that hold them, and goes when the
    /// last of those objects gives them up (`forgetUnusedRow(of:)`).
    @exclusivity(unchecked) var _snapshots: ObjectIDDictionary<SQLiteSnapshot> = [:]
    /// To-many destinations loaded ahead of need (prefetching) with their rows, each handed out once.
    @exclusivity(unchecked) var _toManyCache: [SQLiteToManyKey: [StoreRow]] = [:]
    /// The rows of fetches with a `fetchBatchSize` whose values load a batch at a time, the latest fetch last.
    @exclusivity(unchecked) var _batchedRows: [SQLiteBatchedRows] = []
    /// Per entity number: the INSERT statement's columns.
    @exclusivity(unchecked) var _insertPlans: [Int64: SQLiteInsertPlan] = [:]
    /// The query that reads a to-many relationship's destination rows, per relationship.
    @exclusivity(unchecked) var _destinationRowsSQL:
        [ObjectIdentifier: (relationship: NSRelationshipDescription, sql: String)] = [:]
    @exclusivity(unchecked) var _updatePlans: [SQLiteUpdateKey: SQLiteUpdatePlan] = [:]
    /// The SQL of fetches by the shape of their requests (see `SQLiteFetchPlanCache`).
    @exclusivity(unchecked) var _fetchPlans = SQLiteFetchPlanCache()
    var _tracking = SQLiteStoreTracking()  // History and change watching (NSSQLiteStore+History.swift).

    // Reading beside other calls (see NSSQLiteStore+ConcurrentFetching.swift): a second, read-only connection and
    // the mapping it reads with, both used under `_readerLock` only.
    @exclusivity(unchecked) var _reader: SQLiteConnection?
    @exclusivity(unchecked) var _readerMapping: SQLiteModelMapping?
    let _readerLock = NSLock()
    /// Whether the store's journal is a write-ahead log, with which a reader sees the last commit while a writer
    /// writes. Set while the store is opened, before other threads can reach it.
    var _isWriteAheadLogged = false
    /// The query generations handed out (NSSQLiteStore+QueryGenerations.swift), used inside the serialization.
    var _generations = SQLiteQueryGenerations()

    override var type: String { NSSQLiteStoreType }

    required init(
        persistentStoreCoordinator root: NSPersistentStoreCoordinator?, configurationName name: String?, at url: URL,
        options: [AnyHashable: Any]? = nil
    ) {
        super.init(persistentStoreCoordinator: root, configurationName: name, at: url, options: options)
    }

    // MARK: Opening

    override func loadMetadata() throws {
        let url = try Self._fileURL(_url)
        switch StoreLocation(url) {
        case .devNull:
            // Apple's in-memory SQLite store: a database of this store object's own, gone when it is removed.
            try _createStore(at: url)
            return
        case .notAFile(let kind):
            throw StoreLocation.notAFileError(url, kind: kind, action: "open")
        case .missing, .regularFile:
            break
        }
        let path = url.path
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        var size = (attributes?[.size] as? NSNumber)?.intValue ?? 0
        if attributes != nil, size > 0 {
            // A hot journal is rolled back first (a read-only connection could not), then the header is checked.
            size = try Self._prepareToRead(url, size: size, timeout: _timeout, emptyIsNew: true)
        }
        guard attributes != nil, size > 0 else {
            guard !_isReadOnly else {
                throw coreDataError(
                    CocoaError.Code.fileReadNoSuchFile.rawValue,
                    "There is no SQLite store at \(path) to open read-only", userInfo: [NSURLErrorKey: url])
            }
            try _createStore(at: url)
            return
        }
        let companions = SQLiteCompanionFiles(of: url, mainFileSize: size)
        // An existing file is read through a read-only connection, which cannot change it, until it is known to be
        // a store this model can use. It still recovers a write-ahead log: that only rebuilds the `-shm` index.
        let connection = try _open(url, readOnly: true, create: false)
        do {
            if try connection.tableNames().isEmpty {
                connection.close()
                guard !_isReadOnly else {
                    throw coreDataError(
                        NSPersistentStoreOpenError, "The SQLite file at \(path) holds no store to open read-only",
                        userInfo: [NSURLErrorKey: url])
                }
                try _createStore(at: url)
                return
            }
            let (metadata, _) = try SQLiteStoreMetadata.read(connection)
            _metadata = metadata
            _identifier = metadata[NSStoreUUIDKey] as? String
            _storedMetadataGeneration = _metadataGeneration
            _connection = connection
        } catch {
            connection.close()
            throw Self._firstReadError(error, url: url, companions: companions)
        }
    }

    /// Refuses a file that is not a SQLite database, or one shorter than its header says (truncated), before SQLite
    /// opens it. The length is not judged when a write-ahead log holds pages: an interrupted checkpoint leaves a
    /// header that counts pages only the log holds, and SQLite reads them from there.
    static func _checkHeader(of url: URL, size: Int, companions: SQLiteCompanionFiles) throws {
        func damaged(_ reason: String) -> NSError {
            coreDataError(
                CocoaError.Code.fileReadCorruptFile.rawValue,
                "The file at \(url.path) is not a SQLite store: \(reason)",
                userInfo: [NSURLErrorKey: url])
        }
        guard let handle = FileHandle(forReadingAtPath: url.path) else {
            throw coreDataError(
                CocoaError.Code.fileReadNoPermission.rawValue, "The store file at \(url.path) cannot be read",
                userInfo: [NSURLErrorKey: url])
        }
        defer { try? handle.close() }
        let header = [UInt8]((try? handle.read(upToCount: 100)) ?? Data())
        guard header.count == 100 else { throw damaged("it is shorter than a SQLite header") }
        guard header.prefix(16).elementsEqual(Array("SQLite format 3\u{0}".utf8)) else {
            throw damaged("it does not start with the SQLite header")
        }
        func integer(_ offset: Int, _ count: Int) -> Int {
            header[offset..<(offset + count)].reduce(0) { $0 << 8 | Int($1) }
        }
        let pageSize = integer(16, 2) == 1 ? 65_536 : integer(16, 2)
        guard pageSize >= 512, pageSize & (pageSize - 1) == 0 else { throw damaged("its page size is invalid") }
        // The page count is trustworthy when written by the same change as the change counter.
        let pages = integer(28, 4)
        if pages > 0, integer(24, 4) == integer(92, 4), size < pages * pageSize, companions.wal == nil {
            throw damaged("it is truncated (\(size) bytes of \(pages * pageSize))")
        }
    }

    /// Creates a new store's schema and metadata for the coordinator's model.
    func _createStore(at url: URL) throws {
        guard let model = _coordinator?.managedObjectModel else {
            throw coreDataError(
                NSPersistentStoreOpenError, "A SQLite store is created for a coordinator's model; add it to one")
        }
        // Names that cannot become SQL are refused before a file is made.
        let mapping = SQLiteModelMapping(model: model, configuration: _configurationName)
        try mapping.checkIdentifiers(url: url)
        let connection = try _open(url, readOnly: false, create: true)
        do {
            // An entity hierarchy shares one table: one too wide for SQLite would fail with "too many columns".
            let limit = Int(sqlite3_limit(connection.handle, SQLITE_LIMIT_COLUMN, -1))
            if let table = mapping.tables.first(where: { $0.columns.count + 3 > limit }) {
                throw coreDataError(
                    NSSQLiteError,
                    """
                    The store at \(url.path) cannot be created: the entities stored in table \(table.name) (an \
                    entity and its subentities share one table) have \(table.columns.count + 3) columns, and SQLite \
                    allows \(limit); make some of their attributes transient, or split the hierarchy
                    """,
                    userInfo: [NSURLErrorKey: url])
            }
            try connection.execute("PRAGMA auto_vacuum = 2")
            try _applyPragmas(connection)
            let created: Bool = try connection.transaction(immediate: true) {
                // Another connection may have created the store since the file was looked at.
                guard try connection.tableNames().isEmpty else { return false }
                _identifier = UUID().uuidString
                var metadata = _metadataRecordingModel(model)
                metadata["_NSAutoVacuumLevel"] = "2"
                let plist = try SQLiteStoreMetadata.encode(metadata)
                for statement in mapping.createStatements {
                    try connection.execute(statement)
                }
                let insert = try connection.statement(
                    "INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, 0)")
                for entity in mapping.entities {
                    try insert.run([.integer(entity.number), .text(entity.name), .integer(entity.superNumber)])
                }
                try SQLiteStoreMetadata.write(metadata, plist: plist, to: connection)
                try SQLiteModelCache.write(model, to: connection)
                _metadata = metadata
                _storedMetadataGeneration = _metadataGeneration
                return true
            }
            if !created {
                let (metadata, _) = try SQLiteStoreMetadata.read(connection)
                _metadata = metadata
                _identifier = metadata[NSStoreUUIDKey] as? String
                _storedMetadataGeneration = _metadataGeneration
            }
            _createdStore = created
            _mapping = created ? mapping : nil
            _connection = connection
        } catch {
            connection.close()
            throw Self._coreDataError(error, url: url, action: "creating")
        }
    }

    /// Which entities' version hashes differ between the model and the store, for the error message.
    static func _hashDifference(model: NSManagedObjectModel, configuration: String?, metadata: [String: Any]) -> String
    {
        let stored = metadata[NSStoreModelVersionHashesKey] as? [String: Any] ?? [:]
        let entities = model.entities(forConfigurationName: configuration) ?? []
        var differing = entities.compactMap { entity -> String? in
            guard let name = entity.name else { return nil }
            let hash = (stored[name] as? Data) ?? (stored[name] as? NSData).map { Data(referencing: $0) }
            return hash == entity.versionHash ? nil : name
        }
        let names = Set(entities.compactMap(\.name))
        differing += stored.keys.filter { !names.contains($0) }.sorted()
        return "the version hashes of \(differing.isEmpty ? "the model" : differing.joined(separator: ", ")) differ"
    }

    /// Checks the store against the model by version hashes, as Apple's framework does. An incompatible store is
    /// closed untouched.
    override func _checkCompatibility(with model: NSManagedObjectModel, configuration: String?) throws {
        guard let connection = _connection, let url = _url else {
            throw coreDataError(NSPersistentStoreOpenError, "The SQLite store was not opened")
        }
        if !_createdStore, let metadata = _metadata,
            !model.isConfiguration(withName: configuration, compatibleWithStoreMetadata: metadata)
        {
            // The hashes are Apple's own, so a mismatch means the models differ, as Apple's framework decides; the
            // structure is read only to say how, numbered as the store is when its numbering fits the model.
            let numbers = try? SQLiteModelMapping.storeNumbering(
                of: connection, model: model, configuration: configuration, url: url)
            let mapping = SQLiteModelMapping(model: model, configuration: configuration, storeNumbers: numbers)
            let structural = (try? mapping.structuralMismatch(in: connection)) ?? nil
            let problem =
                structural ?? Self._hashDifference(model: model, configuration: configuration, metadata: metadata)
            _close()
            throw Self._incompatibleStoreError(url: url, problem: problem, metadata: metadata)
        }
        let mapping: SQLiteModelMapping
        do {
            if let created = _mapping {
                mapping = created
            } else {
                // An existing store keeps its own entity numbers.
                let numbers = try SQLiteModelMapping.storeNumbering(
                    of: connection, model: model, configuration: configuration, url: url, metadata: _metadata)
                mapping = SQLiteModelMapping(model: model, configuration: configuration, storeNumbers: numbers)
            }
            try mapping.checkIdentifiers(url: url)
        } catch {
            _close()
            throw Self._coreDataError(error, url: url, action: "opening")
        }
        _mapping = mapping
        _fetchPlans.removeAll()
        do {
            if !_isReadOnly, connection.isReadOnly {
                connection.close()
                let writable = try _open(url, readOnly: false, create: false)
                _connection = writable
                try _applyPragmas(writable)
            }
            if !_isReadOnly, let connection = _connection {
                if Self._flag(_options?[NSSQLiteManualVacuumOption]) { try connection.execute("VACUUM") }
                if Self._flag(_options?[NSSQLiteAnalyzeOption]) { try connection.execute("ANALYZE") }
            }
            try _prepareTracking(url)
            _startReading(with: mapping)
        } catch {
            _close()
            throw Self._coreDataError(error, url: url, action: "opening")
        }
    }

    override func willRemove(from coordinator: NSPersistentStoreCoordinator?) {
        _close()
    }

    func _close() {
        _stopWatching()
        _stopReading()
        _closeGenerations()
        _connection?.close()
        _connection = nil
        _discardCaches()
    }

    /// The open connection and the model mapping, or an error if the store was removed or never opened.
    func _openStore() throws -> (SQLiteConnection, SQLiteModelMapping) {
        guard let connection = _connection, let mapping = _mapping else {
            throw coreDataError(
                NSPersistentStoreOperationError,
                "The SQLite store at \(_url?.path ?? "(unknown)") is not open: it was removed from its coordinator")
        }
        return (connection, mapping)
    }

    /// A connection to `url` with the store's functions and timeout.
    func _open(_ url: URL, readOnly: Bool, create: Bool) throws -> SQLiteConnection {
        try Self._connect(url, readOnly: readOnly, create: create, timeout: _timeout)
    }

    static func _connect(_ url: URL, readOnly: Bool, create: Bool, timeout: Double) throws -> SQLiteConnection {
        do {
            let inMemory = StoreLocation.isDevNull(url)
            let connection = try SQLiteConnection(
                path: inMemory ? ":memory:" : url.path, readOnly: readOnly && !inMemory, create: create || inMemory)
            connection.setBusyTimeout(seconds: timeout)
            try SQLiteFunctions.register(on: connection)
            return connection
        } catch {
            throw _coreDataError(error, url: url, action: "opening")
        }
    }

    /// A read-only connection for one look at a file (its metadata, a summary) that leaves nothing beside it: when no
    /// `-wal` file holds changes, the file is read as immutable, so that SQLite creates no `-wal`/`-shm` files.
    static func _inspectionConnection(_ url: URL) throws -> SQLiteConnection {
        let quiet = !FileManager.default.fileExists(atPath: url.path + "-wal")
        do {
            let connection = try SQLiteConnection(path: url.path, readOnly: true, create: false, immutable: quiet)
            connection.setBusyTimeout(seconds: 10)
            return connection
        } catch {
            throw _coreDataError(error, url: url, action: "opening")
        }
    }

    /// Seconds to wait for a locked file (`NSPersistentStoreTimeoutOption`; 240 by default, as
    /// `NSPersistentStoreDescription.timeout`).
    var _timeout: Double {
        switch _options?[NSPersistentStoreTimeoutOption] {
        case let seconds as Double: return seconds
        case let seconds as Int: return Double(seconds)
        case let number as NSNumber: return number.doubleValue
        default: return 240
        }
    }

    /// Sets the journal mode (WAL unless the options name another) and the pragmas of `NSSQLitePragmasOption`.
    func _applyPragmas(_ connection: SQLiteConnection) throws {
        var pragmas: [String: String] = [:]
        let given: [String: Any]
        switch _options?[NSSQLitePragmasOption] {
        case let dictionary as [String: Any]: given = dictionary
        case let dictionary as NSDictionary:
            given = Dictionary(dictionary.compactMap { key, value in (key as? String).map { ($0, value) } }) { a, _ in a
            }
        default: given = [:]
        }
        for (name, value) in given {
            guard name.range(of: "^[A-Za-z_][A-Za-z0-9_]*$", options: .regularExpression) != nil else {
                throw coreDataError(
                    NSPersistentStoreOpenError, "'\(name)' in NSSQLitePragmasOption is not a SQLite pragma name")
            }
            let text: String
            switch value {
            case let number as NSNumber: text = number.stringValue
            case let string as String: text = string
            default: text = String(describing: value)
            }
            // Pragma values cannot be bound; only plain words and numbers are accepted.
            guard text.range(of: "^[A-Za-z0-9_.+-]+$", options: .regularExpression) != nil else {
                throw coreDataError(
                    NSPersistentStoreOpenError,
                    "The value of pragma '\(name)' in NSSQLitePragmasOption must be a number or a single word")
            }
            pragmas[name.lowercased()] = text
        }
        let journal = pragmas.removeValue(forKey: "journal_mode") ?? "WAL"
        try connection.execute("PRAGMA journal_mode = \(journal)")
        // The mode SQLite took: a database in memory, say, keeps its own.
        let mode = try connection.statement("PRAGMA journal_mode")
        _isWriteAheadLogged = try mode.step() && mode.textIfNotNull(0)?.lowercased() == "wal"
        mode.reset()
        if journal.uppercased() == "WAL", pragmas["synchronous"] == nil {
            // WAL with NORMAL synchronisation never corrupts the store and keeps every committed transaction across
            // a process crash; only a power loss may undo the last transactions.
            pragmas["synchronous"] = "NORMAL"
        }
        for (name, value) in pragmas.sorted(by: { $0.key < $1.key }) {
            try connection.execute("PRAGMA \(name) = \(value)")
        }
    }

    static func _flag(_ value: Any?) -> Bool {
        switch value {
        case let flag as Bool: return flag
        case let number as NSNumber: return number.boolValue
        case let string as String: return ["1", "yes", "true"].contains(string.lowercased())
        default: return false
        }
    }

    static func _fileURL(_ url: URL?) throws -> URL {
        guard let url, url.isFileURL, !url.path.isEmpty else {
            throw coreDataError(
                NSPersistentStoreOpenError, "A SQLite store needs a file URL, not \(url?.absoluteString ?? "nil")")
        }
        return url
    }

    /// `error` as the Core Data error callers see.
    static func _coreDataError(_ error: Error, url: URL?, action: String) -> Error {
        switch error {
        case let sqlite as SQLiteError:
            return sqlite.coreDataError(url: url, action: action)
        case SQLiteStoreMetadata.Problem.notAStore:
            return coreDataError(
                NSPersistentStoreIncompatibleSchemaError,
                "The SQLite file at \(url?.path ?? "(unknown)") is not a Core Data store (it has no Z_METADATA table)",
                userInfo: url.map { [NSURLErrorKey: $0] } ?? [:])
        case SQLiteStoreMetadata.Problem.newerFormat(let reason):
            return coreDataError(
                NSPersistentStoreIncompatibleSchemaError,
                "The store at \(url?.path ?? "(unknown)") was written in a newer store format: \(reason)",
                userInfo: url.map { [NSURLErrorKey: $0] } ?? [:])
        case SQLiteStoreMetadata.Problem.damaged(let reason):
            return coreDataError(
                CocoaError.Code.fileReadCorruptFile.rawValue,
                "The store at \(url?.path ?? "(unknown)") is damaged: \(reason)",
                userInfo: url.map { [NSURLErrorKey: $0] } ?? [:])
        default:
            return error
        }
    }

    // MARK: Metadata without a coordinator

    override class func metadataForPersistentStore(with url: URL) throws -> [String: Any] {
        let url = try _fileURL(url)
        // What a crash left is recovered first: read past a hot journal, the metadata could be half of a change.
        let size = try _prepareToRead(
            url, size: try _existingFileSize(url, action: "read the metadata of"), timeout: 240)
        let connection = try _inspectionConnection(url)
        defer { connection.close() }
        do {
            return try SQLiteStoreMetadata.read(connection).metadata
        } catch {
            if let sqlite = error as? SQLiteError, let wal = SQLiteCompanionFiles(of: url, mainFileSize: size).wal {
                throw sqlite.recoveryError(url: url, companion: wal, action: "reading it with the write-ahead log")
            }
            throw _coreDataError(error, url: url, action: "reading the metadata of")
        }
    }

    override class func setMetadata(_ metadata: [String: Any]?, forPersistentStoreAt url: URL) throws {
        let url = try _fileURL(url)
        try _prepareToRead(url, size: try _existingFileSize(url, action: "write the metadata of"), timeout: 240)
        let connection = try _connect(url, readOnly: false, create: false, timeout: 240)
        defer { connection.close() }
        do {
            try connection.transaction(immediate: true) {
                let existing = try SQLiteStoreMetadata.read(connection).metadata
                var updated = metadata ?? [:]
                updated[NSStoreUUIDKey] = updated[NSStoreUUIDKey] ?? existing[NSStoreUUIDKey]
                updated[NSStoreTypeKey] = updated[NSStoreTypeKey] ?? NSSQLiteStoreType
                let plist = try SQLiteStoreMetadata.encode(updated)
                try SQLiteStoreMetadata.write(updated, plist: plist, to: connection)
            }
        } catch {
            throw _coreDataError(error, url: url, action: "writing the metadata of")
        }
    }

    /// The size of the store file at `url`, or the error for a URL where there is none.
    static func _existingFileSize(_ url: URL, action: String) throws -> Int {
        switch StoreLocation(url) {
        case .regularFile(let size):
            return size
        case .missing:
            throw coreDataError(
                CocoaError.Code.fileReadNoSuchFile.rawValue, "There is no SQLite store at \(url.path)",
                userInfo: [NSURLErrorKey: url])
        case .devNull:
            throw coreDataError(
                CocoaError.Code.fileReadNoSuchFile.rawValue,
                "Cannot \(action) a store at /dev/null: such a store lives in memory, in the coordinator that added it",
                userInfo: [NSURLErrorKey: url])
        case .notAFile(let kind):
            throw StoreLocation.notAFileError(url, kind: kind, action: action)
        }
    }

    // MARK: Migration (see NSSQLiteStore+Migration.swift)

    override class func _migrateInPlace(
        at url: URL, configuration: String?, options: [AnyHashable: Any]?, sourceModel: NSManagedObjectModel,
        destinationModel: NSManagedObjectModel, mapping: NSMappingModel
    ) throws -> Bool {
        try _migrateStoreInPlace(
            at: url, configuration: configuration, options: options, sourceModel: sourceModel,
            destinationModel: destinationModel, mapping: mapping)
    }

    override class func _migrateInferred(
        from sourceURL: URL, options sourceOptions: [AnyHashable: Any]?, to destinationURL: URL,
        options destinationOptions: [AnyHashable: Any]?, sourceModel: NSManagedObjectModel,
        destinationModel: NSManagedObjectModel, mapping: NSMappingModel
    ) throws -> Bool {
        try _migrateCopyInPlace(
            from: sourceURL, to: destinationURL, options: destinationOptions, sourceModel: sourceModel,
            destinationModel: destinationModel, mapping: mapping)
    }

    override class func _cachedModel(at url: URL) -> NSManagedObjectModel? {
        _readCachedModel(at: url)
    }

    // MARK: Destroying and replacing (NSSQLiteStore+Files.swift)

    override class func _destroyStore(at url: URL) throws {
        try _emptyStore(at: url)
    }

    override class func _replaceStore(at destination: URL, withStoreAt source: URL) throws {
        try _copyStore(at: source, over: destination)
    }
}
