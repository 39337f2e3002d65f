import Synchronization

/// Connects contexts to persistent stores: it owns the stores, routes fetches and saves to them, and checks
/// that each store matches the model.
///
/// ```swift
/// let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
/// try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
/// ```
open class NSPersistentStoreCoordinator: NSObject, @unchecked Sendable {
    // @unchecked: its own state (stores, name, root contexts) changes only under `_lock`; calls into a store are
    // serialized by that store (`NSPersistentStore._serialized`); the model is immutable once the coordinator has it.
    // Apple's class is Sendable too.
    let _managedObjectModel: NSManagedObjectModel
    var _stores: [NSPersistentStore] = [] {
        didSet {
            _rowCaches = _stores.compactMap { store in
                (store as? PersistentStoreRowCaching).map { (store, type(of: $0)) }
            }
            _onlyStoreRoute = _stores.count == 1 ? StoreRoute(_stores[0]) : nil
        }
    }
    /// The coordinator's store when it has exactly one, holding every entity of the model, and fetches reach it
    /// directly: worked out when the stores change, instead of on every fetch (filtering the stores into a new list,
    /// casting the store to a backend and that to a concurrent one — a few hundred instructions and several atomic
    /// reference counts of a store, which its objects' IDs reference weakly, on every lookup).
    @exclusivity(unchecked) var _onlyStoreRoute: StoreRoute?
    /// The stores with a row cache, told of every object that goes away: kept apart from `_stores`, each store beside
    /// its type, so that those calls neither cast nor retain a store, nor check exclusive access.
    @exclusivity(unchecked) var _rowCaches: [(store: NSPersistentStore, cache: any PersistentStoreRowCaching.Type)] = []
    /// Guards the coordinator's own state (its stores, name and root contexts). Calls into a store are serialized
    /// by the store (`NSPersistentStore._serialized`), not by this lock, so that a slow store holds up no other.
    let _lock = NSRecursiveLock()
    var _name: String?
    /// Contexts directly on this coordinator, for merging saves into those that ask for it.
    var _rootContexts: [WeakContextReference] = []
    /// The query generation last made, which contexts pinned before the next commit share (under `_lock`).
    weak var _latestQueryGeneration: QueryGeneration?

    /// A coordinator for `model`, which becomes immutable.
    ///
    /// `required`, so that `self.init(managedObjectModel:)` works in class methods of extensions, as Objective-C
    /// initializers allow on Apple platforms. A subclass that declares designated initializers of its own writes
    /// `required override init(managedObjectModel:)`.
    public required init(managedObjectModel model: NSManagedObjectModel) {
        _managedObjectModel = model
        super.init()
        model._freeze()
        ManagedObjectClassRegistry.noteModelInUse(model)
    }

    /// The coordinator's model.
    open var managedObjectModel: NSManagedObjectModel { _managedObjectModel }

    /// The coordinator's stores, in the order they were added.
    open var persistentStores: [NSPersistentStore] { _withLock { _stores } }

    /// A name for the coordinator, for debugging.
    open var name: String? {
        get { _withLock { _name } }
        set { _withLock { _name = newValue } }
    }

    func _withLock<T>(_ body: () throws -> T) rethrows -> T {
        _lock.lock()
        defer { _lock.unlock() }
        return try body()
    }

    // MARK: Store types

    private static let registeredTypes = LockedState<[String: NSPersistentStore.Type]>([
        NSInMemoryStoreType: NSInMemoryStore.self,
        NSSQLiteStoreType: NSSQLiteStore.self,
        NSBinaryStoreType: NSBinaryStore.self,
    ])

