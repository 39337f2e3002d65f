import Foundation

/// An `NSIncrementalStore` as the coordinator uses every store (`PersistentStoreBackend`), for one request of one
/// context: it turns the coordinator's calls into the store's public methods, and checks what the store answers
/// before anything above relies on it — node values against the model, IDs against the store and the entity, the
/// shapes of results — so that a store's mistake becomes an error naming the store class, the method and what was
/// wrong, instead of a crash or damaged objects later.
///
/// It also does what Core Data's coordinator does for incremental stores: optimistic locking (node versions compared
/// before a save, under the store's serialization) and the versions saved objects have afterwards.
final class IncrementalStoreBackend: PersistentStoreBackend, PersistentStoreDictionaryFetching {
    let store: NSIncrementalStore
    /// The context the request is for: the one whose objects the store's fetches register, and the one passed to
    /// `newValuesForObject(with:with:)`.
    let context: NSManagedObjectContext?

    init(store: NSIncrementalStore, context: NSManagedObjectContext?) {
        self.store = store
        self.context = context
    }

    var storeName: String { String(describing: type(of: store)) }

    // MARK: Fetching

    func fetchRows(_ request: NSFetchRequest<NSFetchRequestResult>) throws -> StoreFetchResult {
        let answer = try call("execute(_:with:)") { try store.execute(request, with: context) }
        let entityName = request.entity?.name ?? request.entityName ?? ""
        if request.resultType == .countResultType {
            return .count(try count(in: answer, entityName: entityName))
        }
        let wantsIDs = request.resultType == .managedObjectIDResultType
        guard let elements = Self.elements(of: answer) else {
            throw malformed(
                "execute(_:with:)",
                """
                returned \(type(of: answer)) for a fetch of '\(entityName)'; return an array of \
                \(wantsIDs ? "NSManagedObjectIDs" : "NSManagedObjects registered in the context")
                """)
        }
        var ids: [NSManagedObjectID] = []
        var objects: [NSManagedObject] = []
        ids.reserveCapacity(elements.count)
        for element in elements {
            let id: NSManagedObjectID
            switch element {
            case let object as NSManagedObject where !wantsIDs:
                id = object._objectID
                objects.append(object)
            case let objectID as NSManagedObjectID where wantsIDs:
                id = objectID
            default:
                throw malformed(
                    "execute(_:with:)",
                    """
                    returned a \(type(of: element)) in the results of a fetch of '\(entityName)'; return \
                    \(wantsIDs
                        ? "NSManagedObjectIDs for .managedObjectIDResultType"
                        : "NSManagedObjects (context.object(with: objectID)) for .managedObjectResultType")
                    """)
            }
            try check(id, "execute(_:with:)", isA: request.entity, includingSubentities: request.includesSubentities)
            ids.append(id)
        }
        // Objects registered in the asking context (as `context.object(with:)` makes them) are handed over as they
        // are; the context loads their values if the request wants them.
        if !wantsIDs, let context, objects.allSatisfy({ Self.isRegistered($0, in: context) }) {
            return .objects(objects)
        }
        // Other objects (of another context, say) are taken by ID; with their values now, as Apple's coordinator
        // loads them, if the request wants them with values.
        let loadsValues = !wantsIDs && !request.returnsObjectsAsFaults && request.includesPropertyValues
        return .rows(
            try ids.map { id in
                if loadsValues, let row = try row(for: id) { return row }
                return StoreRow(objectID: id, values: [], version: 0)
            })
    }

    private static func isRegistered(_ object: NSManagedObject, in context: NSManagedObjectContext) -> Bool {
        object.managedObjectContext === context && context.registeredObject(for: object._objectID) === object
    }

