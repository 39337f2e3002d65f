/// How the objects of one source entity become objects of one destination entity in a migration: the entities, the
/// expression that selects the source objects, the property mappings, and the entity migration policy that runs it.
///
/// ```swift
/// let mapping = NSEntityMapping()
/// mapping.name = "PostToPost"
/// mapping.mappingType = .transformEntityMappingType
/// mapping.sourceEntityName = "Post"
/// mapping.destinationEntityName = "Post"
/// mapping.attributeMappings = [hexColor]
/// mapping.entityMigrationPolicyClassName = "PostPolicy"
/// ```
open class NSEntityMapping: NSObject, @unchecked Sendable {
    // @unchecked: as NSMappingModel: configured, then only read by the migration that uses it.
    /// Equal to a mapping that describes the same (see `NSMappingModel+Equality.swift`).
    open override func isEqual(_ object: Any?) -> Bool { _describesSameMapping(as: object) }
    open override var hash: Int { _mappingHash }

    var _name: String?
    /// What the mapping does with the source objects.
    open var mappingType: NSEntityMappingType = .undefinedEntityMappingType
    /// The name of the source entity; `nil` for a mapping that adds objects.
    open var sourceEntityName: String?
    /// The version hash of the source entity the mapping was made for.
    open var sourceEntityVersionHash: Data?
    /// The name of the destination entity; `nil` for a mapping that removes objects.
    open var destinationEntityName: String?
    /// The version hash of the destination entity the mapping was made for.
    open var destinationEntityVersionHash: Data?
    /// The mappings of the destination entity's attributes.
    open var attributeMappings: [NSPropertyMapping]?
    /// The mappings of the destination entity's relationships.
    open var relationshipMappings: [NSPropertyMapping]?
    /// The expression that evaluates to the source objects to migrate (a `FETCH` of the source entity, usually);
    /// every object of the source entity, subentities excluded, when `nil`.
    open var sourceExpression: NSExpression?
    /// The user's own information about the mapping (given to the entity migration policy).
    open var userInfo: [AnyHashable: Any]?
    /// The name of the `NSEntityMigrationPolicy` subclass that migrates the objects; the default policy when `nil`.
    /// On Linux the class is found from this name as the Objective-C runtime would find it (see
    /// `NSEntityMigrationPolicy`).
    open var entityMigrationPolicyClassName: String?

    public override init() {
        super.init()
    }

    /// The name of the mapping, unique in its mapping model: `SOURCE->DESTINATION` unless set, as Apple documents.
    open var name: String! {
        get { _name ?? "\(sourceEntityName ?? "")->\(destinationEntityName ?? "")" }
        set { _name = newValue }
    }

    /// The property mapping of the destination attribute or relationship `name`, if any.
    func _propertyMapping(named name: String) -> NSPropertyMapping? {
        attributeMappings?.first { $0.name == name } ?? relationshipMappings?.first { $0.name == name }
    }

    open override var description: String {
        "(<NSEntityMapping: \(Unmanaged.passUnretained(self).toOpaque())>), name \(name ?? ""), mappingType "
            + "\(mappingType.rawValue), sourceEntityName \(sourceEntityName ?? "(null)"), destinationEntityName "
            + "\(destinationEntityName ?? "(null)"), sourceExpression \(sourceExpression?.description ?? "(null)"), "
            + "entityMigrationPolicyClassName \(entityMigrationPolicyClassName ?? "(null)"), attributeMappings "
            + "\(attributeMappings?.count ?? 0), relationshipMappings \(relationshipMappings?.count ?? 0)"
    }
}
