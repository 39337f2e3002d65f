/// The kinds of merge policy.
public enum NSMergePolicyType: UInt, Sendable {
    /// A conflict fails the save (the default).
    case errorMergePolicyType = 0
    /// For each conflicting property, the store's value wins over the context's change.
    case mergeByPropertyStoreTrumpMergePolicyType = 1
    /// For each conflicting property, the context's change wins; other properties take the store's values.
    case mergeByPropertyObjectTrumpMergePolicyType = 2
    /// The context's version of the object replaces the store's entirely.
    case overwriteMergePolicyType = 3
    /// The context's changes to the conflicting object are discarded.
    case rollbackMergePolicyType = 4
}

/// How a context resolves conflicts between its unsaved changes and changes saved meanwhile by another context
/// or process.
///
/// ```swift
/// context.mergePolicy = NSMergePolicy.mergeByPropertyObjectTrump
/// ```
open class NSMergePolicy: NSObject, @unchecked Sendable {
    // @unchecked: `mergeType` is a constant; a policy has no other state.
    public let mergeType: NSMergePolicyType

    public init(merge ty: NSMergePolicyType) {
        mergeType = ty
        super.init()
    }

    public static let error = NSMergePolicy(merge: .errorMergePolicyType)
    public static let mergeByPropertyStoreTrump = NSMergePolicy(merge: .mergeByPropertyStoreTrumpMergePolicyType)
    public static let mergeByPropertyObjectTrump = NSMergePolicy(merge: .mergeByPropertyObjectTrumpMergePolicyType)
    public static let overwrite = NSMergePolicy(merge: .overwriteMergePolicyType)
    public static let rollback = NSMergePolicy(merge: .rollbackMergePolicyType)

    /// Resolves optimistic-locking conflicts by changing the objects of the saving context; throws if the policy
    /// does not resolve them.
    open func resolve(optimisticLockingConflicts list: [NSMergeConflict]) throws {
        // The error policy reports every conflict of the save at once, as Apple's does.
        if mergeType == .errorMergePolicyType, let context = list.lazy.compactMap({ $0.sourceObject._context }).first {
            throw context._mergeError(list)
        }
        for conflict in list {
            try _resolve(conflict)
        }
    }

    /// Resolves conflicts of any kind: optimistic-locking conflicts (`NSMergeConflict`) and uniqueness constraint
    /// conflicts (`NSConstraintConflict`).
    open func resolve(mergeConflicts list: [Any]) throws {
        try resolve(optimisticLockingConflicts: list.compactMap { $0 as? NSMergeConflict })
        try resolve(constraintConflicts: list.compactMap { $0 as? NSConstraintConflict })
    }

    /// Resolves uniqueness constraint conflicts by keeping one object of each conflict and deleting the others
    /// (objects inserted by the save are then never written). The object kept is the stored one when there is one,
    /// so that its identity and relationships stay: an upsert on the constrained values. Otherwise it is the newest
    /// of the saving context's objects under the trump-by-object and overwrite policies, the oldest under the others.
    ///
    /// - `mergeByPropertyObjectTrump`: the stored object takes the values the conflicting objects set.
    /// - `overwrite`: the stored object takes all the values of the newest conflicting object.
    /// - `mergeByPropertyStoreTrump`, `rollback`: the stored object keeps its values.
    ///
    /// Relationships of deleted objects move to the object kept. The error policy throws
    /// `NSManagedObjectConstraintMergeError` with the conflicts.
    open func resolve(constraintConflicts list: [NSConstraintConflict]) throws {
        guard !list.isEmpty else { return }
        if mergeType == .errorMergePolicyType {
            let context = list.lazy.compactMap { $0.conflictingObjects.first?._context }.first
            throw context?._constraintError(list)
                ?? coreDataError(
                    NSManagedObjectConstraintMergeError,
                    "\(list.count) uniqueness constraint conflict(s) cannot be saved",
                    userInfo: [NSPersistentStoreSaveConflictsErrorKey: list])
        }
        for conflict in list { _resolve(conflict) }
    }

    func _resolve(_ conflict: NSConstraintConflict) {
        let objects = conflict.conflictingObjects.filter { $0._context != nil && !$0._flags.contains(.deleted) }
            .sorted { $0._objectID._creationOrder < $1._objectID._creationOrder }
        guard let context = objects.first?._context else { return }
        let objectWins =
            mergeType == .mergeByPropertyObjectTrumpMergePolicyType || mergeType == .overwriteMergePolicyType
        let database = conflict.databaseObject.flatMap { $0._flags.contains(.deleted) ? nil : $0 }
        let kept = database ?? (objectWins ? objects.last! : objects.first!)
        for loser in objects where loser !== kept {
            if database != nil, objectWins { _copyValues(of: loser, to: kept) }
            _moveRelationships(of: loser, to: kept)
            context.delete(loser)
        }
    }

