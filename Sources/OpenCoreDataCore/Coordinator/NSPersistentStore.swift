import Synchronization

/// The SQLite store type: Core Data's default, one file in Apple's on-disk layout.
public let NSSQLiteStoreType = "SQLite"
/// The in-memory store type: nothing is written anywhere.
public let NSInMemoryStoreType = "InMemory"
/// The binary store type: an atomic store written as one binary file — in OpenCoreData's own documented format, not
/// Apple's (see `NSBinaryStore`); share files with Apple platforms through the SQLite store.
public let NSBinaryStoreType = "Binary"
/// The XML store type: an atomic store written as one XML file.
public let NSXMLStoreType = "XML"

/// The option to open a store read-only.
public let NSReadOnlyPersistentStoreOption = "NSReadOnlyPersistentStoreOption"
/// The option giving a store's timeout in seconds when its file is busy.
public let NSPersistentStoreTimeoutOption = "NSPersistentStoreTimeoutOption"
/// The option that migrates a store whose model changed, when the coordinator opens it.
public let NSMigratePersistentStoresAutomaticallyOption = "NSMigratePersistentStoresAutomaticallyOption"
/// The option that lets the coordinator infer the mapping model of that migration.
public let NSInferMappingModelAutomaticallyOption = "NSInferMappingModelAutomaticallyOption"
/// The option that records persistent history.
public let NSPersistentHistoryTrackingKey = "NSPersistentHistoryTrackingKey"
/// The option giving the most connections a store that handles requests concurrently may use at once (an `NSNumber`).
public let NSPersistentStoreConnectionPoolMaxSizeKey = "NSPersistentStoreConnectionPoolMaxSizeKey"
/// The option that posts remote-change notifications.
public let NSPersistentStoreRemoteChangeNotificationPostOptionKey =
    "NSPersistentStoreRemoteChangeNotificationOptionKey"

