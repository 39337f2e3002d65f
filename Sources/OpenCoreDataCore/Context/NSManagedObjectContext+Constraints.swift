import Foundation

/// Uniqueness constraints at save: the objects about to be saved are checked against each other and against the
/// store's rows before anything is written, and the merge policy settles what it finds (the error policy fails the
/// save with the conflicts).
extension NSManagedObjectContext {
    /// A constraint and the entity that declares it: it holds over that entity's instances and its subentities'
    /// (a subentity may add constraints of its own, over its own instances).
    struct UniquenessConstraint {
        let entity: NSEntityDescription
        let names: [String]
    }

    /// The constraints an object of `entity` must keep: its entity's and every superentity's.
    static func _uniquenessConstraints(of entity: NSEntityDescription) -> [UniquenessConstraint] {
        var constraints: [UniquenessConstraint] = []
        var declaring: NSEntityDescription? = entity
        while let current = declaring {
            for constraint in current._uniquenessConstraints {
                let names = constraint.compactMap { element in
                    (element as? String) ?? (element as? NSPropertyDescription)?._name
                }
                if !names.isEmpty { constraints.append(UniquenessConstraint(entity: current, names: names)) }
            }
            declaring = current._superentity
        }
        return constraints
    }

    /// The constrained values of `object`, or `nil` when one is missing (no value never conflicts, as in SQLite's
    /// unique indexes) or cannot be compared.
    static func _constrainedValues(of object: NSManagedObject, names: [String]) -> [AnyHashable]? {
        var values: [AnyHashable] = []
        values.reserveCapacity(names.count)
        for name in names {
            guard let value = object.value(forKey: name), !(value is NSNull), let hashable = value as? AnyHashable
            else { return nil }
            values.append(hashable)
        }
        return values
    }

    /// Finds the uniqueness conflicts of this save and lets the merge policy resolve them; throws the policy's
    /// error. Resolving deletes the objects that lose, which may meet other constraints: a few rounds settle it.
    func _resolveConstraintConflicts() throws {
        for _ in 0..<4 {
            let conflicts = try _constraintConflicts()
            guard !conflicts.isEmpty else { return }
            guard let policy = _mergePolicy as? NSMergePolicy else { throw _constraintError(conflicts) }
            try policy.resolve(constraintConflicts: conflicts)
            processPendingChanges()
        }
        let conflicts = try _constraintConflicts()
        if !conflicts.isEmpty { throw _constraintError(conflicts) }
    }

    /// The conflicts of the inserted objects, and of the updated ones whose constrained values changed, with each
    /// other and with the store's rows.
    func _constraintConflicts() throws -> [NSConstraintConflict] {
        struct GroupKey: Hashable {
            let entity: ObjectIdentifier
            let names: [String]
        }
        // Most models constrain nothing: then no object needs to be looked at.
        guard _model._entities.contains(where: { !$0._uniquenessConstraints.isEmpty }) else { return [] }
        var constraintsOf: [ObjectIdentifier: [UniquenessConstraint]] = [:]
        func constraints(of entity: NSEntityDescription) -> [UniquenessConstraint] {
            if let known = constraintsOf[ObjectIdentifier(entity)] { return known }
            let found = Self._uniquenessConstraints(of: entity)
            constraintsOf[ObjectIdentifier(entity)] = found
            return found
        }
        var groups: [GroupKey: (constraint: UniquenessConstraint, objects: [[AnyHashable]: [NSManagedObject]])] = [:]
        var order: [GroupKey] = []
        // Only objects of constrained entities are put in order (a save of many others then sorts none of them).
        let candidates = (_inserted.objects + _updated.filter { $0.hasChanges })
            .filter { !$0._flags.contains(.deleted) && !constraints(of: $0._entity).isEmpty }
            ._inCreationOrder()
        for object in candidates {
            let constraints = constraints(of: object._entity)
            let changed = object._flags.contains(.inserted) ? nil : Set(object.changedValues().keys)
            for constraint in constraints {
                if let changed, !constraint.names.contains(where: changed.contains) { continue }
                guard let values = Self._constrainedValues(of: object, names: constraint.names) else { continue }
                let key = GroupKey(entity: ObjectIdentifier(constraint.entity), names: constraint.names)
                if groups[key] == nil {
                    groups[key] = (constraint, [:])
                    order.append(key)
                }
                groups[key]!.objects[values, default: []].append(object)
            }
        }
        var conflicts: [NSConstraintConflict] = []
        for key in order {
            let (constraint, objects) = groups[key]!
            let stored = try _storedObjects(matching: Array(objects.keys), constraint: constraint)
            for (values, members) in objects.sorted(by: { $0.value[0]._creationOrder < $1.value[0]._creationOrder }) {
                let database = stored[values]?.first { candidate in !members.contains { $0 === candidate } }
                guard database != nil || members.count > 1 else { continue }
                conflicts.append(
                    NSConstraintConflict(
                        constraint: constraint.names, database: database,
                        databaseSnapshot: database.flatMap { object in
                            object._committed.map { NSMergeConflict.snapshot($0, layout: object._layout) }
                        },
                        conflicting: members,
                        conflictingSnapshots: members.map { NSMergeConflict.snapshot($0._values, layout: $0._layout) }))
            }
        }
        return conflicts
    }

