import Synchronization

/// How a context confines its work.
public enum NSManagedObjectContextConcurrencyType: UInt, Sendable {
    /// Deprecated by Apple: the context is used from the thread that created it.
    case confinementConcurrencyType = 0
    /// The context has its own private queue.
    case privateQueueConcurrencyType = 1
    /// The context's queue is the main queue.
    case mainQueueConcurrencyType = 2
}

/// A scratch pad for managed objects: it fetches them, tracks their changes, validates and saves them, and
/// undoes what you ask it to. A context and its objects are used only on the context's queue — through
/// `perform(_:)`/`performAndWait(_:)`, or directly on the main thread for a main-queue context.
///
/// ```swift
/// let context = container.newBackgroundContext()
/// try await context.perform {
///     let company = Company(context: context)
///     company.name = "Acme"
///     try context.save()
/// }
/// ```
///
/// On Linux the main queue runs only while the main thread services it (`dispatchMain()`, `RunLoop.main.run()`,
/// or an `async` main): a command-line program that uses a main-queue context from the main thread may call it
/// directly; one that schedules work with `perform(_:)` on it must keep the main queue running.
open class NSManagedObjectContext: NSObject, @unchecked Sendable {
    // @unchecked: a context's state is used on its queue only (`perform`, `performAndWait`; the concurrency debug
    // switch checks it), as Apple's rule for contexts is; its queue is set when it is made.
    /// How a context confines its work (Apple's type is `NSManagedObjectContextConcurrencyType`).
    public typealias ConcurrencyType = NSManagedObjectContextConcurrencyType

    /// When a block passed to the `async` `perform(schedule:_:)` runs.
    public enum ScheduledTaskType: Sendable {
        /// At once if already on the context's queue, otherwise enqueued.
        case immediate
        /// Always enqueued behind what is already scheduled.
        case enqueued
    }

    public let concurrencyType: ConcurrencyType
    let _queue: DispatchQueue?

    // Touched for every object fetched, inserted or changed; confined to the context's queue like the objects, so the
    // run-time exclusivity checks of class properties are switched off for them (see `NSManagedObject._values`).
    @exclusivity(unchecked) var _parentStore: ObjectStoreParent?
    @exclusivity(unchecked) var _coordinator: NSPersistentStoreCoordinator? {
        didSet { _coordinatorReference = _coordinator.map { Unmanaged.passUnretained($0) } }
    }
    /// `_coordinator`, unretained, for calls made as every object goes away: the coordinator is weakly referenced
    /// (by its stores), which makes each retain and release of it take the runtime's slow path.
    @exclusivity(unchecked) var _coordinatorReference: Unmanaged<NSPersistentStoreCoordinator>?
    var _parentContext: NSManagedObjectContext?