    func fetchDictionaries(_ fetch: StoreDictionaryFetch) throws -> [NSDictionary] {
        let answer = try call("execute(_:with:)") { try store.execute(fetch.request, with: context) }
        guard let elements = Self.elements(of: answer) else {
            throw malformed(
                "execute(_:with:)",
                "returned \(type(of: answer)) for a dictionary fetch of '\(fetch.entity.name ?? "")'; return an array")
        }
        return try elements.map { element in
            switch element {
            case let dictionary as NSDictionary: return dictionary
            case let dictionary as [String: Any]: return dictionary as NSDictionary
            default:
                throw malformed(
                    "execute(_:with:)",
                    """
                    returned a \(type(of: element)) in the results of a dictionary fetch of \
                    '\(fetch.entity.name ?? "")'; return dictionaries for .dictionaryResultType
                    """)
            }
        }
    }

    private func count(in answer: Any, entityName: String) throws -> Int {
        if let elements = Self.elements(of: answer), elements.count == 1 {
            switch elements[0] {
            case let number as Int where number >= 0: return number
            case let number as NSNumber where number.intValue >= 0: return number.intValue
            default: break
            }
        }
        throw malformed(
            "execute(_:with:)",
            """
            returned \(type(of: answer)) for a count of '\(entityName)'; return an array holding one non-negative \
            NSNumber for .countResultType
            """)
    }

    static func elements(of answer: Any) -> [Any]? {
        switch answer {
        case let array as [Any]: return array
        case let array as NSArray: return array.map { $0 }
        default: return nil
        }
    }

    // MARK: Objects and relationships

    func row(for objectID: NSManagedObjectID) throws -> StoreRow? {
        guard let context else {
            throw coreDataError(
                NSPersistentStoreOperationError,
                "\(storeName) is an NSIncrementalStore: loading \(objectID) needs the context that asks for it")
        }
        let node: NSIncrementalStoreNode
        do {
            node = try store.newValuesForObject(with: objectID, with: context)
        } catch let error as NSError
            where error.domain == NSCocoaErrorDomain && error.code == NSManagedObjectReferentialIntegrityError
        {
            return nil
        } catch {
            throw failure(error, "newValuesForObject(with:with:)", code: NSPersistentStoreOperationError)
        }
        return try row(from: node, of: objectID)
    }

    /// The row a node describes, checked against the entity: each value must be one of the attribute's type (or
    /// convertible to it as key-value coding converts), each to-one value an ID of the destination entity in this
    /// store, or `NSNull`.
    func row(from node: NSIncrementalStoreNode, of objectID: NSManagedObjectID) throws -> StoreRow {
        let method = "newValuesForObject(with:with:)"
        guard node.objectID == objectID else {
            throw malformed(method, "returned a node for \(node.objectID) when asked for \(objectID)")
        }
        let layout = objectID._entity._caches
        var values = StoredValues(repeating: .null, count: layout.slots.count)
        for slot in layout.slots.indices {
            let property = layout.slots[slot].property
            switch layout.kinds[slot] {
            case .attribute(let type), .derived(let type):
                // Transient attributes are the context's own; derived ones are the store's to compute, if it does.
                if case .attribute = layout.kinds[slot], !layout.slots[slot].isPersistent { continue }
                let value = node.value(for: property)
                if value == nil || value is NSNull { continue }
                guard let stored = StoredValue.attributeValue(value, type: type) else {
                    throw malformed(
                        method,
                        """
                        gave attribute '\(property.name)' of \(objectID) a \(Swift.type(of: value!)), which is not a \
                        value of its type (\(type))
                        """)
                }
                values[slot] = stored
            case .toOne:
                guard layout.slots[slot].isPersistent else { continue }
                var value = node.value(for: property)
                if value == nil, let relationship = property as? NSRelationshipDescription {
                    // Not in the node: the store answers it on its own, as Apple documents.
                    value = try relationshipValue(relationship, of: objectID)
                }
                values[slot] = try toOneValue(value, property: property, of: objectID, method: method)
            case .toMany:
                values[slot] = .toManyFault
            case .fetched:
                continue
            }
        }
        return StoreRow(objectID: objectID, values: values, version: Int64(clamping: node.version))
    }

