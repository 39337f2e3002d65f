/// Merging changes saved by other contexts.
extension NSManagedObjectContext {
    /// Merges the changes of a did-save notification of another context: objects it updated are refreshed
    /// (keeping this context's own unsaved changes), objects it deleted are removed.
    ///
    /// ```swift
    /// NotificationCenter.default.addObserver(
    ///     forName: NSManagedObjectContext.didSaveObjectsNotification, object: background, queue: nil
    /// ) { note in viewContext.perform { viewContext.mergeChanges(fromContextDidSave: note) } }
    /// ```
    public func mergeChanges(fromContextDidSave notification: Notification) {
        _assertOnQueue()
        let info = notification.userInfo ?? [:]
        let updated = NSManagedObjectContext._objectIDs(info[NSUpdatedObjectsKey])
        let deleted = NSManagedObjectContext._objectIDs(info[NSDeletedObjectsKey])
        // Changes saved through another coordinator (a persistent history transaction's notification has no
        // context) reached the file behind this coordinator's row cache.
        let source = notification.object as? NSManagedObjectContext
        if let coordinator = persistentStoreCoordinator, source?.persistentStoreCoordinator !== coordinator {
            coordinator._invalidateRows(of: updated + deleted)
        }
        _mergeSaved(
            inserted: NSManagedObjectContext._objectIDs(info[NSInsertedObjectsKey]), updated: updated, deleted: deleted)
    }

    /// Merges changes described by object IDs or their URIs (from another process, or from a batch request's result)
    /// into `contexts`, as `mergeChanges(fromContextDidSave:)` does: `NSUpdatedObjectsKey` objects are refreshed,
    /// `NSInsertedObjectsKey` ones faulted in, `NSDeletedObjectsKey` ones removed.
    ///
    /// ```swift
    /// let result = try context.execute(batchDelete) as? NSBatchDeleteResult
    /// let ids = result?.result as? [NSManagedObjectID] ?? []
    /// NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSDeletedObjectsKey: ids], into: [viewContext])
    /// ```
    public class func mergeChanges(
        fromRemoteContextSave changeNotificationData: [AnyHashable: Any],
        into contexts: [NSManagedObjectContext]
    ) {
        for context in contexts {
            context.performAndWait {
                let coordinator = context.persistentStoreCoordinator
                func ids(_ keys: [String]) -> [NSManagedObjectID] {
                    keys.flatMap { key -> [NSManagedObjectID] in
                        let value = changeNotificationData[key] ?? changeNotificationData[AnyHashable(key as NSString)]
                        return _objectIDs(value)
                            + _uris(value).compactMap { coordinator?.managedObjectID(forURIRepresentation: $0) }
                    }
                }
                let updated = ids([NSUpdatedObjectsKey, NotificationKey.updatedObjectIDs.rawValue])
                let deleted = ids([NSDeletedObjectsKey, NotificationKey.deletedObjectIDs.rawValue])
                coordinator?._invalidateRows(of: updated + deleted)
                context._mergeSaved(
                    inserted: ids([NSInsertedObjectsKey, NotificationKey.insertedObjectIDs.rawValue]),
                    updated: updated, deleted: deleted)
            }
        }
    }

    static func _objectIDs(_ value: Any?) -> [NSManagedObjectID] {
        let elements: [Any]
        switch value {
        case let set as Set<NSManagedObject>: return set.map(\._objectID)
        case let set as Set<NSManagedObjectID>: return Array(set)
        case let set as NSSet: elements = set.allObjects
        case let array as [Any]: elements = array
        default: return []
        }
        return elements.compactMap { element in
            (element as? NSManagedObjectID) ?? (element as? NSManagedObject)?._objectID
        }
    }

    static func _uris(_ value: Any?) -> [URL] {
        switch value {
        case let set as Set<URL>: return Array(set)
        case let array as [URL]: return array
        case let set as NSSet: return set.allObjects.compactMap { $0 as? URL }
        default: return []
        }
    }

