/// The kinds of result a fetch request returns.
public struct NSFetchRequestResultType: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// Managed objects (the default).
    public static let managedObjectResultType = NSFetchRequestResultType([])
    /// Object IDs.
    public static let managedObjectIDResultType = NSFetchRequestResultType(rawValue: 1 << 0)
    /// Dictionaries of property values (`propertiesToFetch`).
    public static let dictionaryResultType = NSFetchRequestResultType(rawValue: 1 << 1)
    /// The number of matching objects, as one `NSNumber`.
    public static let countResultType = NSFetchRequestResultType(rawValue: 1 << 2)
}

/// The types a fetch request can return: managed objects, object IDs, dictionaries and counts.
public protocol NSFetchRequestResult: AnyObject {}

extension NSManagedObject: NSFetchRequestResult {}
extension NSManagedObjectID: NSFetchRequestResult {}
extension NSNumber: NSFetchRequestResult {}
extension NSDictionary: NSFetchRequestResult {}

/// A description of the objects to fetch: an entity, a predicate that selects among its objects, the order, and
/// how many.
///
/// ```swift
/// let request = NSFetchRequest<Employee>(entityName: "Employee")
/// request.predicate = NSPredicate(format: "company.name == %@", "Acme")
/// request.sortDescriptors = [NSSortDescriptor(key: "secondName", ascending: true)]
/// let employees = try context.fetch(request)
/// ```
open class NSFetchRequest<ResultType>: NSPersistentStoreRequest, @unchecked Sendable {
    // @unchecked: a request is configured and then executed, as in Apple's framework, which does not lock it either:
    // changing a request while another thread executes it is a programmer error. Sendable so that a request made
    // outside `perform` can be executed inside it, as real code does. For the same reason the stored properties skip
    // Swift's run-time exclusivity checks, which cost about 75 instructions per access of a stored property of an open
    // class, and every fetch reads each of them several times.
    @exclusivity(unchecked) var _entityName: String?
    @exclusivity(unchecked) var _entity: NSEntityDescription?

    /// The predicate that selects the objects; all objects when `nil`.
    @exclusivity(unchecked) open var predicate: NSPredicate?
    /// The order of the results.
    @exclusivity(unchecked) open var sortDescriptors: [NSSortDescriptor]?
    /// The most objects to return; 0 means no limit.
    @exclusivity(unchecked) open var fetchLimit: Int = 0
    /// How many matching objects to skip.
    @exclusivity(unchecked) open var fetchOffset: Int = 0
    /// How many objects to load at a time; 0 loads all at once.
    @exclusivity(unchecked) open var fetchBatchSize: Int = 0
    /// What the request returns.
    @exclusivity(unchecked) open var resultType: NSFetchRequestResultType = .managedObjectResultType
    /// Whether objects of subentities match too.
    @exclusivity(unchecked) open var includesSubentities = true
    /// Whether the values of fetched objects are loaded with them (otherwise they load when first touched).
    @exclusivity(unchecked) open var includesPropertyValues = true
    /// Whether fetched objects are returned as faults.
    @exclusivity(unchecked) open var returnsObjectsAsFaults = true
    /// Relationship key paths whose destinations are fetched along with the results.
    @exclusivity(unchecked) open var relationshipKeyPathsForPrefetching: [String]?
    /// Whether the context's unsaved changes count (inserted objects match, deleted ones do not…).
    @exclusivity(unchecked) open var includesPendingChanges = true
    /// For dictionary results: whether duplicates are removed.
    @exclusivity(unchecked) open var returnsDistinctResults = false
    /// For dictionary results: the properties (names, descriptions or `NSExpressionDescription`s) to return.
    @exclusivity(unchecked) open var propertiesToFetch: [Any]?
    /// For dictionary results: the properties to group by.
    @exclusivity(unchecked) open var propertiesToGroupBy: [Any]?
    /// For grouped dictionary results: a predicate on the groups.
    @exclusivity(unchecked) open var havingPredicate: NSPredicate?
    /// Whether objects already registered are updated with the fetched values.
    @exclusivity(unchecked) open var shouldRefreshRefetchedObjects = false

    /// A request for objects of `entityName`.
    public convenience init(entityName: String) {
        self.init()
        _entityName = entityName
    }

    public override init() {
        super.init()
    }

    /// The name of the entity to fetch.
    open var entityName: String? { _entityName ?? _entity?._name }

    /// The entity to fetch; when only the name was given, resolved against the context's model at fetch time.
    open var entity: NSEntityDescription? {
        get { _entity }
        set {
            _entity = newValue
            if let name = newValue?._name { _entityName = name }
        }
    }

    open override var requestType: NSPersistentStoreRequestType { .fetchRequestType }

    /// Executes the request in the context whose `perform` or `performAndWait` block is running.
    ///
    /// - Precondition: called inside a context's `perform`/`performAndWait` block, as Apple requires.
    open func execute() throws -> [ResultType] {
        guard let context = NSManagedObjectContext._current else {
            preconditionFailure(
                "NSFetchRequest.execute() must be called inside a managed object context's perform or performAndWait block"
            )
        }
        return try context.fetch(self)
    }

    open override func copy(with zone: NSZone? = nil) -> Any {
        let copy = NSFetchRequest<ResultType>()
        _copySettings(to: copy)
        return copy
    }

    /// The same request, typed for any result (how the framework passes requests to stores).
    var _untyped: NSFetchRequest<NSFetchRequestResult> {
        if let untyped = self as? NSFetchRequest<NSFetchRequestResult> { return untyped }
        let copy = NSFetchRequest<NSFetchRequestResult>()
        _copySettings(to: copy)
        return copy
    }

    func _copySettings<Other>(to copy: NSFetchRequest<Other>) {
        copy._entityName = _entityName
        copy._entity = _entity
        copy.predicate = predicate
        copy.sortDescriptors = sortDescriptors
        copy.fetchLimit = fetchLimit
        copy.fetchOffset = fetchOffset
        copy.fetchBatchSize = fetchBatchSize
        copy.resultType = resultType
        copy.includesSubentities = includesSubentities
        copy.includesPropertyValues = includesPropertyValues
        copy.returnsObjectsAsFaults = returnsObjectsAsFaults
        copy.relationshipKeyPathsForPrefetching = relationshipKeyPathsForPrefetching
        copy.includesPendingChanges = includesPendingChanges
        copy.returnsDistinctResults = returnsDistinctResults
        copy.propertiesToFetch = propertiesToFetch
        copy.propertiesToGroupBy = propertiesToGroupBy
        copy.havingPredicate = havingPredicate
        copy.shouldRefreshRefetchedObjects = shouldRefreshRefetchedObjects
        copy.affectedStores = affectedStores
    }

    open override var description: String {
        var parts = [
            "<NSFetchRequest: \(Unmanaged.passUnretained(self).toOpaque())> (entity: \(entityName ?? "(null)")"
        ]
        parts.append("predicate: (\(predicate?.predicateFormat ?? "(null)"))")
        parts.append("sortDescriptors: (\(sortDescriptors.map { "\($0)" } ?? "(null)"))")
        parts.append("type: \(resultType.rawValue)")
        return parts.joined(separator: "; ") + ")"
    }
}
