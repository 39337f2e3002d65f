/// A store that keeps all its objects in memory, as cache nodes, and reads and writes its whole contents at
/// once (`load()`, `save()`). Subclass it for a custom file format: implement `load()` (creating cache nodes
/// and adding them with `addCacheNodes(_:)`), `save()`, `newReferenceObject(for:)`, and optionally
/// `newCacheNode(for:)`/`updateCacheNode(_:from:)` for custom node classes.
open class NSAtomicStore: NSPersistentStore, @unchecked Sendable {
    // @unchecked: its cache of nodes and versions changes only in calls the coordinator serializes per store
    // (`NSPersistentStore._serialized`).
    var _nodes: [NSManagedObjectID: NSAtomicStoreCacheNode] = [:]
    /// Row versions, for optimistic locking between contexts.
    var _versions: [NSManagedObjectID: Int64] = [:]

    /// Loads the store's contents into cache nodes. Subclasses override; the default loads nothing.
    open func load() throws {}

    /// Writes the cache nodes to the store. Subclasses override; the default writes nothing.
    open func save() throws {}

    /// A new cache node for a newly saved object, filled with its values.
    open func newCacheNode(for managedObject: NSManagedObject) -> NSAtomicStoreCacheNode {
        let node = NSAtomicStoreCacheNode(objectID: managedObject.objectID)
        return node
    }

    /// Copies a managed object's persistent values into its cache node.
    open func updateCacheNode(_ node: NSAtomicStoreCacheNode, from managedObject: NSManagedObject) {
        let layout = managedObject._layout
        let cache = NSMutableDictionary()
        for slot in layout.persistentSlots {
            let key = layout.slots[slot].name
            switch layout.kinds[slot] {
            case .toOne:
                if let destination = managedObject._toOneDestination(slot),
                    let destinationNode = _nodeForSave(destination.objectID)
                {
                    cache.setObject(destinationNode, forKey: key as NSString)
                }
            case .toMany(let ordered):
                let nodes = managedObject._toManyObjects(slot).compactMap { _nodeForSave($0.objectID) }
                let collection: Any = ordered ? NSOrderedSet(array: nodes) : NSSet(array: nodes)
                cache.setObject(collection, forKey: key as NSString)
            default:
                if let value = managedObject._resolvedValue(at: slot).publicValue {
                    cache.setObject(value, forKey: key as NSString)
                }
            }
        }
        node.propertyCache = cache
    }

    /// Nodes created during a save, found before they are added to the cache.
    var _pendingNodes: [NSManagedObjectID: NSAtomicStoreCacheNode] = [:]

    func _nodeForSave(_ objectID: NSManagedObjectID) -> NSAtomicStoreCacheNode? {
        _pendingNodes[objectID] ?? _nodes[objectID]
    }

    /// A new, unique reference object for an object being saved: the key its ID is made from.
    open func newReferenceObject(for managedObject: NSManagedObject) -> Any {
        UUID().uuidString
    }

    /// All cache nodes.
    open func cacheNodes() -> Set<NSAtomicStoreCacheNode> { Set(_nodes.values) }

    /// Adds cache nodes (from `load()`, or for newly saved objects).
    open func addCacheNodes(_ cacheNodes: Set<NSAtomicStoreCacheNode>) {
        for node in cacheNodes {
            _nodes[node.objectID] = node
            if _versions[node.objectID] == nil { _versions[node.objectID] = 1 }
        }
    }

    /// Called before cache nodes of deleted objects are removed.
    open func willRemoveCacheNodes(_ cacheNodes: Set<NSAtomicStoreCacheNode>) {}

    /// The cache node of an object.
    open func cacheNode(for objectID: NSManagedObjectID) -> NSAtomicStoreCacheNode? { _nodes[objectID] }

    /// The object ID for a reference object of `entity` in this store.
    open func objectID(for entity: NSEntityDescription, withReferenceObject data: Any) -> NSManagedObjectID {
        NSManagedObjectID(entity: entity, store: self, reference: NSManagedObjectID.Reference(referenceObject: data))
    }

    /// The reference object an object ID was made from.
    open func referenceObject(for objectID: NSManagedObjectID) -> Any {
        objectID._reference.referenceObject
    }

    open override func loadMetadata() throws {
        try super.loadMetadata()
        try load()
    }
}

