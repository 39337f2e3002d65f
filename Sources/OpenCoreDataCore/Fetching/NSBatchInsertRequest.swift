/// What an `NSBatchInsertRequest` returns in its result.
public enum NSBatchInsertRequestResultType: UInt, Sendable {
    /// Only whether the insertion succeeded (`true`).
    case statusOnly = 0
    /// The IDs of the inserted objects.
    case objectIDs = 1
    /// The number of inserted objects.
    case count = 2
}

/// Inserts many objects of one entity into the store from dictionaries of attribute values, without making managed
/// objects in a context: on the SQLite store one transaction of prepared `INSERT`s.
///
/// The values come from `objectsToInsert`, or from a handler called until it returns `true`: `dictionaryHandler`
/// fills a dictionary, `managedObjectHandler` sets the attributes of an object (of the entity's class) that belongs
/// to no context. Attributes that are not given get their default values. Only attributes can be set; an unknown key,
/// a relationship or a value of the wrong type throws, naming the key. Validation rules are not applied, and the
/// contexts learn of the new objects only when their IDs are merged.
///
/// ```swift
/// var rows = source.makeIterator()
/// let request = NSBatchInsertRequest(entityName: "Quake", dictionaryHandler: { dictionary in
///     guard let row = rows.next() else { return true }
///     dictionary["magnitude"] = row.magnitude
///     dictionary["place"] = row.place
///     return false
/// })
/// request.resultType = .objectIDs
/// let ids = (try context.execute(request) as? NSBatchInsertResult)?.result as? [NSManagedObjectID] ?? []
/// ```
///
/// Apple documents batch inserts for the SQLite store only; OpenCoreData's in-memory and atomic stores execute them
/// too, with the same results.
open class NSBatchInsertRequest: NSPersistentStoreRequest, @unchecked Sendable {
    // @unchecked: as NSPersistentStoreRequest: configured, then executed; not changed while executing.
    var _entityName: String
    var _entity: NSEntityDescription?

    /// The attribute values of the objects to insert, one dictionary per object.
    open var objectsToInsert: [[String: Any]]?
    /// Called for each object to insert, with an empty dictionary to fill; returns `true` (leaving the dictionary
    /// unused) when there is nothing more to insert.
    open var dictionaryHandler: ((NSMutableDictionary) -> Bool)?
    /// Called for each object to insert, with an object of the entity to set attributes of; returns `true` (leaving
    /// the object unused) when there is nothing more to insert.
    open var managedObjectHandler: ((NSManagedObject) -> Bool)?
    /// What the result holds.
    open var resultType: NSBatchInsertRequestResultType = .statusOnly

    /// A request that inserts one object of the entity named `entityName` per dictionary.
    public init(entityName: String, objects dictionaries: [[String: Any]]) {
        _entityName = entityName
        objectsToInsert = dictionaries
        super.init()
    }

    /// A request that inserts one object of `entity` per dictionary.
    public init(entity: NSEntityDescription, objects dictionaries: [[String: Any]]) {
        _entityName = entity._name ?? ""
        _entity = entity
        objectsToInsert = dictionaries
        super.init()
    }

    /// A request that inserts objects of the entity named `entityName` from the dictionaries `handler` fills, until
    /// it returns `true`.
    public convenience init(entityName: String, dictionaryHandler handler: @escaping (NSMutableDictionary) -> Bool) {
        self.init(entityName: entityName, objects: [])
        objectsToInsert = nil
        dictionaryHandler = handler
    }

    /// A request that inserts objects of `entity` from the dictionaries `handler` fills, until it returns `true`.
    public convenience init(
        entity: NSEntityDescription, dictionaryHandler handler: @escaping (NSMutableDictionary) -> Bool
    ) {
        self.init(entity: entity, objects: [])
        objectsToInsert = nil
        dictionaryHandler = handler
    }

    /// A request that inserts objects of the entity named `entityName` whose attributes `handler` sets, until it
    /// returns `true`.
    public convenience init(entityName: String, managedObjectHandler handler: @escaping (NSManagedObject) -> Bool) {
        self.init(entityName: entityName, objects: [])
        objectsToInsert = nil
        managedObjectHandler = handler
    }

    /// A request that inserts objects of `entity` whose attributes `handler` sets, until it returns `true`.
    public convenience init(
        entity: NSEntityDescription, managedObjectHandler handler: @escaping (NSManagedObject) -> Bool
    ) {
        self.init(entity: entity, objects: [])
        objectsToInsert = nil
        managedObjectHandler = handler
    }

    /// The name of the entity of the inserted objects.
    open var entityName: String { _entityName }

    /// The entity of the inserted objects; for a request made with a name, known once it has been executed.
    open var entity: NSEntityDescription? { _entity }

    open override var requestType: NSPersistentStoreRequestType { .batchInsertRequestType }

    open override func copy(with zone: NSZone? = nil) -> Any {
        let copy = NSBatchInsertRequest(entityName: _entityName, objects: [])
        copy._entity = _entity
        copy.objectsToInsert = objectsToInsert
        copy.dictionaryHandler = dictionaryHandler
        copy.managedObjectHandler = managedObjectHandler
        copy.resultType = resultType
        copy.affectedStores = affectedStores
        return copy
    }

    open override var description: String {
        "<NSBatchInsertRequest: \(Unmanaged.passUnretained(self).toOpaque())> (entity: \(_entityName); "
            + "resultType: \(resultType.rawValue))"
    }
}