    /// Registers a store class for a store type, so that `addPersistentStore(ofType:…)` can create it. `nil`
    /// removes the registration; registering the same class again does nothing.
    ///
    /// A type string names one class: registering another class for a type that has one stops with a message naming
    /// both (two packages choosing the same type string would otherwise open each other's stores with the wrong
    /// class). To replace a registration, remove it with `nil` first.
    open class func registerStoreClass(_ storeClass: AnyClass?, forStoreType storeType: String) {
        guard let storeClass else {
            registeredTypes.withLock { $0[storeType] = nil }
            return
        }
        guard let persistentStoreClass = storeClass as? NSPersistentStore.Type else {
            preconditionFailure(
                "registerStoreClass(_:forStoreType:): \(storeClass) is not a subclass of NSPersistentStore")
        }
        let existing = registeredTypes.withLock { types -> NSPersistentStore.Type? in
            if let existing = types[storeType], existing != persistentStoreClass { return existing }
            types[storeType] = persistentStoreClass
            return nil
        }
        if let existing {
            preconditionFailure(
                """
                registerStoreClass(_:forStoreType:): the store type '\(storeType)' is already registered for \
                \(existing), so it cannot name \(persistentStoreClass) too; choose another type string, or remove \
                the registration with registerStoreClass(nil, forStoreType: "\(storeType)") first
                """)
        }
    }

    /// Registers a store class for a store type (Swift-style spelling of `registerStoreClass(_:forStoreType:)`).
    open class func registerStoreClass(_ storeClass: AnyClass?, type: NSPersistentStore.StoreType) {
        registerStoreClass(storeClass, forStoreType: type.rawValue)
    }

    /// The registered store types and their classes.
    open class var registeredStoreTypes: [String: Any] {
        registeredTypes.withLock { types in types.mapValues { $0 as Any } }
    }

    static func storeClass(forType type: String) -> NSPersistentStore.Type? {
        registeredTypes.withLock { $0[type] }
    }

    // MARK: Adding and removing stores

    /// Adds a store of `storeType` at `storeURL` (ignored for the in-memory store) holding the entities of
    /// `configuration`. The store is opened and checked against the model; an incompatible store throws
    /// `NSPersistentStoreIncompatibleVersionHashError` and is left untouched.
    @discardableResult
    open func addPersistentStore(
        ofType storeType: String, configurationName configuration: String?, at storeURL: URL?,
        options: [AnyHashable: Any]? = nil
    ) throws -> NSPersistentStore {
        guard let storeClass = NSPersistentStoreCoordinator.storeClass(forType: storeType) else {
            throw coreDataError(
                NSPersistentStoreInvalidTypeError,
                "Unknown store type '\(storeType)'; register its class with registerStoreClass(_:forStoreType:)",
                userInfo: [NSStoreTypeKey: storeType])
        }
        if let configuration, configuration != "PF_DEFAULT_CONFIGURATION_NAME",
            _managedObjectModel.entities(forConfigurationName: configuration) == nil
        {
            throw coreDataError(
                NSPersistentStoreInvalidTypeError,
                "The model has no configuration named '\(configuration)'",
                userInfo: ["configuration": configuration])
        }
        let fileBased =
            storeClass is NSSQLiteStore.Type
            || (storeClass is NSAtomicStore.Type && !(storeClass is NSInMemoryStore.Type))
        if fileBased {
            guard storeURL != nil else {
                throw coreDataError(
                    NSPersistentStoreOpenError,
                    """
                    A store of type \(storeType) needs a file URL; for a SQLite store that lives in memory, give \
                    URL(fileURLWithPath: "/dev/null")
                    """)
            }
            if storeClass is NSAtomicStore.Type, StoreLocation.isDevNull(storeURL) {
                throw coreDataError(
                    NSPersistentStoreOpenError,
                    """
                    /dev/null keeps a store in memory only for NSSQLiteStoreType; a store of type \(storeType) would \
                    read and write the device. Use NSInMemoryStoreType, or a file URL
                    """,
                    userInfo: [NSURLErrorKey: storeURL as Any, NSStoreTypeKey: storeType])
            }
        }
        let url = storeURL ?? URL(fileURLWithPath: "/dev/null")
        func checkNotAdded() throws {
            if storeURL != nil, storeType != NSInMemoryStoreType, !StoreLocation.isDevNull(url),
                _stores.contains(where: { $0._url?.standardizedFileURL == url.standardizedFileURL })
            {
                throw coreDataError(
                    NSPersistentStoreOperationError, "The store at \(url.path) has already been added",
                    userInfo: [NSURLErrorKey: url])
            }
        }
        try _withLock(checkNotAdded)
        // Opened without the coordinator's lock: opening (and migrating) a store may take long, and holds up no other
        // store meanwhile.
        let store = try {
            if storeURL != nil, !StoreLocation.isDevNull(url),
                Self._isSet(options?[NSMigratePersistentStoresAutomaticallyOption])
                    || options?[NSPersistentStoreStagedMigrationManagerOptionKey] != nil
            {
                try _migrateStoreIfNeeded(
                    storeClass, type: storeType, at: url, configuration: configuration, options: options)
            }
            let store = storeClass.init(
                persistentStoreCoordinator: self, configurationName: configuration, at: url, options: options)
            store._addedType = storeType
            try store.loadMetadata()
            try (store as? NSIncrementalStore)?._checkLoadedMetadata()
            try store._checkCompatibility(with: _managedObjectModel, configuration: configuration)
            return store
        }()
        _postStoresChange(.NSPersistentStoreCoordinatorStoresWillChange, added: [store])
        try _withLock {
            do {
                try checkNotAdded()
            } catch {
                // Another thread added a store at the same place while this one was opened.
                store.willRemove(from: self)
                throw error
            }
            _stores.append(store)
            store.didAdd(to: self)
        }
        _postStoresChange(.NSPersistentStoreCoordinatorStoresDidChange, added: [store])
        return store
    }