    /// Every object registered in the context, by ID, unretained: an object unregisters itself when it goes away.
    @exclusivity(unchecked) var _registry: ObjectRegistry = [:]
    /// Registered objects retained because `retainsRegisteredObjects` is on.
    @exclusivity(unchecked) var _retained: ObjectIdentityDictionary<NSManagedObject> = [:]
    /// The objects inserted, changed and deleted since the last save (see `ChangedObjects`).
    @exclusivity(unchecked) var _inserted = ChangedObjects()
    @exclusivity(unchecked) var _updated = ChangedObjects()
    @exclusivity(unchecked) var _deleted = ChangedObjects()
    /// Deleted objects whose delete rules have not been applied yet.
    @exclusivity(unchecked) var _pendingDeletes: [NSManagedObject] = []
    /// The objects inserted, changed, deleted or refreshed since the last `processPendingChanges()`, each once, in
    /// the order they were first listed: their flags (`eventInserted` and its siblings) say what the
    /// objects-did-change notification reports them as, and their per-event state is cleared when the event ends.
    /// A list and flags rather than a table per kind: listing an object is an append, and ending the event one
    /// forward pass.
    @exclusivity(unchecked) var _eventObjects: [NSManagedObject] = []
    /// The set of inserted objects the last objects-did-change notification announced, when it held every object
    /// the context had inserted, and `_inserted.mutations` then: while that count stands, a save's did-save
    /// notification announces the same insertions and takes the set as it is instead of hashing every object again.
    @exclusivity(unchecked) var _announcedInsertions: AnnouncedObjects?
    /// The same for the deleted objects (`_deleted`): a cascade's deletions are announced when the save begins.
    @exclusivity(unchecked) var _announcedDeletions: AnnouncedObjects?
    /// The same for the updated objects (`_updated`): changes made in one event are announced when the save begins.
    @exclusivity(unchecked) var _announcedUpdates: AnnouncedObjects?
    @exclusivity(unchecked) var _hasEventChanges = false
    @exclusivity(unchecked) var _isSaving = false
    /// The context evaluates a fetch's predicate and sort order in memory (for a store that handed out candidates):
    /// the objects it reads stay faults, as the fetch returns them (see `_fulfillFault(of:)`).
    @exclusivity(unchecked) var _isEvaluatingFetch = false
    /// The context executes one batch request for a store without batch support of its own (see
    /// `NSManagedObjectContext+BatchEmulation.swift`): its objects are plain `NSManagedObject`s, it posts no
    /// notifications, its saves check deny rules only and are merged nowhere.
    @exclusivity(unchecked) var _isBatchExecutor = false
    /// The generation the context reads (NSManagedObjectContext+QueryGenerations.swift); looked at by every read.
    @exclusivity(unchecked) var _queryGeneration = ContextQueryGeneration.unpinned
    /// The objects of the last fetch with a `fetchBatchSize`, whose older batches give their values back as later
    /// ones are touched (see `NSManagedObjectContext+BatchFaulting.swift`).
    @exclusivity(unchecked) var _batchResidency: BatchResidency?
    /// Partial faults (objects fetched with `propertiesToFetch`) and the slots they have not loaded (see
    /// `NSManagedObjectContext+PartialFaults.swift`).
    @exclusivity(unchecked) var _partialObjects: [ObjectIdentifier: SlotSet] = [:]

    @exclusivity(unchecked) var _undoManager: UndoManager?
    var _name: String?
    var _transactionAuthor: String?
    var _mergePolicy: Any = NSMergePolicy.error
    @exclusivity(unchecked) var _retainsRegisteredObjects = false
    /// The entity of the last object inserted, once checked to be of the context's model: inserting another of the
    /// same entity skips the check, which reads the entity's (weakly referenced) model, a slow-path retain and
    /// release for every object inserted. Held, so that another entity can never take its address.
    @exclusivity(unchecked) var _lastInsertedEntity: NSEntityDescription?
    /// The class `init(context:)` found an entity for last, and that entity (see `_entity(for:)`). Kept only for a
    /// context on a coordinator, whose model never changes; cleared when the context's coordinator or parent is set.
    @exclusivity(unchecked) var _lastEntityClass: ObjectIdentifier?
    @exclusivity(unchecked) var _lastEntityOfClass: NSEntityDescription?
    /// The entity name a fetch request named last, and its entity in the context's model (see `_resolveEntity(_:)`):
    /// kept and cleared as `_lastEntityClass` is.
    @exclusivity(unchecked) var _lastFetchedEntityName: String?
    @exclusivity(unchecked) var _lastFetchedEntity: NSEntityDescription?
    var _automaticallyMergesChangesFromParent = false

    /// Information of the user's own, as Apple's `userInfo`.
    public let userInfo = NSMutableDictionary()

    /// How long, in seconds, cached values stay fresh; a negative value means forever.
    open var stalenessInterval: TimeInterval = -1
    /// Whether a fault whose object has gone from the store reads as a deleted object instead of failing.
    open var shouldDeleteInaccessibleFaults = true
    /// Whether delete rules are applied at the end of each event (else at save).
    open var propagatesDeletesAtEndOfEvent = true

