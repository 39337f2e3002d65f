/// Objects that would break one of their entity's `uniquenessConstraints` when saved: several objects of the saving
/// context share the constrained values, or one of them has the values of a row already in the store
/// (`databaseObject`).
///
/// Under `NSErrorMergePolicy` the save fails with `NSManagedObjectConstraintMergeError` (133021), the conflicts under
/// `NSPersistentStoreSaveConflictsErrorKey`; the other policies resolve them:
///
/// ```swift
/// context.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy  // insert or update on the natural key
/// let tag = NSEntityDescription.insertNewObject(forEntityName: "Tag", into: context)
/// tag.setValue("swift", forKey: "name")
/// try context.save()  // updates the stored "swift" tag instead of adding a second one
/// ```
open class NSConstraintConflict: NSObject, @unchecked Sendable {
    // @unchecked: every stored property is a constant; the objects in it are used on their context's queue.
    let _constraint: [String]
    let _databaseObject: NSManagedObject?
    let _databaseSnapshot: [String: Any]?
    let _conflictingObjects: [NSManagedObject]
    let _conflictingSnapshots: [[AnyHashable: Any]]

    /// A conflict over `contraint` (Apple's spelling of the label) between the stored `databaseObject`, if any, and
    /// `conflictingObjects`, with the values each had when the conflict was found.
    public init(
        constraint contraint: [String], database databaseObject: NSManagedObject?,
        databaseSnapshot: [AnyHashable: Any]?, conflicting conflictingObjects: [NSManagedObject],
        conflictingSnapshots: [Any]
    ) {
        _constraint = contraint
        _databaseObject = databaseObject
        _databaseSnapshot = databaseSnapshot.map { snapshot in
            Dictionary(
                uniqueKeysWithValues: snapshot.compactMap { key, value in (key.base as? String).map { ($0, value) } })
        }
        _conflictingObjects = conflictingObjects
        _conflictingSnapshots = conflictingSnapshots.map { $0 as? [AnyHashable: Any] ?? [:] }
        super.init()
    }

    /// The names of the constrained attributes.
    open var constraint: [String] { _constraint }

    /// The constrained values the objects share, by attribute name.
    open var constraintValues: [String: Any] {
        guard let object = _conflictingObjects.first ?? _databaseObject else { return [:] }
        var values: [String: Any] = [:]
        for name in _constraint { values[name] = object.value(forKey: name) ?? NSNull() }
        return values
    }

    /// The object of the row already in the store with the constrained values; `nil` when the conflict is between
    /// objects of the saving context only.
    open var databaseObject: NSManagedObject? { _databaseObject }

    /// The stored values of `databaseObject`, by property name.
    open var databaseSnapshot: [String: Any]? { _databaseSnapshot }

    /// The objects of the saving context that have the constrained values.
    open var conflictingObjects: [NSManagedObject] { _conflictingObjects }

    /// The values of `conflictingObjects` when the conflict was found (the persistent attributes, by name).
    open var conflictingSnapshots: [[AnyHashable: Any]] { _conflictingSnapshots }

    open override var description: String {
        "NSConstraintConflict (\(Unmanaged.passUnretained(self).toOpaque())) for constraint (\(_constraint.joined(separator: ", "))): "
            + "database: \(_databaseObject.map { "\($0.objectID)" } ?? "(null)"), conflictedObjects: "
            + "(\(_conflictingObjects.map { "\($0.objectID)" }.joined(separator: ", ")))"
    }
}