    /// Adds a store of `type` (Swift-style spelling of `addPersistentStore(ofType:…)`).
    @discardableResult
    open func addPersistentStore(
        type: NSPersistentStore.StoreType, configuration: String? = nil, at storeURL: URL,
        options: [AnyHashable: Any]? = nil
    ) throws -> NSPersistentStore {
        try addPersistentStore(
            ofType: type.rawValue, configurationName: configuration, at: storeURL, options: options)
    }

    /// Adds the store a description describes and calls `block` with the description and the error, if any.
    open func addPersistentStore(
        with storeDescription: NSPersistentStoreDescription,
        completionHandler block: @escaping (NSPersistentStoreDescription, (any Error)?) -> Void
    ) {
        let add = { [self] in
            do {
                try addPersistentStore(
                    ofType: storeDescription.type, configurationName: storeDescription.configuration,
                    at: storeDescription.url, options: storeDescription._effectiveOptions)
                block(storeDescription, nil)
            } catch {
                block(storeDescription, error)
            }
        }
        if storeDescription.shouldAddStoreAsynchronously {
            let box = UncheckedSendable(add)
            DispatchQueue.global().async { box.value() }
        } else {
            add()
        }
    }

    /// Removes a store from the coordinator.
    open func remove(_ store: NSPersistentStore) throws {
        guard persistentStores.contains(where: { $0 === store }) else {
            throw coreDataError(NSPersistentStoreOperationError, "The store \(store) is not part of this coordinator")
        }
        NotificationCenter.default.post(name: .NSPersistentStoreCoordinatorWillRemoveStore, object: self)
        _postStoresChange(.NSPersistentStoreCoordinatorStoresWillChange, removed: [store])
        // Waits for the calls into the store under way to finish.
        try store._serialized {
            try _withLock {
                guard let index = _stores.firstIndex(where: { $0 === store }) else {
                    throw coreDataError(
                        NSPersistentStoreOperationError,
                        "The store \(store) was removed from this coordinator meanwhile")
                }
                store.willRemove(from: self)
                _stores.remove(at: index)
                store._coordinator = nil
            }
        }
        _postStoresChange(.NSPersistentStoreCoordinatorStoresDidChange, removed: [store])
    }

