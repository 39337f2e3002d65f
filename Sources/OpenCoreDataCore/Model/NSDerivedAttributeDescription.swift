/// A derived attribute: a value the store computes from other values of the object (or of related objects) each
/// time it saves, such as `count:(employees)` or `name.lowercase:`.
open class NSDerivedAttributeDescription: NSAttributeDescription, @unchecked Sendable {
    // @unchecked: as NSPropertyDescription: immutable once its model is in use.
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
