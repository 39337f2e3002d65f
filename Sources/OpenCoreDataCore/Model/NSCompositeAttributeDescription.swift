/// A composite attribute: one attribute made of named sub-attributes, stored as a dictionary
/// (`attributeType == .compositeAttributeType`).
open class NSCompositeAttributeDescription: NSAttributeDescription, @unchecked Sendable {
    // @unchecked: as NSPropertyDescription: immutable once its model is in use.
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