    /// Copies the values `source` set onto `target`: under the overwrite policy every attribute and to-one
    /// relationship, else those it changed (for an inserted object, those it was given, not its defaults).
    private func _copyValues(of source: NSManagedObject, to target: NSManagedObject) {
        let changed = source.changedValues()
        let targetProperties = target.entity.propertiesByName
        for (name, property) in source.entity.propertiesByName where targetProperties[name] != nil {
            if property._isTransient { continue }
            if let relationship = property as? NSRelationshipDescription, relationship.isToMany { continue }
            guard property is NSAttributeDescription || property is NSRelationshipDescription else { continue }
            let value = source.value(forKey: name)
            if mergeType != .overwriteMergePolicyType, changed[name] == nil { continue }
            target.setValue(value, forKey: name)
        }
    }

    /// Moves the destinations of `source`'s to-many relationships to the same relationships of `target`, and sets
    /// `target`'s empty to-one relationships to `source`'s destinations, so that deleting `source` loses no link.
    private func _moveRelationships(of source: NSManagedObject, to target: NSManagedObject) {
        let targetRelationships = target.entity.relationshipsByName
        for (name, relationship) in source.entity.relationshipsByName where targetRelationships[name] != nil {
            if relationship._isTransient { continue }
            if relationship.isToMany {
                if relationship.isOrdered {
                    let destinations = source.mutableOrderedSetValue(forKey: name).array
                    if !destinations.isEmpty {
                        target.mutableOrderedSetValue(forKey: name).addObjects(from: destinations)
                    }
                } else {
                    let destinations = source.mutableSetValue(forKey: name).allObjects
                    if !destinations.isEmpty { target.mutableSetValue(forKey: name).addObjects(from: destinations) }
                }
            } else if target.value(forKey: name) == nil, let destination = source.value(forKey: name) {
                target.setValue(destination, forKey: name)
            }
        }
    }

    func _resolve(_ conflict: NSMergeConflict) throws {
        let object = conflict.sourceObject
        guard let context = object._context else { return }
        switch mergeType {
        case .errorMergePolicyType:
            throw context._mergeError([conflict])
        case .overwriteMergePolicyType:
            object._forceNextSave = true
        case .rollbackMergePolicyType:
            context._adoptStoreValues(of: object, row: conflict._storeRow, keepingChanges: false)
        case .mergeByPropertyObjectTrumpMergePolicyType:
            context._adoptStoreValues(of: object, row: conflict._storeRow, keepingChanges: true)
        case .mergeByPropertyStoreTrumpMergePolicyType:
            context._adoptStoreValues(
                of: object, row: conflict._storeRow, keepingChanges: true,
                storeWinsFor: conflict._changedInStore)
        }
    }
}

/// A conflict found when saving: the object changed in the store since the context last saw it.
open class NSMergeConflict: NSObject, @unchecked Sendable {
    // @unchecked: every property is a constant; `sourceObject` is used on its context's queue, as any managed object.
    /// The object of the saving context.
    public let sourceObject: NSManagedObject
    /// The values as the saving context last saw them (the object's committed values).
    public let objectSnapshot: [String: Any]?
    /// The values in the coordinator's cache — as this release has no separate row cache, the store's.
    public let cachedSnapshot: [String: Any]?
    /// The values now in the store; `nil` if the object was deleted there.
    public let persistedSnapshot: [String: Any]?
    /// The version the context last saw.
    public let oldVersionNumber: Int
    /// The version now in the store (0 if deleted).
    public let newVersionNumber: Int

    let _storeRow: StoreRow?
    let _changedInStore: SlotSet

    /// A conflict a store found while saving: `srcObject` changed in the store since its context read it (at
    /// version `oldvers`), and the store now has version `newvers` (0 if the object was deleted there). A store that
    /// finds conflicts in its own transaction (another process wrote meanwhile) throws them in an error of code
    /// `NSManagedObjectMergeError` under `NSPersistentStoreSaveConflictsErrorKey`; the saving context's merge policy
    /// then resolves them against what the store answers for each object.
    ///
    /// ```swift
    /// let conflict = NSMergeConflict(source: object, newVersion: 3, oldVersion: 2,
    ///                                cachedSnapshot: nil, persistedSnapshot: ["name": "Ann"])
    /// throw NSError(domain: NSCocoaErrorDomain, code: NSManagedObjectMergeError,
    ///               userInfo: [NSPersistentStoreSaveConflictsErrorKey: [conflict]])
    /// ```
    public init(
        source srcObject: NSManagedObject, newVersion newvers: Int, oldVersion oldvers: Int,
        cachedSnapshot cachesnap: [String: Any]?, persistedSnapshot persnap: [String: Any]?
    ) {
        sourceObject = srcObject
        _storeRow = nil
        _changedInStore = SlotSet()
        oldVersionNumber = oldvers
        newVersionNumber = newvers
        objectSnapshot = srcObject._committed.map { NSMergeConflict.snapshot($0, layout: srcObject._layout) }
        cachedSnapshot = cachesnap
        persistedSnapshot = persnap
        super.init()
    }