/// A persistent store: where a coordinator keeps objects. Subclasses implement a storage format; the
/// coordinator creates them from their registered type.
open class NSPersistentStore: NSObject, @unchecked Sendable {
    // @unchecked: the coordinator calls a store only inside `_serialized` (one call at a time per store, `_storeLock`);
    // what may be read beside such a call (`_cachedObjectIDReference`, deferred notices) is behind a `LockedState` or
    // an `Atomic`; the rest is set while the store is added, before other threads can reach it.
    /// The Swift-style store type.
    public struct StoreType: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        public static let sqlite = StoreType(rawValue: NSSQLiteStoreType)
        public static let inMemory = StoreType(rawValue: NSInMemoryStoreType)
        public static let binary = StoreType(rawValue: NSBinaryStoreType)
        public static let xml = StoreType(rawValue: NSXMLStoreType)
    }

    weak var _coordinator: NSPersistentStoreCoordinator?
    var _configurationName: String
    var _url: URL?
    var _options: [AnyHashable: Any]?
    var _identifier: String?
    var _metadata: [String: Any]? {
        didSet { _metadataGeneration &+= 1 }
    }
    /// How many times the metadata has been set or changed: a store that keeps the generation it last read or wrote
    /// knows without comparing dictionaries whether a save has metadata to write. (Comparing them, bridged to
    /// `NSDictionary` with the model's version hashes, cost a save of one changed object five times its other work.)
    package private(set) var _metadataGeneration = 0
    /// Metadata set through the coordinator and not yet saved: the next save of a context writes it, even if the
    /// context has no changed objects. Atomic, so that every save can look at every store's flag without waiting for
    /// a store that is busy.
    let _metadataNeedsSave = Atomic<Bool>(false)
    var _isReadOnly: Bool
    /// Serializes the coordinator's calls into the store (see `_serialized(_:)`).
    let _storeLock = NSRecursiveLock()
    /// The type string the coordinator created the store for (`addPersistentStore(ofType:…)`).
    var _addedType: String?
    /// What object IDs of this store hold (see `_objectIDReference`): behind a lock of its own, as a fetch that runs
    /// beside another call into the store (`_serialized(_:orBeside:)`) reads it while that call may make a new one.
    /// Every reference made is kept with the store, so that none of their addresses is reused while it lives.
    private let _objectIDReferenceCache = LockedState<(last: ObjectIDStoreReference?, made: [ObjectIDStoreReference])>(
        (nil, []))
    /// The address of the reference last made (0 before the first), for `_isCurrentObjectIDReference(_:)`.
    private let _objectIDReferenceAddress = Atomic<UInt>(0)

    /// The reference the store's object IDs hold, as last made; `nil` before the first.
    var _cachedObjectIDReference: ObjectIDStoreReference? { _objectIDReferenceCache.withLock { $0.last } }

    /// Whether `reference` is the one the store's object IDs are now made with: asked for every object that goes
    /// away, so without a lock. An address compared is never another object's, as every reference made lives as
    /// long as the store; a stale read while a new one is made answers `false`, and the caller asks the slow way.
    @inline(__always)
    func _isCurrentObjectIDReference(_ reference: ObjectIDStoreReference) -> Bool {
        _objectIDReferenceAddress.load(ordering: .relaxed) == UInt(bitPattern: ObjectIdentifier(reference))
    }

    /// Creates a store for `coordinator`. The coordinator calls this for the registered class of a store type.
    public required init(
        persistentStoreCoordinator root: NSPersistentStoreCoordinator?, configurationName name: String?, at url: URL,
        options: [AnyHashable: Any]? = nil
    ) {
        _coordinator = root
        _configurationName = name ?? "PF_DEFAULT_CONFIGURATION_NAME"
        _url = url
        _options = options
        _isReadOnly = (options?[NSReadOnlyPersistentStoreOption] as? Bool) ?? false
        super.init()
    }

    /// The reference the store's new object IDs hold: made again only when the identifier changes, so that IDs made
    /// before keep naming the store as it was.
    var _objectIDReference: ObjectIDStoreReference {
        let identifier = self.identifier
        return _objectIDReferenceCache.withLock { cache in
            if let last = cache.last, last.identifier == identifier { return last }
            let made = ObjectIDStoreReference(store: self, identifier: identifier)
            cache.last = made
            cache.made.append(made)
            _objectIDReferenceAddress.store(UInt(bitPattern: ObjectIdentifier(made)), ordering: .releasing)
            return made
        }
    }

    /// Runs `body` with the store to itself: the coordinator's calls into one store never overlap, while calls into
    /// different stores do (a slow store holds up only its own callers). Recursive, as a store's methods may call back
    /// into the coordinator for the same store (an incremental store registering the objects it fetches).
    func _serialized<T>(_ body: () throws -> T) rethrows -> T {
        _storeLock.lock()
        defer { _storeLock.unlock() }
        if _hasDeferredNotices.load(ordering: .acquiring) { _deliverDeferredNotices() }
        return try body()
    }

    /// Runs `body` with the store to itself, as `_serialized(_:)` does, unless another thread has the store: then
    /// `beside` may answer without it (a fetch reading what was last committed, beside a save), and `body` waits its
    /// turn only if `beside` declines (returns `nil`).
    func _serialized<T>(_ body: () throws -> T, orBeside beside: () throws -> T?) rethrows -> T {
        if _storeLock.try() {
            defer { _storeLock.unlock() }
            if _hasDeferredNotices.load(ordering: .acquiring) { _deliverDeferredNotices() }
            return try body()
        }
        if let answer = try beside() { return answer }
        return try _serialized(body)
    }

    /// Set when an incremental store has unregistration notices that could not be delivered at once (see
    /// `NSIncrementalStore._tellUnregistered(_:)`): the next call into the store delivers them first.
    let _hasDeferredNotices = Atomic<Bool>(false)

    func _deliverDeferredNotices() {}

    /// Runs `body` with every store of `stores` to itself, taking them in one order (by identity) wherever several
    /// are taken at once, so that two callers holding some of them cannot wait for each other.
    static func _serialized<T>(_ stores: [NSPersistentStore], _ body: () throws -> T) rethrows -> T {
        let ordered = stores.sorted { ObjectIdentifier($0) < ObjectIdentifier($1) }
        for store in ordered { store._storeLock.lock() }
        defer { for store in ordered.reversed() { store._storeLock.unlock() } }
        return try body()
    }

    /// The metadata of the store at `url`, read without adding it to a coordinator.
    open class func metadataForPersistentStore(with url: URL) throws -> [String: Any] {
        throw coreDataError(
            NSPersistentStoreInvalidTypeError,
            "\(String(describing: self)) does not read metadata from files; use a store class that does")
    }

    /// Writes metadata into the store at `url`.
    open class func setMetadata(_ metadata: [String: Any]?, forPersistentStoreAt url: URL) throws {
        throw coreDataError(
            NSPersistentStoreInvalidTypeError,
            "\(String(describing: self)) does not write metadata to files; use a store class that does")
    }

    /// The coordinator the store belongs to.
    open var persistentStoreCoordinator: NSPersistentStoreCoordinator? { _coordinator }

    /// The name of the configuration whose entities the store holds.
    open var configurationName: String { _configurationName }

    /// The options the store was added with.
    open var options: [AnyHashable: Any]? { _options }

    /// Where the store lives.
    open var url: URL? {
        get { _url }
        set { _url = newValue }
    }

    /// The store's unique identifier (`NSStoreUUID`), the host part of its objects' URIs.
    open var identifier: String! {
        get { _identifier ?? (_metadata?[NSStoreUUIDKey] as? String) }
        set { _identifier = newValue }
    }

    /// The store's type (`NSSQLiteStoreType`…).
    open var type: String { "" }

    /// Whether the store refuses writes.
    open var isReadOnly: Bool {
        get { _isReadOnly }
        set { _isReadOnly = newValue }
    }

    /// The store's metadata: its type, UUID, the version hashes of its model and the user's own keys.
    open var metadata: [String: Any]! {
        get { _metadata }
        set {
            _metadata = newValue
            if let uuid = newValue?[NSStoreUUIDKey] as? String { _identifier = uuid }
        }
    }

    /// Loads the store's metadata (and, for stores that do so, its contents). Subclasses override.
    open func loadMetadata() throws {
        if _metadata == nil {
            let uuid = _identifier ?? UUID().uuidString
            _metadata = [NSStoreTypeKey: type, NSStoreUUIDKey: uuid]
            _identifier = uuid
        }
    }

    /// Called after the store has been added to a coordinator.
    open func didAdd(to coordinator: NSPersistentStoreCoordinator) {}

    /// Called before the store is removed from its coordinator.
    open func willRemove(from coordinator: NSPersistentStoreCoordinator?) {}

    /// The store's metadata with the model's version information, as a coordinator writes it.
    func _metadataRecordingModel(_ model: NSManagedObjectModel) -> [String: Any] {
        var metadata = _metadata ?? [:]
        metadata[NSStoreTypeKey] = type
        metadata[NSStoreUUIDKey] = identifier ?? UUID().uuidString
        metadata[NSStoreModelVersionHashesKey] = model.entityVersionHashesByName
        metadata[NSStoreModelVersionIdentifiersKey] = Array(model.versionIdentifiers)
        metadata[NSStoreModelVersionHashesVersionKey] = 3
        metadata[NSPersistenceFrameworkVersionKey] = OpenCoreDataFrameworkVersion
        return metadata
    }

    /// Checks that the store holds data of `model`: the entity version hashes recorded in its metadata must be
    /// the model's. A new store (no hashes yet) takes the model's.
    // MARK: Store-type hooks

    func _checkCompatibility(with model: NSManagedObjectModel, configuration: String?) throws {
        guard let metadata = _metadata, metadata[NSStoreModelVersionHashesKey] != nil else {
            _metadata = _metadataRecordingModel(model)
            return
        }
        guard model.isConfiguration(withName: configuration, compatibleWithStoreMetadata: metadata) else {
            throw Self._incompatibleStoreError(url: _url, problem: nil, metadata: metadata)
        }
    }

    /// Apple's error for a store that the model cannot open (`NSPersistentStoreIncompatibleVersionHashError`):
    /// `userInfo` holds the store's metadata under `metadata` (its entity version hashes under
    /// `NSStoreModelVersionHashesKey`) and Apple's `reason`; `problem` says which entities differ.
    static func _incompatibleStoreError(url: URL?, problem: String?, metadata: [String: Any]) -> NSError {
        let reason = "The model used to open the store is incompatible with the one used to create the store"
        var info: [String: Any] = ["metadata": metadata, "reason": reason]
        if let url { info[NSURLErrorKey] = url }
        return coreDataError(
            NSPersistentStoreIncompatibleVersionHashError,
            """
            \(reason) at \(url?.path ?? "(in memory)")\(problem.map { ": " + $0 } ?? ""). Migrate the store or open \
            it with its own model
            """,
            userInfo: info)
    }

    /// Deletes the store files at `url`, for `NSPersistentStoreCoordinator.destroyPersistentStore(at:ofType:options:)`.
    /// Stores with companion files (SQLite's `-wal`, `-shm`) override, and so may stores outside the framework that
    /// keep their data elsewhere (the PostgreSQL store drops its schema): not Apple API, hence the underscore.
    open class func _destroyStore(at url: URL) throws {
        guard url.isFileURL else { return }
        switch StoreLocation(url) {
        case .devNull, .missing:
            return
        case .notAFile(let kind):
            throw StoreLocation.notAFileError(url, kind: kind, action: "destroy")
        case .regularFile:
            try FileManager.default.removeItem(at: url)
        }
    }

    /// Replaces the store at `destination` by a copy of `source`.
    class func _replaceStore(at destination: URL, withStoreAt source: URL) throws {
        for (url, action) in [(source, "copy"), (destination, "replace")] {
            switch StoreLocation(url) {
            case .regularFile, .missing: continue
            case .devNull: throw StoreLocation.notAFileError(url, kind: "/dev/null", action: action)
            case .notAFile(let kind): throw StoreLocation.notAFileError(url, kind: kind, action: action)
            }
        }
        if case .regularFile = StoreLocation(destination) {
            try FileManager.default.removeItem(at: destination)
        }
        try FileManager.default.copyItem(at: source, to: destination)
    }

    /// Migrates the store at `sourceURL` into a store at `destinationURL` with an inferred mapping model, the way this
    /// store type can do it without loading objects (the SQLite store: a copy of the file migrated in place with
    /// SQL). Returns `false` when the store type has no such way, and the migration manager migrates object by
    /// object.
    class func _migrateInferred(
        from sourceURL: URL, options sourceOptions: [AnyHashable: Any]?, to destinationURL: URL,
        options destinationOptions: [AnyHashable: Any]?, sourceModel: NSManagedObjectModel,
        destinationModel: NSManagedObjectModel, mapping: NSMappingModel
    ) throws -> Bool {
        false
    }

    /// Migrates the store at `url` in place with an inferred mapping model, if this store type can (the SQLite
    /// store, with SQL); `false` when it cannot, having changed nothing. `open` (underscored, not Apple API) so that a
    /// store in another module can migrate itself (the PostgreSQL store, with SQL in one transaction).
    open class func _migrateInPlace(
        at url: URL, configuration: String?, options: [AnyHashable: Any]?, sourceModel: NSManagedObjectModel,
        destinationModel: NSManagedObjectModel, mapping: NSMappingModel
    ) throws -> Bool {
        false
    }

    /// The model the store at `url` keeps a copy of (the SQLite store's `Z_MODELCACHE`), if any: migration's source
    /// model when no bundle has it. `open` for stores in other modules, as `_migrateInPlace` is.
    open class func _cachedModel(at url: URL) -> NSManagedObjectModel? {
        nil
    }

    /// Where a migration object by object writes the store that then takes the place of the store at `url`: `nil`
    /// for a hidden file beside it (file stores). A store elsewhere names a place of its own kind (the PostgreSQL
    /// store: another schema); what the migration leaves there is removed with `_destroyStore(at:)`.
    open class func _migrationStagingURL(for url: URL) -> URL? {
        nil
    }

    /// Puts the store a migration wrote at `staging` in the place of the store at `destination`. File stores copy it
    /// (the staging file is removed afterwards); the PostgreSQL store swaps the schemas in one transaction.
    open class func _replaceStore(at destination: URL, withMigratedStoreAt staging: URL) throws {
        try _replaceStore(at: destination, withStoreAt: staging)
    }

    open override var description: String {
        "<\(String(describing: Swift.type(of: self))): \(Unmanaged.passUnretained(self).toOpaque())> (URL: "
            + "\(_url?.absoluteString ?? "(null)"))"
    }
}

/// The framework version recorded in store metadata (`NSPersistenceFrameworkVersion`): the version of Apple's
/// Core Data whose behaviour and formats this release follows.
let OpenCoreDataFrameworkVersion = 1335