    /// The store's objects of `constraint`'s entity (and subentities) holding each of `keys`, as this context's
    /// objects, leaving out those this save deletes or moves off the values.
    private func _storedObjects(matching keys: [[AnyHashable]], constraint: UniquenessConstraint) throws
        -> [[AnyHashable]: [NSManagedObject]]
    {
        var found: [[AnyHashable]: [NSManagedObject]] = [:]
        let batch = max(1, 256 / constraint.names.count)
        var start = 0
        while start < keys.count {
            let slice = keys[start..<min(start + batch, keys.count)]
            start += batch
            let request = NSFetchRequest<NSFetchRequestResult>()
            request.entity = constraint.entity
            request.includesSubentities = true
            request.includesPendingChanges = false
            request.predicate = NSCompoundPredicate(
                orPredicateWithSubpredicates: slice.map { values in
                    NSCompoundPredicate(
                        andPredicateWithSubpredicates: zip(constraint.names, values).map { name, value in
                            NSComparisonPredicate(
                                leftExpression: NSExpression(forKeyPath: name),
                                rightExpression: NSExpression(forConstantValue: value.base), modifier: .direct,
                                type: .equalTo)
                        })
                })
            for case let object as NSManagedObject in try fetch(request) where !object._flags.contains(.deleted) {
                // Compared as this context has it: an object changed off the values here will not keep them.
                guard let values = Self._constrainedValues(of: object, names: constraint.names) else { continue }
                found[values, default: []].append(object)
            }
        }
        return found
    }

    /// The error of a save that failed on uniqueness conflicts: `NSManagedObjectConstraintMergeError` with the
    /// `NSConstraintConflict`s.
    func _constraintError(_ conflicts: [NSConstraintConflict]) -> NSError {
        let constraints = Set(
            conflicts.map { conflict in
                "\(conflict.conflictingObjects.first?.entity.name ?? "?") (\(conflict.constraint.joined(separator: ", ")))"
            }
        ).sorted()
        return coreDataError(
            NSManagedObjectConstraintMergeError,
            """
            Could not save: \(conflicts.count) uniqueness constraint conflict(s) on \
            \(constraints.joined(separator: "; ")) in context \(_debugName). Set a merge policy \
            (NSMergeByPropertyObjectTrumpMergePolicy updates the stored object) or resolve the conflicts in \
            NSPersistentStoreSaveConflictsErrorKey.
            """,
            userInfo: [NSPersistentStoreSaveConflictsErrorKey: conflicts])
    }
}

extension NSManagedObject {
    fileprivate var _creationOrder: UInt64 { _objectID._creationOrder }
}