    /// A context with the given concurrency type. Give it a coordinator or a parent before using it.
    public init(concurrencyType type: ConcurrencyType) {
        concurrencyType = type
        switch type {
        case .privateQueueConcurrencyType:
            let queue = DispatchQueue(label: "NSManagedObjectContext")
            _queue = queue
        case .mainQueueConcurrencyType:
            _queue = DispatchQueue.main
        case .confinementConcurrencyType:
            _queue = nil
        }
        super.init()
        if type == .privateQueueConcurrencyType, let queue = _queue {
            queue.setSpecific(key: NSManagedObjectContext.queueKey, value: QueueToken(self))
        }
    }

    /// A confinement context (deprecated by Apple).
    @available(*, deprecated, message: "Use init(concurrencyType:)")
    public convenience override init() {
        self.init(concurrencyType: .confinementConcurrencyType)
    }

    deinit {
        // Objects that outlive the context must not reach back into it, and relationship cycles among its
        // objects are broken so that they can go away. An object may be going away on another thread right now:
        // the lock makes it wait, and then find that it has no context.
        // The values taken from the objects are released when this statement ends, after the lock.
        _ = NSManagedObjectContext._lifetimeLock.withLock { _disconnectRegisteredObjects() }
    }

    // MARK: Stack

    /// The coordinator the context's objects come from (through the parent, for a child context).
    open var persistentStoreCoordinator: NSPersistentStoreCoordinator? {
        get { _coordinator ?? _parentContext?.persistentStoreCoordinator }
        set {
            precondition(
                _parentContext == nil,
                "A context has either a parent context or a persistent store coordinator, not both (context \(_debugName))"
            )
            _coordinator = newValue
            _parentStore = newValue
            _lastEntityClass = nil
            _lastEntityOfClass = nil
            _lastFetchedEntityName = nil
            _lastFetchedEntity = nil
            newValue?._registerRootContext(self)
        }
    }

    /// The parent context: saving pushes changes into it rather than into a store.
    open var parent: NSManagedObjectContext? {
        get { _parentContext }
        set {
            precondition(
                _coordinator == nil,
                "A context has either a parent context or a persistent store coordinator, not both (context \(_debugName))"
            )
            precondition(newValue !== self, "A context cannot be its own parent")
            _parentContext = newValue
            _parentStore = newValue
            _lastEntityClass = nil
            _lastEntityOfClass = nil
            _lastFetchedEntityName = nil
            _lastFetchedEntity = nil
            newValue?._registerChild(self)
        }
    }

    /// The child contexts, weakly. Looked at for every object a save gives a permanent ID: not checked for
    /// exclusivity (see `NSManagedObject._values`).
    @exclusivity(unchecked) var _children: [WeakContextReference] = []
    /// The permanent IDs this context gave objects that a child saved into it with temporary IDs, for the child
    /// to take up (see `_adoptPermanentIDs()`). Used on this context's queue.
    var _successors: [NSManagedObjectID: NSManagedObjectID] = [:]
    /// Temporary IDs of objects this context saved into its parent context, whose permanent IDs the parent may
    /// give them when it saves in turn. Read at the start of every fetch, on the queue: not checked for exclusivity.
    @exclusivity(unchecked) var _awaitingPermanentIDs: [NSManagedObjectID] = []

    func _registerChild(_ child: NSManagedObjectContext) {
        _children.removeAll { $0.context == nil }
        _children.append(WeakContextReference(context: child))
    }

    var _model: NSManagedObjectModel {
        guard let parent = _parentStore else {
            preconditionFailure(
                """
                The context \(_debugName) has neither a persistent store coordinator nor a parent context; set \
                one before using it
                """)
        }
        return parent._model
    }

    var _debugName: String {
        _name.map { "'\($0)'" } ?? "<\(Unmanaged.passUnretained(self).toOpaque())>"
    }

    // MARK: Properties

    /// The context's name, for debugging.
    open var name: String? {
        get { _name }
        set { _name = newValue }
    }

    /// The author recorded in persistent history for this context's saves.
    open var transactionAuthor: String? {
        get { _transactionAuthor }
        set { _transactionAuthor = newValue }
    }