    /// The store at `URL`.
    open func persistentStore(for URL: URL) -> NSPersistentStore? {
        _withLock { _stores.first { $0._url?.standardizedFileURL == URL.standardizedFileURL } }
    }

    /// The URL of a store.
    open func url(for store: NSPersistentStore) -> URL {
        store._url ?? URL(fileURLWithPath: "/dev/null")
    }

    /// Changes the URL of a store (for atomic stores, where the next save writes).
    @discardableResult
    open func setURL(_ url: URL, for store: NSPersistentStore) -> Bool {
        _withLock {
            guard _stores.contains(where: { $0 === store }) else { return false }
            store._url = url
            return true
        }
    }

    // MARK: Metadata

    /// The metadata of a store of this coordinator.
    open func metadata(for store: NSPersistentStore) -> [String: Any] {
        store._serialized { store.metadata ?? [:] }
    }

    /// Sets the metadata of a store; it is written with the next save of a context of this coordinator, whether
    /// or not that save has objects for the store.
    open func setMetadata(_ metadata: [String: Any]?, for store: NSPersistentStore) {
        store._serialized {
            store.metadata = metadata ?? [:]
            store._metadataNeedsSave.store(!store.isReadOnly, ordering: .releasing)
        }
    }

    /// Whether a store has metadata set and not yet saved.
    var _hasUnsavedMetadata: Bool {
        persistentStores.contains { $0._metadataNeedsSave.load(ordering: .acquiring) }
    }

    /// The metadata of the store of `storeType` at `url`, read without adding the store.
    open class func metadataForPersistentStore(
        ofType storeType: String, at url: URL, options: [AnyHashable: Any]? = nil
    ) throws -> [String: Any] {
        guard let storeClass = storeClass(forType: storeType) else {
            throw coreDataError(NSPersistentStoreInvalidTypeError, "Unknown store type '\(storeType)'")
        }
        return try storeClass.metadataForPersistentStore(with: url)
    }

    /// The metadata of the store of `type` at `url` (Swift-style spelling of
    /// `metadataForPersistentStore(ofType:at:options:)`).
    open class func metadataForPersistentStore(
        type: NSPersistentStore.StoreType, at url: URL, options: [AnyHashable: Any]? = nil
    ) throws -> [String: Any] {
        try metadataForPersistentStore(ofType: type.rawValue, at: url, options: options)
    }

    /// Writes metadata into the store of `type` at `url` (Swift-style spelling of
    /// `setMetadata(_:forPersistentStoreOfType:at:options:)`).
    open class func setMetadata(
        _ metadata: [String: Any]?, type: NSPersistentStore.StoreType, at url: URL, options: [AnyHashable: Any]? = nil
    ) throws {
        try setMetadata(metadata, forPersistentStoreOfType: type.rawValue, at: url, options: options)
    }

    /// Writes metadata into the store of `storeType` at `url` without adding the store.
    open class func setMetadata(
        _ metadata: [String: Any]?, forPersistentStoreOfType storeType: String, at url: URL,
        options: [AnyHashable: Any]? = nil
    ) throws {
        guard let storeClass = storeClass(forType: storeType) else {
            throw coreDataError(NSPersistentStoreInvalidTypeError, "Unknown store type '\(storeType)'")
        }
        try storeClass.setMetadata(metadata, forPersistentStoreAt: url)
    }

    // MARK: Object IDs

