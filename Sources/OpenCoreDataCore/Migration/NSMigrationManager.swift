import Synchronization

/// Migrates the data of a store of one model version into a store of another, as a mapping model describes: it
/// reads the source objects through a context on the source store, has each entity mapping's migration policy make
/// the destination objects in a context on the destination store, and saves them.
///
/// ```swift
/// let manager = NSMigrationManager(sourceModel: version1, destinationModel: version2)
/// try manager.migrateStore(
///     from: oldURL, type: .sqlite, mapping: mapping, to: newURL, type: .sqlite)
/// ```
///
/// A migration that fails leaves the source store as it was and no store at the destination (or the destination
/// store as it was, if there was one): the destination is written by one save at the end.
open class NSMigrationManager: NSObject, KeyValueCoding, PredicateFunctionTarget, @unchecked Sendable {
    // @unchecked: one migration at a time, on the thread that calls `migrateStore`; policies and the contexts it makes
    // run on that thread. Apple's manager is not thread-safe either.
    let _sourceModel: NSManagedObjectModel
    let _destinationModel: NSManagedObjectModel
    var _mappingModel: NSMappingModel?
    var _sourceContext: NSManagedObjectContext?
    var _destinationContext: NSManagedObjectContext?
    /// The user's own information, for policies to share state.
    open var userInfo: [AnyHashable: Any]?
    /// Whether a store type that can migrate itself does so (the SQLite store migrates in place with SQL, for an
    /// inferred mapping model), instead of the object-by-object migration. `true` by default.
    open var usesStoreSpecificMigrationManager = true

    /// The state of the migration under way.
    var _associations = MigrationAssociations()
    var _policies: [String: NSEntityMigrationPolicy] = [:]
    var _currentEntityMapping: NSEntityMapping?
    var _currentPropertyMapping: NSPropertyMapping?
    var _cancellation: (any Error)?
    /// An error found while evaluating an expression, which cannot throw: reported once the expression returns.
    var _expressionError: NSError?
    var _progress: Progress?
    /// The units of work done and to do, behind a lock: `migrationProgress` may be read from another thread while
    /// the migration runs, to show how far it has come.
    let _units = LockedState<(completed: Int64, total: Int64)>((0, 0))
    var _completedUnits: Int64 {
        get { _units.withLock { $0.completed } }
        set { _units.withLock { $0.completed = newValue } }
    }
    var _totalUnits: Int64 {
        get { _units.withLock { $0.total } }
        set { _units.withLock { $0.total = newValue } }
    }

    /// A manager for migrating data of `sourceModel` to `destinationModel`.
    public init(sourceModel: NSManagedObjectModel, destinationModel: NSManagedObjectModel) {
        _sourceModel = sourceModel
        _destinationModel = destinationModel
        super.init()
    }

    /// The model of the store migrated from.
    open var sourceModel: NSManagedObjectModel { _sourceModel }
    /// The model of the store migrated to.
    open var destinationModel: NSManagedObjectModel { _destinationModel }
    /// The mapping model of the migration under way (or last run); empty before the first.
    open var mappingModel: NSMappingModel { _mappingModel ?? NSMappingModel() }

    /// The context that reads the source store during a migration.
    open var sourceContext: NSManagedObjectContext {
        if let context = _sourceContext { return context }
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = NSPersistentStoreCoordinator(managedObjectModel: _sourceModel)
        _sourceContext = context
        return context
    }

    /// The context that writes the destination store during a migration.
    open var destinationContext: NSManagedObjectContext {
        if let context = _destinationContext { return context }
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = NSPersistentStoreCoordinator(managedObjectModel: _destinationModel)
        _destinationContext = context
        return context
    }

    /// The entity mapping being run.
    open var currentEntityMapping: NSEntityMapping { _currentEntityMapping ?? NSEntityMapping() }

    /// How far the migration has come, from 0 to 1: 0 until the migration has counted its work, 1 once it is done.
    /// It may be read from another thread while the migration runs.
    open var migrationProgress: Float {
        _units.withLock { units in
            units.total > 0 ? Float(Double(min(units.completed, units.total)) / Double(units.total)) : 0
        }
    }