extension NSAtomicStore: PersistentStoreBackend {
    func _row(of node: NSAtomicStoreCacheNode) -> StoreRow {
        let layout = node.objectID._entity._caches
        var values = StoredValues(repeating: .null, count: layout.slots.count)
        for slot in layout.persistentSlots {
            let value = node.value(forKey: layout.slots[slot].name)
            switch layout.kinds[slot] {
            case .toOne:
                if let destination = value as? NSAtomicStoreCacheNode { values[slot] = .objectID(destination.objectID) }
            case .toMany:
                values[slot] = .toManyFault
            case .attribute(let type), .derived(let type):
                values[slot] =
                    StoredValue.attributeValue(value, type: type) ?? value.map { .boxed(AnyBox($0)) } ?? .null
            case .fetched:
                break
            }
        }
        return StoreRow(objectID: node.objectID, values: values, version: _versions[node.objectID] ?? 1)
    }

    package func fetchRows(_ request: NSFetchRequest<NSFetchRequestResult>) throws -> StoreFetchResult {
        guard let entity = request.entity else { return .candidates([]) }
        let rows = _nodes.values.compactMap { node -> StoreRow? in
            let nodeEntity = node.objectID._entity
            let matches =
                request.includesSubentities ? nodeEntity.isKindOf(entity: entity) : nodeEntity._name == entity._name
            return matches ? _row(of: node) : nil
        }
        return .candidates(rows.sorted { Self._order($0.objectID, $1.objectID) })
    }

    /// A stable order for unsorted fetches: by key.
    static func _order(_ a: NSManagedObjectID, _ b: NSManagedObjectID) -> Bool {
        switch (a._reference, b._reference) {
        case (.primaryKey(let x), .primaryKey(let y)): return x < y
        default: return a.uriRepresentation().absoluteString < b.uriRepresentation().absoluteString
        }
    }

    package func row(for objectID: NSManagedObjectID) throws -> StoreRow? {
        _nodes[objectID].map(_row(of:))
    }

    package func destinations(of relationship: NSRelationshipDescription, from objectID: NSManagedObjectID) throws
        -> [NSManagedObjectID]
    {
        guard let node = _nodes[objectID] else { return [] }
        switch node.value(forKey: relationship._name) {
        case let ordered as NSOrderedSet:
            return ordered.array.compactMap { ($0 as? NSAtomicStoreCacheNode)?.objectID }
        case let set as NSSet:
            return set.allObjects.compactMap { ($0 as? NSAtomicStoreCacheNode)?.objectID }
                .sorted(by: Self._order)
        case let nodes as [NSAtomicStoreCacheNode]:
            return nodes.map(\.objectID)
        default:
            return []
        }
    }

    package func permanentIDs(for objects: [NSManagedObject]) throws -> [NSManagedObjectID] {
        objects.map { object in
            objectID(for: object._entity, withReferenceObject: newReferenceObject(for: object))
        }
    }

    package func save(_ changes: StoreSaveChanges) throws -> StoreSaveResult {
        guard !isReadOnly else {
            throw coreDataError(
                NSPersistentStoreSaveError, "The store at \(url?.path ?? "(memory)") was opened read-only")
        }
        var conflicts: [StoreConflict] = []
        for change in changes.updated + changes.deleted where !change.forced {
            let current = _versions[change.objectID]
            if current != change.expectedVersion {
                conflicts.append(
                    StoreConflict(
                        objectID: change.objectID, current: _nodes[change.objectID].map(_row(of:)),
                        expectedVersion: change.expectedVersion))
            }
        }
        if !conflicts.isEmpty { throw StoreConflicts(conflicts) }

        // Keep what is needed to put the cache back if writing fails.
        let savedNodes = _nodes
        let savedVersions = _versions
        let savedCaches = changes.updated.compactMap { change in
            _nodes[change.objectID].map { ($0, $0.propertyCache?.mutableCopy() as? NSMutableDictionary) }
        }
        var result = StoreSaveResult()
        _pendingNodes = [:]
        var added = Set<NSAtomicStoreCacheNode>()
        for change in changes.inserted {
            let node = newCacheNode(for: change.object)
            _pendingNodes[change.objectID] = node
            added.insert(node)
        }
        for change in changes.inserted {
            if let node = _pendingNodes[change.objectID] { updateCacheNode(node, from: change.object) }
            _versions[change.objectID] = 1
        }
        for change in changes.updated {
            if let node = _nodes[change.objectID] { updateCacheNode(node, from: change.object) }
            let version = (_versions[change.objectID] ?? 0) + 1
            _versions[change.objectID] = version
            result.versions[change.objectID] = version
        }
        addCacheNodes(added)
        _pendingNodes = [:]
        let removed = Set(changes.deleted.compactMap { _nodes[$0.objectID] })
        if !removed.isEmpty {
            willRemoveCacheNodes(removed)
            for node in removed {
                _nodes[node.objectID] = nil
                _versions[node.objectID] = nil
            }
        }
        do {
            try save()
        } catch {
            _nodes = savedNodes
            _versions = savedVersions
            for (node, cache) in savedCaches { node.propertyCache = cache }
            throw error
        }
        return result
    }
}
