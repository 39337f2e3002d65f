/// A fetch index of an entity: an ordered list of properties the store indexes together, optionally only for the
/// rows that match a predicate.
///
/// ```swift
/// let byName = NSFetchIndexDescription(name: "byName", elements: [
///     NSFetchIndexElementDescription(property: name, collationType: .binary)
/// ])
/// employee.indexes = [byName]
/// ```
open class NSFetchIndexDescription: NSObject, NSCopying, @unchecked Sendable {
    // @unchecked: as the model it belongs to: immutable once that model is in use (`_checkEditable`).
    /// The entity the index belongs to (not retained: see `EntityReference`).
    var _entity: NSEntityDescription? {
        get { _entityReference.entity }
        set { _entityReference = EntityReference(newValue) }
    }
    private var _entityReference = EntityReference(nil)
    var _name: String
    var _elements: [NSFetchIndexElementDescription]
    var _partialIndexPredicate: NSPredicate?

    public init(name: String, elements: [NSFetchIndexElementDescription]?) {
        _name = name
        _elements = elements ?? []
        super.init()
        for element in _elements {
            element._indexDescription = self
        }
    }

    /// The index's name.
    open var name: String {
        get { _name }
        set {
            _checkEditable("name")
            _name = newValue
        }
    }

    /// The indexed properties, in index order.
    open var elements: [NSFetchIndexElementDescription] {
        get { _elements }
        set {
            _checkEditable("elements")
            _elements = newValue
            for element in newValue {
                element._indexDescription = self
            }
        }
    }

    /// The entity the index belongs to.
    open var entity: NSEntityDescription? { _entity }

    /// A predicate restricting the index to the rows that match it.
    open var partialIndexPredicate: NSPredicate? {
        get { _partialIndexPredicate }
        set {
            _checkEditable("partialIndexPredicate")
            _partialIndexPredicate = newValue
        }
    }

    open func copy(with zone: NSZone? = nil) -> Any {
        let copy = NSFetchIndexDescription(
            name: _name, elements: _elements.map { $0.copy() as! NSFetchIndexElementDescription })
        copy._partialIndexPredicate = _partialIndexPredicate
        return copy
    }

    func _checkEditable(_ key: String) {
        guard let model = _entity?._model, !model._isEditable else { return }
        preconditionFailure(
            """
            Can't modify an immutable model: '\(key)' of fetch index '\(_name)' of entity \
            '\(_entity?._name ?? "")' in \(model._debugName) — the model is in use by a persistent store coordinator
            """)
    }
}

/// How a fetch index orders its values.
public enum NSFetchIndexElementType: UInt, Sendable {
    /// An ordinary sorted index.
    case binary = 0
    /// A spatial index, for range queries on two-dimensional values.
    case rTree = 1
}

/// One property of a fetch index, with its collation and direction.
open class NSFetchIndexElementDescription: NSObject, NSCopying, @unchecked Sendable {
    // @unchecked: as the model it belongs to: immutable once that model is in use.
    weak var _indexDescription: NSFetchIndexDescription?
    var _property: NSPropertyDescription?
    var _propertyName: String?
    var _collationType: NSFetchIndexElementType
    var _isAscending = true

    public init(property: NSPropertyDescription, collationType: NSFetchIndexElementType) {
        _property = property
        _propertyName = property._name
        _collationType = collationType
        super.init()
    }

    /// An element naming its property, resolved against the entity when the index is used (as models loaded from
    /// files give them).
    init(propertyName: String, collationType: NSFetchIndexElementType) {
        _propertyName = propertyName
        _collationType = collationType
        super.init()
    }

    /// The indexed property.
    open var property: NSPropertyDescription? {
        if let property = _property { return property }
        guard let name = _propertyName, let entity = _indexDescription?._entity else { return nil }
        return entity._caches.propertiesByName[name]
    }

    /// The name of the indexed property.
    open var propertyName: String? { _property?._name ?? _propertyName }

    /// How values are ordered in the index.
    open var collationType: NSFetchIndexElementType {
        get { _collationType }
        set {
            _indexDescription?._checkEditable("collationType")
            _collationType = newValue
        }
    }

    /// Whether the index orders this property ascending.
    open var isAscending: Bool {
        get { _isAscending }
        set {
            _indexDescription?._checkEditable("isAscending")
            _isAscending = newValue
        }
    }

    /// The index this element belongs to.
    open var indexDescription: NSFetchIndexDescription? { _indexDescription }

    open func copy(with zone: NSZone? = nil) -> Any {
        let copy = NSFetchIndexElementDescription(
            propertyName: propertyName ?? "", collationType: _collationType)
        copy._isAscending = _isAscending
        return copy
    }
}