    /// The undo manager that records the context's changes; `nil` (the default) records nothing.
    open var undoManager: UndoManager? {
        get { _undoManager }
        set { _undoManager = newValue }
    }

    /// How conflicts between the context's changes and the store's are resolved at save: an `NSMergePolicy`.
    open var mergePolicy: Any {
        get { _mergePolicy }
        set {
            precondition(
                newValue is NSMergePolicy,
                "mergePolicy must be an NSMergePolicy (such as NSMergePolicy.mergeByPropertyObjectTrump)")
            _mergePolicy = newValue
        }
    }

    /// Whether the context keeps strong references to all its registered objects (otherwise only to those
    /// with unsaved changes).
    open var retainsRegisteredObjects: Bool {
        get { _retainsRegisteredObjects }
        set {
            _retainsRegisteredObjects = newValue
            if newValue {
                for object in _registeredObjectsSnapshot() {
                    _retained[ObjectIdentifier(object)] = object
                }
            } else {
                _retained = [:]
            }
        }
    }

    /// Whether the context merges the changes its parent (or, for a root context, the coordinator's other
    /// contexts) saves.
    open var automaticallyMergesChangesFromParent: Bool {
        get { _automaticallyMergesChangesFromParent }
        set { _automaticallyMergesChangesFromParent = newValue }
    }

    // MARK: Concurrency

    /// Identifies a private queue as belonging to a context.
    final class QueueToken: @unchecked Sendable {
        // @unchecked: `context` is a weak reference, which Swift reads and clears atomically; nothing else.
        weak var context: NSManagedObjectContext?
        init(_ context: NSManagedObjectContext) { self.context = context }
    }

    static let queueKey = DispatchSpecificKey<QueueToken>()
    static let currentContext = ThreadLocal<NSManagedObjectContext>()

    /// The context whose block runs on this thread.
    static var _current: NSManagedObjectContext? { currentContext.value }

    /// Whether the caller is on the context's queue.
    var _isOnQueue: Bool {
        switch concurrencyType {
        case .privateQueueConcurrencyType:
            return DispatchQueue.getSpecific(key: NSManagedObjectContext.queueKey)?.context === self
                || NSManagedObjectContext._current === self
        case .mainQueueConcurrencyType:
            return NSManagedObjectContext._isOnMainQueue
        case .confinementConcurrencyType:
            return true
        }
    }

    /// Whether the caller runs on the main queue: on the main thread, or on the thread that drains the main queue
    /// after `dispatchMain()` (which on Linux is not the main thread), as `@MainActor` code does.
    static var _isOnMainQueue: Bool {
        Thread.isMainThread || DispatchQueue.getSpecific(key: mainQueueMarker) != nil
    }

    private static let mainQueueMarker: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    /// Runs `block` asynchronously on the context's queue.
    open func perform(_ block: @escaping () -> Void) {
        guard let queue = _queue else {
            preconditionFailure(
                "perform(_:) cannot be used with a confinement context (\(_debugName)); use a queue context")
        }
        let work = UncheckedSendable(block)
        let context = UncheckedSendable(self)
        queue.async {
            context.value._runOnQueue(work.value)
        }
    }

    /// Runs `block` on the context's queue and waits for it. Re-entrant: calling it from a block already on the
    /// queue runs the block at once.
    open func performAndWait(_ block: () -> Void) {
        _performAndWait(block)
    }

    /// Runs `block` on the context's queue, waits, and returns its result or rethrows its error.
    open func performAndWait<T>(_ block: () throws -> T) rethrows -> T {
        try _performAndWait(block)
    }

    /// Contexts whose queue the main thread is blocked on (directly, or through contexts it waits for), with a
    /// count for nested waits.
    private static let mainThreadWaits = LockedState<[ObjectIdentifier: Int]>([:])

    private static func isAwaitedByMainThread(_ context: NSManagedObjectContext?) -> Bool {
        guard let context else { return false }
        return mainThreadWaits.withLock { $0[ObjectIdentifier(context)] != nil }
    }