    /// The progress of the migration under way (an OpenCoreData addition): a child of the thread's current
    /// `Progress` when the migration started, if it had one. Cancelling it cancels the migration with
    /// `NSMigrationCancelledError` (134120).
    open var progress: Progress? { _progress }

    /// The source model's entity of `mEntity`.
    open func sourceEntity(for mEntity: NSEntityMapping) -> NSEntityDescription? {
        mEntity.sourceEntityName.flatMap { _sourceModel.entitiesByName[$0] }
    }

    /// The destination model's entity of `mEntity`.
    open func destinationEntity(for mEntity: NSEntityMapping) -> NSEntityDescription? {
        mEntity.destinationEntityName.flatMap { _destinationModel.entitiesByName[$0] }
    }

    /// Forgets the associations and contexts of the last migration.
    open func reset() {
        _associations = MigrationAssociations()
        _policies = [:]
        _sourceContext = nil
        _destinationContext = nil
        _currentEntityMapping = nil
        _currentPropertyMapping = nil
        _cancellation = nil
        _expressionError = nil
        _progress = nil
        _completedUnits = 0
        _totalUnits = 0
    }

    // MARK: Migrating

    /// Migrates the store of type `sStoreType` at `sourceURL` into a store of type `dStoreType` at `dURL`, running
    /// every entity mapping of `mappings`. The source store is opened read-only and left as it is; the destination
    /// store is created if there is none (or added to, if there is).
    ///
    /// Errors are Core Data's: `NSMigrationMissingMappingModelError` (134140) without a mapping model,
    /// `NSMigrationManagerSourceStoreError` (134150) when the source store cannot be opened with the source model,
    /// `NSMigrationManagerDestinationStoreError` (134160) for the destination, `NSEntityMigrationPolicyError`
    /// (134170) when a policy throws, `NSMigrationError` (134110) otherwise — each with the underlying error.
    open func migrateStore(
        from sourceURL: URL, sourceType sStoreType: String, options sOptions: [AnyHashable: Any]? = nil,
        with mappings: NSMappingModel?, toDestinationURL dURL: URL, destinationType dStoreType: String,
        destinationOptions dOptions: [AnyHashable: Any]? = nil
    ) throws {
        try _migrate(
            from: sourceURL, type: sStoreType, options: sOptions, mapping: mappings, to: dURL, type: dStoreType,
            options: dOptions)
    }

    /// Migrates the store at `sourceURL` into a store at `destinationURL` (Swift-style spelling of
    /// `migrateStore(from:sourceType:options:with:toDestinationURL:destinationType:destinationOptions:)`).
    open func migrateStore(
        from sourceURL: URL, type sourceType: NSPersistentStore.StoreType,
        options sourceOptions: [AnyHashable: Any]? =
            nil, mapping: NSMappingModel, to destinationURL: URL, type destinationType: NSPersistentStore.StoreType,
        options destinationOptions: [AnyHashable: Any]? = nil
    ) throws {
        try _migrate(
            from: sourceURL, type: sourceType.rawValue, options: sourceOptions, mapping: mapping, to: destinationURL,
            type: destinationType.rawValue, options: destinationOptions)
    }

    /// Stops the migration under way: it fails with `error` at the next object.
    open func cancelMigrationWithError(_ error: any Error) {
        _cancellation = error
    }

    // MARK: Associations

    /// Records that `destinationInstance` was made from `sourceInstance` by `entityMapping`, for the
    /// relationship stage and the instance lookups.
    open func associate(
        sourceInstance: NSManagedObject, withDestinationInstance destinationInstance: NSManagedObject,
        for entityMapping: NSEntityMapping
    ) {
        _associations.associate(sourceInstance, destinationInstance, mapping: entityMapping.name ?? "")
    }

    /// The destination objects made from `sourceInstances` (all of the mapping's when `nil`) by the entity mapping
    /// named `mappingName`.
    open func destinationInstances(forEntityMappingName mappingName: String, sourceInstances: [NSManagedObject]?)
        -> [NSManagedObject]
    {
        guard let sourceInstances else { return _associations.destinations(ofMapping: mappingName) }
        return sourceInstances.flatMap { _associations.destinations(of: $0, mapping: mappingName) }
    }