    /// Applies changes another context saved, given by object ID: updated objects are refreshed, inserted ones are
    /// registered (as faults), deleted ones removed; the objects-did-change notification lists them, so that
    /// fetched results controllers see what was merged.
    func _mergeSaved(inserted: [NSManagedObjectID], updated: [NSManagedObjectID], deleted: [NSManagedObjectID]) {
        // A pinned context reads what it merges at the generation of its next read.
        _queryGenerationMovesOn()
        var faultedIn: [NSManagedObject] = []
        for id in inserted where !id.isTemporaryID && _registry[id] == nil {
            faultedIn.append(_materialize(id, row: nil))
        }
        var refreshed: [NSManagedObject] = []
        for id in updated {
            guard let object = _registry[id]?.takeUnretainedValue() else { continue }
            refresh(object, mergeChanges: true)
            refreshed.append(object)
        }
        var removed: [NSManagedObject] = []
        for id in deleted {
            guard let object = _registry[id]?.takeUnretainedValue() else { continue }
            removed.append(object)
        }
        let removedIDs = Set(removed.map(ObjectIdentifier.init))
        if !removedIDs.isEmpty {
            // Relationships that still point at the removed objects are reloaded when next read.
            for object in _registeredObjectsSnapshot() {
                guard !object._values.isEmpty else { continue }
                for slot in object._layout.relationshipSlots {
                    switch object._values[slot] {
                    case .toMany(let contents):
                        for destination in contents.objects where removedIDs.contains(ObjectIdentifier(destination)) {
                            contents.remove(destination)
                        }
                    case .object(let destination) where removedIDs.contains(ObjectIdentifier(destination)):
                        object._values[slot] = .null
                    default:
                        break
                    }
                }
            }
        }
        if !removed.isEmpty {
            _announcedInsertions = nil
            _announcedDeletions = nil
            _announcedUpdates = nil
        }
        for object in removed {
            _inserted.remove(object)
            _updated.remove(object)
            _deleted.remove(object)
            object.willTurnIntoFault()
            _unregister(object)
            object._flags = [.fault, .deletedAndSaved]
            object._values = []
            object._committed = nil
            object._context = nil
            object.didTurnIntoFault()
        }
        guard !refreshed.isEmpty || !removed.isEmpty || !inserted.isEmpty else { return }
        var info: [AnyHashable: Any] = [:]
        if !faultedIn.isEmpty { info[NSInsertedObjectsKey] = Set(faultedIn) }
        if !refreshed.isEmpty { info[NSRefreshedObjectsKey] = Set(refreshed) }
        if !removed.isEmpty { info[NSDeletedObjectsKey] = Set(removed) }
        // This notification reports the refreshes: the end of the event does not again.
        for object in _eventObjects { object._flags.remove(.eventRefreshed) }
        NotificationCenter.default.post(
            name: NSManagedObjectContext.didChangeObjectsNotification, object: self, userInfo: info)
        NotificationCenter.default.post(
            name: NSManagedObjectContext.didMergeChangesObjectIDsNotification, object: self,
            userInfo: [
                NotificationKey.insertedObjectIDs.rawValue: Set(inserted),
                NotificationKey.updatedObjectIDs.rawValue: Set(updated),
                NotificationKey.deletedObjectIDs.rawValue: Set(deleted),
            ])
    }

    /// After a save: the contexts that asked to follow this one's parent (or coordinator) merge the changes, and
    /// so do this context's own children that asked to follow it, since what it saved is their parent's save.
    func _propagateSaveToOtherContexts(
        inserted: [NSManagedObjectID], updated: [NSManagedObjectID], deleted: [NSManagedObjectID]
    ) {
        var followers: [NSManagedObjectContext] = []
        if let coordinator = _coordinator {
            followers = coordinator._withLock { coordinator._rootContexts.compactMap(\.context) }
        } else if let parent = _parentContext {
            followers = parent._children.compactMap(\.context)
        }
        followers += _children.compactMap(\.context)
        for context in followers where context !== self && context._automaticallyMergesChangesFromParent {
            let ids = UncheckedSendable((inserted, updated, deleted))
            context.perform {
                context._mergeSaved(inserted: ids.value.0, updated: ids.value.1, deleted: ids.value.2)
            }
        }
    }
}