    init(object: NSManagedObject, storeRow: StoreRow?) {
        sourceObject = object
        _storeRow = storeRow
        oldVersionNumber = Int(object._version)
        newVersionNumber = Int(storeRow?.version ?? 0)
        objectSnapshot = object._committed.map { NSMergeConflict.snapshot($0, layout: object._layout) }
        let persisted = storeRow.map { NSMergeConflict.snapshot($0.values, layout: object._layout) }
        cachedSnapshot = persisted
        persistedSnapshot = persisted
        var changed = SlotSet()
        if let committed = object._committed, let row = storeRow {
            for slot in object._layout.persistentSlots where slot < committed.count && slot < row.values.count {
                if !committed[slot].isSame(as: row.values[slot]) { changed.insert(slot) }
            }
        }
        _changedInStore = changed
        super.init()
    }

    /// The persistent attribute and to-one values of a row, keyed by name (`NSNull` for no value).
    static func snapshot(_ values: StoredValues, layout: EntityCache) -> [String: Any] {
        var result: [String: Any] = [:]
        for slot in layout.persistentSlots where slot < values.count {
            switch values[slot] {
            case .toMany, .toManyFault: continue
            case let value: result[layout.slots[slot].name] = value.publicValue ?? NSNull()
            }
        }
        return result
    }

    open override var description: String {
        "NSMergeConflict (\(Unmanaged.passUnretained(self).toOpaque())) for NSManagedObject "
            + "(\(sourceObject.objectID)) with oldVersion = \(oldVersionNumber) and newVersion = \(newVersionNumber)"
    }
}

extension NSManagedObjectContext {
    /// The error of a save that failed on conflicts: `NSManagedObjectMergeError` with the `NSMergeConflict`s.
    func _mergeError(_ conflicts: [NSMergeConflict]) -> NSError {
        coreDataError(
            NSManagedObjectMergeError,
            """
            Could not merge changes: \(conflicts.count) object(s) changed in the store since this context \
            \(_debugName) read them. Set a merge policy or refresh the objects and try again.
            """,
            userInfo: [NSPersistentStoreSaveConflictsErrorKey: conflicts])
    }

    func _mergeError(_ conflicts: StoreConflicts) -> NSError {
        _mergeError(_conflicts(conflicts))
    }

    func _conflicts(_ conflicts: StoreConflicts) -> [NSMergeConflict] {
        conflicts.conflicts.compactMap { conflict in
            guard let object = _registry[conflict.objectID]?.takeUnretainedValue() else { return nil }
            return NSMergeConflict(object: object, storeRow: conflict.current)
        }
    }

    /// Applies the merge policy to the conflicts of a failed save; throws if it does not resolve them.
    func _resolve(_ conflicts: StoreConflicts) throws {
        let list = _conflicts(conflicts)
        guard let policy = _mergePolicy as? NSMergePolicy else { throw _mergeError(list) }
        try policy.resolve(optimisticLockingConflicts: list)
    }

    /// Makes the store's values the object's committed values and, if `keepingChanges`, re-applies the
    /// object's changes over them (except for the slots where the store wins).
    func _adoptStoreValues(
        of object: NSManagedObject, row: StoreRow?, keepingChanges: Bool, storeWinsFor storeSlots: SlotSet = SlotSet()
    ) {
        guard let row else {
            // Deleted in the store: the object cannot be saved; it becomes deleted here too.
            _updated.remove(object)
            object._flags.remove(.updated)
            object._changed.removeAll()
            if object._flags.contains(.deleted) {
                _deleted.remove(object)
                object._flags.remove(.deleted)
            }
            object._flags.insert(.inaccessible)
            return
        }
        let changes = object._changed.elements.map { ($0, object._values[$0]) }
        object._committed = row.values
        object._version = row.version
        var values = row.values
        for slot in object._layout.slots.indices where !object._layout.slots[slot].isPersistent {
            values[slot] = object._values[slot]
        }
        for slot in object._layout.relationshipSlots {
            if case .toMany = object._values[slot] { values[slot] = object._values[slot] }
        }
        var remaining = SlotSet()
        if keepingChanges {
            for (slot, value) in changes where !storeSlots.contains(slot) {
                values[slot] = value
                remaining.insert(slot)
            }
        }
        object._values = values
        object._changed = remaining
        if remaining.isEmpty, !object._flags.contains(.deleted) {
            _updated.remove(object)
            object._flags.remove(.updated)
        }
        object.awakeFromSnapshotEvents(.mergePolicy)
    }
}

// The policies by their Objective-C-era global names, as older code assigns them
// (`context.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy`).

/// `NSMergePolicy.error`.
public var NSErrorMergePolicy: Any { NSMergePolicy.error }
/// `NSMergePolicy.mergeByPropertyStoreTrump`.
public var NSMergeByPropertyStoreTrumpMergePolicy: Any { NSMergePolicy.mergeByPropertyStoreTrump }
/// `NSMergePolicy.mergeByPropertyObjectTrump`.
public var NSMergeByPropertyObjectTrumpMergePolicy: Any { NSMergePolicy.mergeByPropertyObjectTrump }
/// `NSMergePolicy.overwrite`.
public var NSOverwriteMergePolicy: Any { NSMergePolicy.overwrite }
/// `NSMergePolicy.rollback`.
public var NSRollbackMergePolicy: Any { NSMergePolicy.rollback }