    /// The source objects that the entity mapping named `mappingName` made `destinationInstances` from (all of the
    /// mapping's when `nil`).
    open func sourceInstances(forEntityMappingName mappingName: String, destinationInstances: [NSManagedObject]?)
        -> [NSManagedObject]
    {
        guard let destinationInstances else { return _associations.sources(ofMapping: mappingName) }
        return destinationInstances.flatMap { _associations.sources(of: $0, mapping: mappingName) }
    }

    // MARK: Key-value coding and FUNCTION($manager, …)

    /// The manager's properties by name, for `$manager.sourceContext` in mapping expressions.
    public func value(forKey key: String) -> Any? {
        switch key {
        case "sourceContext": return sourceContext
        case "destinationContext": return destinationContext
        case "sourceModel": return _sourceModel
        case "destinationModel": return _destinationModel
        case "mappingModel": return mappingModel
        case "userInfo": return userInfo
        case "currentEntityMapping": return _currentEntityMapping
        case "migrationProgress": return NSNumber(value: migrationProgress)
        default: return nil
        }
    }

    static let functionNames: Set<String> = [
        "fetchRequestForSourceEntityNamed:predicateString:",
        "fetchRequestForSourceEntityNamed:predicateString:includesSubentities:",
        "destinationInstancesForEntityMappingNamed:sourceInstances:",
        "sourceInstancesForEntityMappingNamed:destinationInstances:",
        "destinationInstancesForSourceRelationshipNamed:sourceInstances:",
    ]

    /// The methods mapping models call on `$manager`.
    public func respondsToPredicateFunction(_ name: String) -> Bool {
        Self.functionNames.contains(name)
    }

    public func performPredicateFunction(_ name: String, arguments: [Any?]) -> Any? {
        switch name {
        case "fetchRequestForSourceEntityNamed:predicateString:",
            "fetchRequestForSourceEntityNamed:predicateString:includesSubentities:":
            let subentities = arguments.count > 2 && (PredicateNumber(arguments[2] as Any)?.int64Value ?? 0) != 0
            return _fetchRequest(
                forSourceEntityNamed: arguments.first.flatMap { $0 as? String },
                predicateString: arguments.count > 1 ? arguments[1] as? String : nil, includesSubentities: subentities)
        case "destinationInstancesForEntityMappingNamed:sourceInstances:":
            guard let mappingName = arguments.first as? String else { return [NSManagedObject]() }
            let sources = MigrationAssociations.objects(arguments.count > 1 ? arguments[1] : nil)
            return destinationInstances(forEntityMappingName: mappingName, sourceInstances: sources)
        case "sourceInstancesForEntityMappingNamed:destinationInstances:":
            guard let mappingName = arguments.first as? String else { return [NSManagedObject]() }
            let destinations = MigrationAssociations.objects(arguments.count > 1 ? arguments[1] : nil)
            return sourceInstances(forEntityMappingName: mappingName, destinationInstances: destinations)
        case "destinationInstancesForSourceRelationshipNamed:sourceInstances:":
            let sources = MigrationAssociations.objects(arguments.count > 1 ? arguments[1] : nil)
            return _destinationInstances(
                forSourceRelationshipNamed: arguments.first as? String ?? "", sourceInstances: sources)
        default:
            return nil
        }
    }

    /// A fetch request for the objects of a source entity (without its subentities unless asked: each subentity has
    /// its own entity mapping), filtered by a predicate format from the mapping model.
    func _fetchRequest(forSourceEntityNamed name: String?, predicateString: String?, includesSubentities: Bool)
        -> NSFetchRequest<NSFetchRequestResult>
    {
        let request = NSFetchRequest<NSFetchRequestResult>(entityName: name ?? "")
        request.includesSubentities = includesSubentities
        guard let name, _sourceModel.entitiesByName[name] != nil else {
            _expressionError =
                _expressionError
                ?? coreDataError(
                    NSMigrationError,
                    "The mapping model fetches source entity '\(name ?? "")', which the source model lacks")
            request.predicate = NSPredicate(value: false)
            return request
        }
        if let format = predicateString, format != "TRUEPREDICATE" {
            do {
                request.predicate = try NSPredicate(validatingFormat: format)
            } catch {
                _expressionError =
                    _expressionError
                    ?? coreDataError(
                        NSMigrationError, "The source predicate of entity '\(name)' in the mapping model is malformed",
                        userInfo: [NSUnderlyingErrorKey: error])
                request.predicate = NSPredicate(value: false)
            }
        }
        return request
    }

