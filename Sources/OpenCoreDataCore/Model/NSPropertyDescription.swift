/// The description of one property of an entity: an attribute, a relationship, a fetched property or a derived
/// attribute.
///
/// Like every part of a model, a property description is editable until a persistent store coordinator starts
/// using its model; after that any mutation stops the program with a message that names the model and property,
/// as Apple's framework raises.
open class NSPropertyDescription: NSObject, NSCopying, @unchecked Sendable {
    // @unchecked: a model is configured on one thread and then shared; once a coordinator uses it, it is immutable:
    // every setter stops through `_checkEditable`, as Apple's framework raises for a model in use.
    /// The entity the property belongs to (not retained: see `EntityReference`).
    var _entity: NSEntityDescription? {
        get { _entityReference.entity }
        set { _entityReference = EntityReference(newValue) }
    }
    private var _entityReference = EntityReference(nil)
    var _name: String = ""
    var _isOptional = true
    var _isTransient = false
    var _isIndexed = false
    var _userInfo: [AnyHashable: Any]?
    var _validationPredicates: [NSPredicate] = []
    var _validationWarnings: [Any] = []
    var _versionHashModifier: String?
    var _renamingIdentifier: String?
    var _isIndexedBySpotlight = false
    var _isStoredInExternalRecord = false

    public required override init() {
        super.init()
    }

    /// The entity this property belongs to.
    ///
    /// Apple declares this `unowned(unsafe)`: reading it for a property that is not yet part of an entity is a
    /// programmer error.
    public var entity: NSEntityDescription {
        guard let entity = _entity else {
            preconditionFailure("The property '\(_name)' does not belong to an entity yet; add it to an entity first")
        }
        return entity
    }

    /// The name of the property: the key under which its value is read and written.
    open var name: String {
        get { _name }
        set {
            _checkEditable("name")
            _name = newValue
            _entity?._invalidateCaches()
        }
    }

    /// Whether a managed object may save with no value for this property.
    open var isOptional: Bool {
        get { _isOptional }
        set {
            _checkEditable("isOptional")
            _isOptional = newValue
        }
    }

    /// Whether the property's value lives only in memory: tracked for changes and undo, never saved.
    open var isTransient: Bool {
        get { _isTransient }
        set {
            _checkEditable("isTransient")
            _isTransient = newValue
            _entity?._invalidateCaches()
        }
    }

    /// Whether the store indexes this property. Apple deprecates this in favour of fetch indexes
    /// (`NSEntityDescription.indexes`), and so does OpenCoreData, but both still honour it.
    open var isIndexed: Bool {
        get { _isIndexed }
        set {
            _checkEditable("isIndexed")
            _isIndexed = newValue
        }
    }

    /// The user's own information about the property.
    open var userInfo: [AnyHashable: Any]? {
        get { _userInfo }
        set {
            _checkEditable("userInfo")
            _userInfo = newValue
        }
    }

    /// The predicates a value must satisfy to be valid.
    open var validationPredicates: [NSPredicate] { _validationPredicates }

    /// The errors reported for each failing validation predicate, one per predicate: an error code (`Int` or
    /// `NSNumber`) or a message (`String`).
    open var validationWarnings: [Any] { _validationWarnings }

    /// Sets the validation predicates and the warning reported when each fails.
    ///
    /// - Precondition: both arrays have the same count, as Apple requires.
    open func setValidationPredicates(
        _ validationPredicates: [NSPredicate]?, withValidationWarnings warnings: [String]?
    ) {
        _setValidationPredicates(validationPredicates ?? [], warnings: warnings ?? [])
    }

    func _setValidationPredicates(_ predicates: [NSPredicate], warnings: [Any]) {
        _checkEditable("validationPredicates")
        precondition(
            predicates.count == warnings.count,
            """
            setValidationPredicates(_:withValidationWarnings:) on '\(_name)': \(predicates.count) predicates but \
            \(warnings.count) warnings; give one warning per predicate
            """)
        _validationPredicates = predicates
        _validationWarnings = warnings
    }

    /// A string that changes the version hash, to mark a change that does not alter the schema but does alter
    /// how the data should be interpreted.
    open var versionHashModifier: String? {
        get { _versionHashModifier }
        set {
            _checkEditable("versionHashModifier")
            _versionHashModifier = newValue
        }
    }

    /// The name this property had in the previous model version, for lightweight migration; the property's own
    /// name unless set, as in Apple's framework.
    open var renamingIdentifier: String? {
        get { _renamingIdentifier ?? _name }
        set {
            _checkEditable("renamingIdentifier")
            _renamingIdentifier = newValue
        }
    }

    /// Whether Spotlight indexes the property (kept for model fidelity; there is no Spotlight on Linux). Always
    /// `false` for a transient property, as in Apple's framework.
    open var isIndexedBySpotlight: Bool {
        get { _isIndexedBySpotlight && !_isTransient }
        set {
            _checkEditable("isIndexedBySpotlight")
            _isIndexedBySpotlight = newValue
        }
    }

    /// Whether the property is stored in an external record (deprecated by Apple; kept for model fidelity).
    /// Always `false` for a transient property, as in Apple's framework.
    open var isStoredInExternalRecord: Bool {
        get { _isStoredInExternalRecord && !_isTransient }
        set {
            _checkEditable("isStoredInExternalRecord")
            _isStoredInExternalRecord = newValue
        }
    }

    /// The version hash: a digest of the property's persistence-relevant settings, used to decide whether a store
    /// matches a model.
    open var versionHash: Data { ModelVersionHasher.versionHash(of: self) }

    /// Whether this property is saved to the store (attributes and relationships that are not transient).
    var _isPersistent: Bool { !_isTransient }

    // MARK: Copying

    open func copy(with zone: NSZone? = nil) -> Any {
        let copy = type(of: self).init()
        copy._copyProperties(from: self)
        return copy
    }

    /// Subclasses copy their own settings after calling super; the copy belongs to no entity.
    func _copyProperties(from other: NSPropertyDescription) {
        _name = other._name
        _isOptional = other._isOptional
        _isTransient = other._isTransient
        _isIndexed = other._isIndexed
        _userInfo = other._userInfo
        _validationPredicates = other._validationPredicates
        _validationWarnings = other._validationWarnings
        _versionHashModifier = other._versionHashModifier
        _renamingIdentifier = other._renamingIdentifier
        _isIndexedBySpotlight = other._isIndexedBySpotlight
        _isStoredInExternalRecord = other._isStoredInExternalRecord
    }

    // MARK: Editability

    func _checkEditable(_ key: String) {
        guard let model = _entity?._model, !model._isEditable else { return }
        preconditionFailure(
            """
            Can't modify an immutable model: '\(key)' of property '\(_name)' of entity '\(_entity?._name ?? "")' \
            in \(model._debugName) — the model is in use by a persistent store coordinator. Copy the model \
            (model.copy()) to edit it.
            """)
    }

    open override var description: String {
        "(\(String(describing: type(of: self)))), name \(_name), isOptional \(_isOptional), isTransient \(_isTransient)"
            + ", entity \(_entity?._name ?? "(null)"), renamingIdentifier \(_renamingIdentifier ?? _name)"
    }
}