    private func toOneValue(
        _ value: Any?, property: NSPropertyDescription, of objectID: NSManagedObjectID,
        method: String
    ) throws -> StoredValue {
        switch value {
        case nil, is NSNull:
            return .null
        case let destination as NSManagedObjectID:
            let relationship = property as? NSRelationshipDescription
            try check(destination, method, isA: relationship?.destinationEntity, includingSubentities: true)
            return .objectID(destination)
        default:
            throw malformed(
                method,
                """
                gave to-one relationship '\(property.name)' of \(objectID) a \(type(of: value!)); give the \
                destination's NSManagedObjectID, or NSNull for none
                """)
        }
    }

    private func relationshipValue(_ relationship: NSRelationshipDescription, of objectID: NSManagedObjectID) throws
        -> Any
    {
        try call("newValue(forRelationship:forObjectWith:with:)") {
            try store.newValue(forRelationship: relationship, forObjectWith: objectID, with: context)
        }
    }

    func destinations(of relationship: NSRelationshipDescription, from objectID: NSManagedObjectID) throws
        -> [NSManagedObjectID]
    {
        let method = "newValue(forRelationship:forObjectWith:with:)"
        let answer = try relationshipValue(relationship, of: objectID)
        let elements: [Any]
        switch answer {
        case let ids as [NSManagedObjectID]: elements = ids
        case let ids as Set<NSManagedObjectID>: elements = Array(ids)
        case let set as NSOrderedSet: elements = set.array
        case let set as NSSet: elements = set.allObjects
        case let array as [Any]: elements = array
        case let id as NSManagedObjectID where !relationship.isToMany: elements = [id]
        case is NSNull where !relationship.isToMany: elements = []
        default:
            throw malformed(
                method,
                """
                returned a \(type(of: answer)) for \(relationship.isToMany ? "to-many" : "to-one") relationship \
                '\(relationship.name)' of \(objectID); return \(relationship.isToMany
                    ? "an array or set of NSManagedObjectIDs" : "an NSManagedObjectID or NSNull")
                """)
        }
        return try elements.map { element in
            guard let id = element as? NSManagedObjectID else {
                throw malformed(
                    method,
                    """
                    returned a \(type(of: element)) among the destinations of '\(relationship.name)' of \(objectID); \
                    return NSManagedObjectIDs
                    """)
            }
            try check(id, method, isA: relationship.destinationEntity, includingSubentities: true)
            return id
        }
    }

    func permanentIDs(for objects: [NSManagedObject]) throws -> [NSManagedObjectID] {
        let method = "obtainPermanentIDs(for:)"
        let ids = try call(method) { try store.obtainPermanentIDs(for: objects) }
        guard ids.count == objects.count else {
            throw malformed(method, "returned \(ids.count) IDs for \(objects.count) objects; return one per object")
        }
        var seen = Set<NSManagedObjectID>(minimumCapacity: ids.count)
        for (object, id) in zip(objects, ids) {
            try check(id, method, isA: object._entity, includingSubentities: false)
            guard seen.insert(id).inserted else {
                throw malformed(method, "returned \(id) for two objects; each object needs an ID of its own")
            }
        }
        return ids
    }

    // MARK: Saving