    /// The destination objects made from `sourceInstances`, the destinations of the source relationship `name`:
    /// whatever mappings made them, restricted to objects the destination relationship being set can hold.
    func _destinationInstances(forSourceRelationshipNamed name: String, sourceInstances: [NSManagedObject]?)
        -> [NSManagedObject]
    {
        let wanted = _currentPropertyMapping?.name.flatMap { propertyName in
            _currentEntityMapping.flatMap(destinationEntity(for:))?._caches.relationshipsByName[propertyName]
        }?._destinationEntity
        return (sourceInstances ?? []).flatMap { source in
            _associations.destinations(of: source).filter { destination in
                wanted.map { destination._entity.isKindOf(entity: $0) } ?? true
            }
        }
    }
}

/// Which source objects became which destination objects, by entity mapping, in the order they were made.
struct MigrationAssociations {
    private var destinationsBySource: [String: [ObjectIdentifier: [NSManagedObject]]] = [:]
    private var sourcesByDestination: [String: [ObjectIdentifier: [NSManagedObject]]] = [:]
    private var allDestinationsBySource: [ObjectIdentifier: [NSManagedObject]] = [:]
    private var destinationOrder: [String: [NSManagedObject]] = [:]
    private var sourceOrder: [String: [NSManagedObject]] = [:]

    mutating func associate(_ source: NSManagedObject, _ destination: NSManagedObject, mapping: String) {
        let sourceKey = ObjectIdentifier(source)
        let destinationKey = ObjectIdentifier(destination)
        if destinationsBySource[mapping, default: [:]][sourceKey] == nil {
            sourceOrder[mapping, default: []].append(source)
        }
        if sourcesByDestination[mapping, default: [:]][destinationKey] == nil {
            destinationOrder[mapping, default: []].append(destination)
        }
        destinationsBySource[mapping, default: [:]][sourceKey, default: []].append(destination)
        sourcesByDestination[mapping, default: [:]][destinationKey, default: []].append(source)
        allDestinationsBySource[sourceKey, default: []].append(destination)
    }

    func destinations(of source: NSManagedObject, mapping: String) -> [NSManagedObject] {
        destinationsBySource[mapping]?[ObjectIdentifier(source)] ?? []
    }

    func sources(of destination: NSManagedObject, mapping: String) -> [NSManagedObject] {
        sourcesByDestination[mapping]?[ObjectIdentifier(destination)] ?? []
    }

    func destinations(of source: NSManagedObject) -> [NSManagedObject] {
        allDestinationsBySource[ObjectIdentifier(source)] ?? []
    }

    func destinations(ofMapping mapping: String) -> [NSManagedObject] { destinationOrder[mapping] ?? [] }
    func sources(ofMapping mapping: String) -> [NSManagedObject] { sourceOrder[mapping] ?? [] }

    /// The managed objects of a value an expression gave: one object, or a collection of them.
    static func objects(_ value: Any?) -> [NSManagedObject]? {
        switch PredicateValueComparison.unwrap(value) {
        case nil: return nil
        case let object as NSManagedObject: return [object]
        case let objects as [NSManagedObject]: return objects
        case let objects as Set<NSManagedObject>: return Array(objects)
        case let set as NSOrderedSet: return set.array.compactMap { $0 as? NSManagedObject }
        case let set as NSSet: return set.allObjects.compactMap { $0 as? NSManagedObject }
        case let array as [Any]: return array.compactMap { $0 as? NSManagedObject }
        default: return []
        }
    }
}