    /// The object ID a URI from `NSManagedObjectID.uriRepresentation()` names, if it belongs to a store of this
    /// coordinator; `nil` otherwise (temporary IDs included).
    open func managedObjectID(forURIRepresentation url: URL) -> NSManagedObjectID? {
        guard url.scheme == "x-coredata", let host = url.host, !host.isEmpty else { return nil }
        let components = url.path.split(separator: "/", omittingEmptySubsequences: true)
        guard components.count == 2, components[1].hasPrefix("p") else { return nil }
        return _withLock {
            guard let store = _stores.first(where: { $0.identifier == host }),
                let entity = _managedObjectModel.entitiesByName[String(components[0])]
            else { return nil }
            let key = String(components[1].dropFirst()).removingPercentEncoding ?? ""
            if let number = Int64(key) {
                return NSManagedObjectID(entity: entity, store: store, reference: .primaryKey(number))
            }
            return NSManagedObjectID(entity: entity, store: store, reference: .object(AnyHashable(key)))
        }
    }

    // MARK: Destroying and replacing stores

    /// Deletes the store of `storeType` at `url` and its companion files, making sure no coordinator of this
    /// process still uses it.
    open func destroyPersistentStore(at url: URL, ofType storeType: String, options: [AnyHashable: Any]? = nil)
        throws
    {
        if let store = persistentStore(for: url) { try remove(store) }
        guard let storeClass = NSPersistentStoreCoordinator.storeClass(forType: storeType) else {
            throw coreDataError(NSPersistentStoreInvalidTypeError, "Unknown store type '\(storeType)'")
        }
        try storeClass._destroyStore(at: url)
    }

    /// Deletes the store of `type` at `url` (Swift-style spelling).
    open func destroyPersistentStore(
        at url: URL, type: NSPersistentStore.StoreType, options: [AnyHashable: Any]? = nil
    ) throws {
        try destroyPersistentStore(at: url, ofType: type.rawValue, options: options)
    }

    /// Replaces the store at `destinationURL` with a copy of the store at `sourceURL`.
    open func replacePersistentStore(
        at destinationURL: URL, destinationOptions: [AnyHashable: Any]? = nil, withPersistentStoreFrom sourceURL: URL,
        sourceOptions: [AnyHashable: Any]? = nil, ofType storeType: String
    ) throws {
        guard let storeClass = NSPersistentStoreCoordinator.storeClass(forType: storeType) else {
            throw coreDataError(NSPersistentStoreInvalidTypeError, "Unknown store type '\(storeType)'")
        }
        try storeClass._replaceStore(at: destinationURL, withStoreAt: sourceURL)
    }

    /// Replaces the store at `destinationURL` (Swift-style spelling).
    open func replacePersistentStore(
        at destinationURL: URL, destinationOptions: [AnyHashable: Any]? = nil, withPersistentStoreFrom sourceURL: URL,
        sourceOptions: [AnyHashable: Any]? = nil, type: NSPersistentStore.StoreType
    ) throws {
        try replacePersistentStore(
            at: destinationURL, destinationOptions: destinationOptions, withPersistentStoreFrom: sourceURL,
            sourceOptions: sourceOptions, ofType: type.rawValue)
    }

    // MARK: Blocks

    /// Runs `block` asynchronously with the coordinator's stores to itself.
    open func perform(_ block: @escaping () -> Void) {
        let box = UncheckedSendable(block)
        DispatchQueue.global().async { [self] in _withAllStores { box.value() } }
    }

    /// Runs `block` with the coordinator's stores to itself, and waits.
    open func performAndWait(_ block: () -> Void) {
        _withAllStores(block)
    }

    /// Runs `body` with every store of the coordinator to itself (and the coordinator's own state: no store is added
    /// or removed meanwhile). The stores are taken before the coordinator's lock, the order every caller keeps.
    func _withAllStores<T>(_ body: () throws -> T) rethrows -> T {
        try NSPersistentStore._serialized(persistentStores) { try _withLock(body) }
    }

    // MARK: Contexts

    func _registerRootContext(_ context: NSManagedObjectContext) {
        _withLock {
            _rootContexts.removeAll { $0.context == nil }
            _rootContexts.append(WeakContextReference(context: context))
        }
    }