    func _performAndWait<T>(_ block: () throws -> T) rethrows -> T {
        if _isOnQueue || _queue == nil {
            return try _runOnQueue(block)
        }
        let current = NSManagedObjectContext._current
        if concurrencyType == .mainQueueConcurrencyType, NSManagedObjectContext.isAwaitedByMainThread(current) {
            // The main thread is parked until the calling context's block finishes, so it cannot service the main
            // queue — and nothing else runs there meanwhile: use the main-queue context in place.
            return try _runOnQueue(block)
        }
        let mainThreadWaits =
            NSManagedObjectContext._isOnMainQueue || NSManagedObjectContext.isAwaitedByMainThread(current)
        let key = ObjectIdentifier(self)
        if mainThreadWaits {
            NSManagedObjectContext.mainThreadWaits.withLock { $0[key, default: 0] += 1 }
        }
        defer {
            if mainThreadWaits {
                NSManagedObjectContext.mainThreadWaits.withLock { waits in
                    waits[key, default: 1] -= 1
                    if waits[key] == 0 { waits[key] = nil }
                }
            }
        }
        return try withoutActuallyEscaping(block) { escapable in
            let work = UncheckedSendable(escapable)
            let context = UncheckedSendable(self)
            let result = _queue!.sync { () -> UncheckedSendable<Result<T, any Error>> in
                UncheckedSendable(Result { try context.value._runOnQueue(work.value) })
            }
            switch result.value {
            case .success(let value): return value
            case .failure(let error): return try { throw error }()
            }
        }
    }

    /// Runs `block` on the context's queue and returns its result.
    open func perform<T>(schedule: ScheduledTaskType = .immediate, _ block: @escaping () throws -> T) async rethrows
        -> T
    {
        if schedule == .immediate, _isOnQueue {
            return try _runOnQueue(block)
        }
        guard let queue = _queue else {
            return try _runOnQueue(block)
        }
        let work = UncheckedSendable(block)
        let context = UncheckedSendable(self)
        let result: UncheckedSendable<Result<T, any Error>> = await withCheckedContinuation { continuation in
            queue.async {
                continuation.resume(returning: UncheckedSendable(Result { try context.value._runOnQueue(work.value) }))
            }
        }
        switch result.value {
        case .success(let value): return value
        case .failure(let error): return try { throw error }()
        }
    }

    /// Runs a block as the context's current work: it is the context that `NSFetchRequest.execute()` uses, and
    /// pending changes are processed after it, as Apple's `perform` does.
    @discardableResult
    func _runOnQueue<T>(_ block: () throws -> T) rethrows -> T {
        try NSManagedObjectContext.currentContext.withValue(self) {
            defer { if _hasEventChanges { processPendingChanges() } }
            return try block()
        }
    }

    // MARK: Concurrency debugging

    /// Whether misuse of a context off its queue stops the program: on when the environment variable
    /// `com.apple.CoreData.ConcurrencyDebug` (or `OPENCOREDATA_CONCURRENCY_DEBUG`) is `1` or more, or the program was
    /// launched with `-com.apple.CoreData.ConcurrencyDebug 1`, as with Apple's framework (read by
    /// `CoreDataDebugSwitches`, with the other debug switches).
    static let concurrencyDebugging = CoreDataDebugSwitches.launch.concurrencyDebug > 0

    /// With concurrency debugging on, stops when the context is used off its queue.
    @inline(__always)
    func _assertOnQueue(_ function: StaticString = #function) {
        guard NSManagedObjectContext.concurrencyDebugging else { return }
        guard _isOnQueue else {
            let queue = concurrencyType == .mainQueueConcurrencyType ? "the main queue" : "its private queue"
            preconditionFailure(
                """
                CoreData concurrency violation: the managed object context \(_debugName) was used in \(function) \
                off \(queue) (thread \(Thread.current)). Use perform(_:) or performAndWait(_:).
                """)
        }
    }
}
