/// A complete Core Data stack: a model, a coordinator, the stores its descriptions name, and a main-queue view
/// context.
///
/// ```swift
/// let container = NSPersistentContainer(name: "Company", managedObjectModel: model)
/// container.loadPersistentStores { description, error in
///     if let error { fatalError("\(error)") }
/// }
/// let context = container.viewContext
/// ```
open class NSPersistentContainer: NSObject, @unchecked Sendable {
    // @unchecked: `_viewContext` is made once under `lock`; the descriptions are configured before the stores are loaded.
    public let name: String
    public let managedObjectModel: NSManagedObjectModel
    public let persistentStoreCoordinator: NSPersistentStoreCoordinator
    private var _viewContext: NSManagedObjectContext?
    private let lock = NSLock()

    /// The descriptions of the stores `loadPersistentStores` adds: one SQLite store named after the container in
    /// `defaultDirectoryURL()` unless changed.
    open var persistentStoreDescriptions: [NSPersistentStoreDescription]

    /// A container named `name` with `model`.
    public init(name: String, managedObjectModel model: NSManagedObjectModel) {
        self.name = name
        managedObjectModel = model
        persistentStoreCoordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let url = type(of: self).defaultDirectoryURL().appendingPathComponent("\(name).sqlite")
        persistentStoreDescriptions = [NSPersistentStoreDescription(url: url)]
        super.init()
    }

    /// Where stores go by default: the user's application support directory (on Linux
    /// `$XDG_DATA_HOME`, usually `~/.local/share`), created if needed.
    open class func defaultDirectoryURL() -> URL {
        let base =
            FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
            ?? URL(fileURLWithPath: NSTemporaryDirectory())
        try? FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        return base
    }

    /// The main-queue context for the user interface (or for a program's main thread).
    open var viewContext: NSManagedObjectContext {
        lock.lock()
        defer { lock.unlock() }
        if let context = _viewContext { return context }
        let context = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        context.persistentStoreCoordinator = persistentStoreCoordinator
        _viewContext = context
        return context
    }

    /// Adds the stores of `persistentStoreDescriptions`, calling `block` once per description with the error,
    /// if any.
    open func loadPersistentStores(
        completionHandler block: @escaping (NSPersistentStoreDescription, (any Error)?) -> Void
    ) {
        for description in persistentStoreDescriptions {
            persistentStoreCoordinator.addPersistentStore(with: description, completionHandler: block)
        }
    }

    /// A new private-queue context on the container's coordinator.
    open func newBackgroundContext() -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = persistentStoreCoordinator
        return context
    }

    /// Runs `block` with a new private-queue context, on that context's queue.
    open func performBackgroundTask(_ block: @escaping (NSManagedObjectContext) -> Void) {
        let context = newBackgroundContext()
        context.perform { block(context) }
    }

    /// Runs `block` with a new private-queue context and returns its result.
    open func performBackgroundTask<T>(_ block: @escaping (NSManagedObjectContext) throws -> T) async rethrows -> T {
        let context = newBackgroundContext()
        return try await context.perform { try block(context) }
    }
}
