/// The description of an attribute: a property that holds a value (a number, string, date, data…).
///
/// ```swift
/// let name = NSAttributeDescription()
/// name.name = "name"
/// name.attributeType = .stringAttributeType
/// name.isOptional = false
/// ```
open class NSAttributeDescription: NSPropertyDescription, @unchecked Sendable {
    // @unchecked: as NSPropertyDescription: immutable once its model is in use.
    var _attributeType: NSAttributeType = .undefinedAttributeType
    var _attributeValueClassName: String?
    var _defaultValue: Any?
    var _valueTransformerName: String?
    var _allowsExternalBinaryDataStorage = false
    var _preservesValueInHistoryOnDeletion = false
    var _allowsCloudEncryption = false

    /// The type of the attribute's values.
    open var attributeType: NSAttributeType {
        get { _attributeType }
        set {
            _checkEditable("attributeType")
            _attributeType = newValue
            _entity?._invalidateCaches()
        }
    }

    /// The type of the attribute's values, as Apple's Swift-style `AttributeType`.
    open var type: AttributeType {
        get { AttributeType(rawValue: _attributeType) }
        set { attributeType = newValue.rawValue }
    }

    /// The name of the class of the attribute's values (`NSNumber`, `NSString`…). For a transformable attribute,
    /// the class its value transformer produces, if set.
    open var attributeValueClassName: String? {
        get { _attributeValueClassName ?? _attributeType.defaultValueClassName }
        set {
            _checkEditable("attributeValueClassName")
            _attributeValueClassName = newValue
        }
    }

    /// The value a newly inserted object has for this attribute.
    open var defaultValue: Any? {
        get { _defaultValue }
        set {
            _checkEditable("defaultValue")
            _defaultValue = newValue
            _entity?._invalidateCaches()
        }
    }

    /// The name of the value transformer of a transformable attribute. `nil` means Core Data's default,
    /// `NSSecureUnarchiveFromData`.
    open var valueTransformerName: String? {
        get { _valueTransformerName }
        set {
            _checkEditable("valueTransformerName")
            _valueTransformerName = newValue
        }
    }

    /// Whether large binary values may be stored beside the store file instead of inside it.
    open var allowsExternalBinaryDataStorage: Bool {
        get { _allowsExternalBinaryDataStorage }
        set {
            _checkEditable("allowsExternalBinaryDataStorage")
            _allowsExternalBinaryDataStorage = newValue
        }
    }

    /// Whether persistent history keeps this attribute's value in the tombstone of a deleted object.
    open var preservesValueInHistoryOnDeletion: Bool {
        get { _preservesValueInHistoryOnDeletion }
        set {
            _checkEditable("preservesValueInHistoryOnDeletion")
            _preservesValueInHistoryOnDeletion = newValue
        }
    }

    /// Whether CloudKit encrypts the value (kept for model fidelity).
    open var allowsCloudEncryption: Bool {
        get { _allowsCloudEncryption }
        set {
            _checkEditable("allowsCloudEncryption")
            _allowsCloudEncryption = newValue
        }
    }

    override func _copyProperties(from other: NSPropertyDescription) {
        super._copyProperties(from: other)
        guard let other = other as? NSAttributeDescription else { return }
        _attributeType = other._attributeType
        _attributeValueClassName = other._attributeValueClassName
        _defaultValue = other._defaultValue
        _valueTransformerName = other._valueTransformerName
        _allowsExternalBinaryDataStorage = other._allowsExternalBinaryDataStorage
        _preservesValueInHistoryOnDeletion = other._preservesValueInHistoryOnDeletion
        _allowsCloudEncryption = other._allowsCloudEncryption
    }

    open override var description: String {
        super.description + ", attributeType \(_attributeType.rawValue), attributeValueClassName "
            + (attributeValueClassName ?? "(null)") + ", defaultValue "
            + (_defaultValue.map { String(describing: $0) } ?? "(null)")
    }
}