    /// The stores that hold objects of `entity`, in the order they were added.
    func _stores(for entity: NSEntityDescription) -> [NSPersistentStore] {
        _stores.filter { store in
            // The default configuration holds every entity of the model (a search of them for every object saved
            // made a save of a model of many entities quadratic).
            if store._configurationName == "PF_DEFAULT_CONFIGURATION_NAME", entity._model === _managedObjectModel {
                return true
            }
            guard let members = _managedObjectModel.entities(forConfigurationName: store._configurationName) else {
                return false
            }
            return members.contains { $0 === entity || entity.isKindOf(entity: $0) || $0.isKindOf(entity: entity) }
        }
    }

    /// Tells the store of `objectID` that the object went away or gave up its values, so that it forgets the row if
    /// no other object uses it. Does nothing while another thread uses the store: the row then stays cached until
    /// the cache is full, rather than this thread wait (it may be in an object's `deinit`).
    func _objectWentAway(_ objectID: NSManagedObjectID) {
        guard _lock.try() else { return }
        // The list read in place, under the lock (a copy to read after unlocking was an atomic retain and release
        // for every object that goes away; only try-locks are taken while it is held). The stores are borrowed from
        // it too: they are weakly referenced (by their objects' IDs), so a retain of one takes the runtime's slow
        // path.
        defer { _lock.unlock() }
        _rowCaches.withUnsafeBufferPointer { entries in
            for index in entries.indices {
                Unmanaged.passUnretained(entries[index].store)._withUnsafeGuaranteedRef { store in
                    guard objectID._isInStore(store), store._storeLock.try() else { return }
                    defer { store._storeLock.unlock() }
                    entries[index].cache.forgetUnusedRow(in: store, of: objectID)
                }
            }
        }
    }

    /// The interface through which the coordinator uses `store` for a request of `context`: the store itself for the
    /// framework's stores, an adapter over its public methods for an `NSIncrementalStore`.
    func _backend(of store: NSPersistentStore?, for context: NSManagedObjectContext?) throws
        -> PersistentStoreBackend
    {
        if let backend = store as? PersistentStoreBackend { return backend }
        if let incremental = store as? NSIncrementalStore {
            return IncrementalStoreBackend(store: incremental, context: context)
        }
        throw coreDataError(
            NSPersistentStoreOperationError,
            store == nil
                ? "The object's persistent store is not reachable from this coordinator"
                : "The store \(store!) can neither fetch nor save: subclass NSIncrementalStore or NSAtomicStore")
    }
}

/// A store with what a fetch needs of it (see `NSPersistentStoreCoordinator._onlyStoreRoute`); a class, so that a
/// fetch takes one reference to it under the coordinator's lock rather than one to each part.
final class StoreRoute {
    let store: NSPersistentStore
    let backend: PersistentStoreBackend
    let concurrent: PersistentStoreConcurrentFetching?

    /// The route to `store` if it holds every entity of the model (the default configuration) and fetches itself.
    init?(_ store: NSPersistentStore) {
        guard store._configurationName == "PF_DEFAULT_CONFIGURATION_NAME",
            let backend = store as? PersistentStoreBackend
        else { return nil }
        self.store = store
        self.backend = backend
        concurrent = backend as? PersistentStoreConcurrentFetching
    }
}

/// A weak reference to a context.
struct WeakContextReference {
    weak var context: NSManagedObjectContext?
}

/// Carries a value the compiler cannot prove `Sendable` across a queue hop whose safety the framework
/// guarantees (a context's block runs only on that context's queue).
struct UncheckedSendable<Value>: @unchecked Sendable {
    // @unchecked: the point of this type: each use crosses to a queue that the framework guarantees is the only
    // one to touch the value (a context's block runs on that context's queue). Keep uses few and commented.
    let value: Value
    init(_ value: Value) { self.value = value }
}
