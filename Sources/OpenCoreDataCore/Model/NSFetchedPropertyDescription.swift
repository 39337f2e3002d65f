/// A fetched property: a weak, one-way relationship defined by a fetch request, evaluated when the property is
/// first read. In its predicate, `$FETCH_SOURCE` stands for the object whose property is read and
/// `$FETCHED_PROPERTY` for this description.
open class NSFetchedPropertyDescription: NSPropertyDescription, @unchecked Sendable {
    var _fetchRequest: NSFetchRequest<NSFetchRequestResult>?

    /// The fetch request that finds the property's objects.
    open var fetchRequest: NSFetchRequest<NSFetchRequestResult>? {
        get { _fetchRequest }
        set {
            _checkEditable("fetchRequest")
            _fetchRequest = newValue
        }
    }

    override func _copyProperties(from other: NSPropertyDescription) {
        super._copyProperties(from: other)
        guard let other = other as? NSFetchedPropertyDescription else { return }
        _fetchRequest = other._fetchRequest?.copy() as? NSFetchRequest<NSFetchRequestResult>
    }
}

/// A derived attribute: a value the store computes from other values of the object (or of related objects) each
/// time it saves, such as `count:(employees)` or `name.lowercase:`.
open class NSDerivedAttributeDescription: NSAttributeDescription, @unchecked Sendable {
    var _derivationExpression: NSExpression?

    /// The expression that computes the value. As in Apple's framework, a key path ending in `.@count` is stored
    /// as `count:(path)`, one ending in `.@sum` or `.@total` as `sum:(path)`.
    open var derivationExpression: NSExpression? {
        get { _derivationExpression }
        set {
            _checkEditable("derivationExpression")
            _derivationExpression = newValue.map(ModelVersionHasher.canonicalDerivation)
        }
    }

    override func _copyProperties(from other: NSPropertyDescription) {
        super._copyProperties(from: other)
        guard let other = other as? NSDerivedAttributeDescription else { return }
        _derivationExpression = other._derivationExpression
    }
}

/// A composite attribute: one attribute made of named sub-attributes, stored as a dictionary
/// (`attributeType == .compositeAttributeType`).
open class NSCompositeAttributeDescription: NSAttributeDescription, @unchecked Sendable {
    var _elements: [NSAttributeDescription] = []

    public required init() {
        super.init()
        _attributeType = .compositeAttributeType
    }

    /// The sub-attributes.
    open var elements: [NSAttributeDescription] {
        get { _elements }
        set {
            _checkEditable("elements")
            _elements = newValue
        }
    }

    override func _copyProperties(from other: NSPropertyDescription) {
        super._copyProperties(from: other)
        guard let other = other as? NSCompositeAttributeDescription else { return }
        _elements = other._elements.map { $0.copy() as! NSAttributeDescription }
    }
}
