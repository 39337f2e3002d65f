/// The results of a fetch request, divided into sections and kept up to date as the context's objects change: what a
/// list or table shows.
///
/// ```swift
/// let request = NSFetchRequest<Employee>(entityName: "Employee")
/// request.sortDescriptors = [NSSortDescriptor(key: "department", ascending: true),
///                            NSSortDescriptor(key: "name", ascending: true)]
/// let controller = NSFetchedResultsController(
///     fetchRequest: request, managedObjectContext: viewContext, sectionNameKeyPath: "department", cacheName: nil)
/// controller.delegate = self
/// try controller.performFetch()
/// let first = controller.object(at: IndexPath(indexes: [0, 0]))
/// ```
///
/// The fetch request needs at least one sort descriptor; with `sectionNameKeyPath`, its first one must order the
/// objects by section. While the controller has a delegate, it follows the objects-did-change notifications of its
/// context — objects inserted, deleted, changed or refreshed there, changes merged from other contexts — and reports
/// how its results changed (see `NSFetchedResultsControllerDelegate`). Without a delegate, the results stay as
/// `performFetch()` left them, as with Apple's controller.
///
/// `cacheName` names the section information of the request: reusing a name with another request replaces what it
/// named, and `deleteCache(withName:)` forgets it. Changing the fetch request of a controller with a cache name
/// between fetches without deleting the cache stops the program, as Apple's controller raises an exception. (Apple
/// keeps the cache on disk to speed up the next launch; here it lives as long as the process.)
///
/// `ResultType` is one of the fetch request result types (`NSManagedObject` and its subclasses, `NSManagedObjectID`,
/// `NSDictionary`, `NSNumber`, or `NSFetchRequestResult` for any), as the request's.
open class NSFetchedResultsController<ResultType>: NSObject {
    /// The state every view of this controller shares: the delegate receives the controller typed for any result,
    /// a second view of the same results.
    let _engine: FetchedResultsEngine
    private let _fetchRequest: NSFetchRequest<ResultType>
    /// The results as `ResultType`, made once per change of the results.
    private var _typed: (version: Int, objects: [ResultType])?

    /// A controller for the results of `fetchRequest` in `context`, divided into sections by the values of
    /// `sectionNameKeyPath` (one section if `nil`).
    ///
    /// Apple's documentation asks for at least one sort descriptor, and sections need the first one to order the
    /// objects by section (`performFetch()` throws if they are not); without sections and sort descriptors the
    /// results come in the store's order, as they do on Apple platforms today.
    public init(
        fetchRequest: NSFetchRequest<ResultType>, managedObjectContext context: NSManagedObjectContext,
        sectionNameKeyPath: String?, cacheName name: String?
    ) {
        _fetchRequest = fetchRequest
        _engine = FetchedResultsEngine(
            context: context, sectionNameKeyPath: sectionNameKeyPath, cacheName: name)
        super.init()
        _engine.primaryIndexTitle = { [weak self] name in self?.sectionIndexTitle(forSectionName: name) }
        _engine.primaryRequest = { [weak self] in self?._fetchRequest._untyped }
        _engine.primaryUntyped = self as? NSFetchedResultsController<NSFetchRequestResult>
    }

    /// Another view of `engine`'s results (the one delegates receive).
    init(sharing engine: FetchedResultsEngine, fetchRequest: NSFetchRequest<ResultType>) {
        _engine = engine
        _fetchRequest = fetchRequest
        super.init()
    }

    /// The fetch request whose results the controller holds.
    open var fetchRequest: NSFetchRequest<ResultType> { _fetchRequest }

    /// The context the controller fetches from and follows.
    open var managedObjectContext: NSManagedObjectContext { _engine.context }

    /// The key path whose values divide the results into sections.
    open var sectionNameKeyPath: String? { _engine.sectionNameKeyPath }

    /// The name under which the section information is kept.
    open var cacheName: String? { _engine.cacheName }

    /// Told how the results change; `nil` stops the controller from following its context.
    open weak var delegate: NSFetchedResultsControllerDelegate? {
        get { _engine.delegate }
        set { _engine.delegate = newValue }
    }

    /// Forgets the section information kept under `name`, or under every name if `nil`.
    open class func deleteCache(withName name: String?) {
        FetchedResultsEngine.deleteCache(withName: name)
    }

    /// Fetches the results, and divides them into sections.
    ///
    /// Throws what the fetch throws, and `NSCoreDataError` if the objects do not come in section order (the first
    /// sort descriptor must order them by `sectionNameKeyPath`).
    open func performFetch() throws {
        try _engine.performFetch(_fetchRequest._untyped)
    }

    /// The results, in order; `nil` before `performFetch()`.
    open var fetchedObjects: [ResultType]? {
        guard let results = _engine.results else { return nil }
        if let typed = _typed, typed.version == _engine.version { return typed.objects }
        let objects = results.map { $0 as! ResultType }
        _typed = (_engine.version, objects)
        return objects
    }

    /// The object at `indexPath` (section, then the object's place in it).
    ///
    /// - Precondition: `indexPath` names an object of the results.
    open func object(at indexPath: IndexPath) -> ResultType {
        _engine.object(at: indexPath) as! ResultType
    }

    /// Where `object` is in the results; `nil` if it is not among them.
    open func indexPath(forObject object: ResultType) -> IndexPath? {
        guard let result = object as? NSFetchRequestResult else { return nil }
        return _engine.indexPath(for: result)
    }

    /// The sections of the results; `nil` before `performFetch()`.
    open var sections: [NSFetchedResultsSectionInfo]? {
        _engine.sections
    }

    /// The section index titles: the index titles of the sections, each once, in section order.
    open var sectionIndexTitles: [String] {
        _engine.sectionIndexTitles
    }

    /// The section index title of the section named `sectionName`: by default its first letter, capitalized.
    /// Override it (or implement the delegate's `controller(_:sectionIndexTitleForSectionName:)`) for others.
    open func sectionIndexTitle(forSectionName sectionName: String) -> String? {
        sectionName.first.map { String($0).uppercased() }
    }

    /// The section that the section index entry `title`, at `sectionIndex` in `sectionIndexTitles`, stands for:
    /// the first section with that index title.
    ///
    /// - Precondition: `sectionIndexTitles[sectionIndex] == title`.
    open func section(forSectionIndexTitle title: String, at sectionIndex: Int) -> Int {
        _engine.section(forSectionIndexTitle: title, at: sectionIndex)
    }

    /// Two views of one controller's results are equal.
    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? FetchedResultsEngineHolder else { return false }
        return other._sharedEngine === _engine
    }

    open override var hash: Int { ObjectIdentifier(_engine).hashValue }
}

/// A controller of any result type, as the engine's views compare themselves.
protocol FetchedResultsEngineHolder {
    var _sharedEngine: FetchedResultsEngine { get }
}

extension NSFetchedResultsController: FetchedResultsEngineHolder {
    var _sharedEngine: FetchedResultsEngine { _engine }
}