    func save(_ changes: StoreSaveChanges) throws -> StoreSaveResult {
        guard !store.isReadOnly else {
            throw coreDataError(
                NSPersistentStoreSaveError,
                "The store \(storeName) at \(store.url?.absoluteString ?? "(no URL)") was added read-only",
                userInfo: [NSAffectedStoresErrorKey: [store]])
        }
        // Optimistic locking: each changed object's version in the store must still be the one the context read.
        var conflicts: [StoreConflict] = []
        for change in [changes.updated, changes.deleted].joined() where !change.forced {
            let current = try row(for: change.objectID)
            if current?.version != change.expectedVersion {
                conflicts.append(
                    StoreConflict(objectID: change.objectID, current: current, expectedVersion: change.expectedVersion))
            }
        }
        if !conflicts.isEmpty { throw StoreConflicts(conflicts) }

        let request = NSSaveChangesRequest(
            inserted: Set(changes.inserted.map(\.object)), updated: Set(changes.updated.map(\.object)),
            deleted: Set(changes.deleted.map(\.object)), locked: [])
        request.affectedStores = [store]
        do {
            _ = try store.execute(request, with: context)
        } catch let error as NSError
            where error.domain == NSCocoaErrorDomain && error.code == NSManagedObjectMergeError
        {
            // The store found conflicts of its own (with another process, say): the merge policy resolves them.
            let objects =
                (error.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSMergeConflict])?
                .map(\.sourceObject) ?? []
            guard !objects.isEmpty else { throw error }
            throw StoreConflicts(
                try objects.map {
                    StoreConflict(
                        objectID: $0._objectID, current: try row(for: $0._objectID), expectedVersion: $0._version)
                })
        } catch {
            throw failure(error, "execute(_:with:)", code: NSPersistentStoreSaveError)
        }

        // The versions the store now has, which the context's next save must name. Where the store does not answer
        // (it has lost the object already), the next version is assumed.
        var result = StoreSaveResult()
        for change in [changes.inserted, changes.updated].joined() {
            let saved = try? row(for: change.objectID)
            result.versions[change.objectID] = saved?.version ?? change.expectedVersion + 1
        }
        return result
    }

    // MARK: Checking

    /// Checks that `id` is a permanent ID of this store, of `entity` (or one of its subentities).
    private func check(
        _ id: NSManagedObjectID, _ method: String, isA entity: NSEntityDescription?, includingSubentities: Bool
    ) throws {
        guard !id.isTemporaryID else {
            throw malformed(method, "returned the temporary ID \(id); make IDs with newObjectID(for:referenceObject:)")
        }
        guard id._isInStore(store) else {
            throw malformed(
                method,
                """
                returned \(id), an ID of another store; make this store's IDs with its \
                newObjectID(for:referenceObject:)
                """)
        }
        guard let entity else { return }
        let fits = includingSubentities ? id._entity.isKindOf(entity: entity) : id._entity === entity
        guard fits else {
            throw malformed(
                method,
                """
                returned \(id) of entity '\(id._entity.name ?? "")' where \(includingSubentities ? "an object of" : "")\
                entity '\(entity.name ?? "")' was asked for
                """)
        }
    }

    /// An error for an answer of the store that does not fit what it was asked.
    private func malformed(_ method: String, _ problem: String) -> NSError {
        coreDataError(
            NSPersistentStoreOperationError, "\(storeName).\(method) \(problem)",
            userInfo: [NSAffectedStoresErrorKey: [store]])
    }

    /// Calls one of the store's methods, passing on errors in Core Data's domain and wrapping any other.
    private func call<T>(_ method: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw failure(error, method, code: NSPersistentStoreOperationError)
        }
    }

    /// An error the store threw: kept as it is if it is in `NSCocoaErrorDomain` (the store chose its code), else
    /// wrapped in an error of `code` naming the store and method, with the store's as `NSUnderlyingErrorKey`.
    private func failure(_ error: Error, _ method: String, code: Int) -> Error {
        let nsError = error as NSError
        if nsError.domain == NSCocoaErrorDomain { return error }
        // A Swift error bridged to NSError describes itself only as "The operation could not be completed": its own
        // description says more.
        let detail =
            (error as? LocalizedError)?.errorDescription
            ?? (type(of: error) is NSError.Type ? nsError.localizedDescription : String(describing: error))
        return coreDataError(
            code, "\(storeName).\(method) failed: \(detail)",
            userInfo: [NSUnderlyingErrorKey: nsError, NSAffectedStoresErrorKey: [store]])
    }
}
