/// What happens to the destination objects of a relationship when its source object is deleted.
public enum NSDeleteRule: UInt, Sendable {
    /// Nothing: the destination objects keep pointing at the deleted object, which you must mend yourself.
    case noActionDeleteRule = 0
    /// The destination objects' inverse relationship forgets the deleted object.
    case nullifyDeleteRule = 1
    /// The destination objects are deleted too.
    case cascadeDeleteRule = 2
    /// The deletion fails validation (`NSValidationRelationshipDeniedDeleteError`) while destinations exist.
    case denyDeleteRule = 3
}

/// The description of a relationship: a property whose value is one managed object (to-one) or a set of them
/// (to-many, optionally ordered).
///
/// ```swift
/// let employees = NSRelationshipDescription()
/// employees.name = "employees"
/// employees.destinationEntity = employee
/// employees.maxCount = 0          // to-many
/// employees.deleteRule = .cascadeDeleteRule
/// employees.inverseRelationship = company
/// ```
open class NSRelationshipDescription: NSPropertyDescription, @unchecked Sendable {
    // @unchecked: as NSPropertyDescription: immutable once its model is in use.
    /// The entity the relationship leads to (not retained: see `EntityReference`).
    var _destinationEntity: NSEntityDescription? {
        get { _destinationEntityReference.entity }
        set { _destinationEntityReference = EntityReference(newValue) }
    }
    private var _destinationEntityReference = EntityReference(nil)
    weak var _inverseRelationship: NSRelationshipDescription?
    var _minCount = 0
    var _maxCount = 1
    var _deleteRule: NSDeleteRule = .nullifyDeleteRule
    var _isOrdered = false
    /// Kept while a model is being assembled (from a file or by merging) and resolved into the weak references
    /// once every entity exists.
    var _destinationEntityName: String?
    var _inverseName: String?

    /// The entity of the objects at the other end of the relationship.
    open var destinationEntity: NSEntityDescription? {
        get { _destinationEntity }
        set {
            _checkEditable("destinationEntity")
            _destinationEntity = newValue
            _destinationEntityName = newValue?._name
            _entity?._invalidateCaches()
        }
    }

    /// The relationship that leads back from the destination to the source.
    open var inverseRelationship: NSRelationshipDescription? {
        get { _inverseRelationship }
        set {
            _checkEditable("inverseRelationship")
            _inverseRelationship = newValue
            _inverseName = newValue?._name
        }
    }

    /// The least number of destination objects a valid object has (0: no minimum).
    open var minCount: Int {
        get { _minCount }
        set {
            _checkEditable("minCount")
            _minCount = newValue
        }
    }

    /// The greatest number of destination objects: 1 makes the relationship to-one, 0 means no limit.
    open var maxCount: Int {
        get { _maxCount }
        set {
            _checkEditable("maxCount")
            _maxCount = newValue
            _entity?._invalidateCaches()
        }
    }

    /// What deleting the source object does to the destination objects.
    open var deleteRule: NSDeleteRule {
        get { _deleteRule }
        set {
            _checkEditable("deleteRule")
            _deleteRule = newValue
        }
    }

    /// Whether the relationship may hold more than one object (`maxCount != 1`).
    open var isToMany: Bool { _maxCount != 1 }

    /// Whether a to-many relationship keeps its objects in order (an `NSOrderedSet`).
    open var isOrdered: Bool {
        get { _isOrdered }
        set {
            _checkEditable("isOrdered")
            _isOrdered = newValue
            _entity?._invalidateCaches()
        }
    }

    override func _copyProperties(from other: NSPropertyDescription) {
        super._copyProperties(from: other)
        guard let other = other as? NSRelationshipDescription else { return }
        _destinationEntity = other._destinationEntity
        _inverseRelationship = other._inverseRelationship
        _destinationEntityName = other._destinationEntityName ?? other._destinationEntity?._name
        _inverseName = other._inverseName ?? other._inverseRelationship?._name
        _minCount = other._minCount
        _maxCount = other._maxCount
        _deleteRule = other._deleteRule
        _isOrdered = other._isOrdered
    }

    open override var description: String {
        super.description + ", destination entity \(_destinationEntity?._name ?? "(null)"), inverseRelationship "
            + "\(_inverseRelationship?._name ?? "(null)"), minCount \(_minCount), maxCount \(_maxCount), isOrdered "
            + "\(_isOrdered), deleteRule \(_deleteRule.rawValue)"
    }
}
