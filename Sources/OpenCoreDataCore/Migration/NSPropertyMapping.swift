/// How one property of a destination entity gets its value in a migration: the name of the destination attribute or
/// relationship, and the expression that computes the value from the source object.
///
/// The expression may use the variables `$source` (the source object), `$manager` (the migration manager),
/// `$entityMapping`, `$propertyMapping` and `$entityPolicy` (the entity migration policy):
///
/// ```swift
/// let age = NSPropertyMapping()
/// age.name = "age"
/// age.valueExpression = NSExpression(format: "$source.age + 10")
/// ```
///
/// A mapping without a value expression leaves the destination property at its default.
open class NSPropertyMapping: NSObject, @unchecked Sendable {
    // @unchecked: as NSMappingModel: configured, then only read by the migration that uses it.
    /// Equal to a mapping that describes the same (see `NSMappingModel+Equality.swift`).
    open override func isEqual(_ object: Any?) -> Bool { _describesSameMapping(as: object) }
    open override var hash: Int { _mappingHash }

    /// The name of the destination property.
    open var name: String?
    /// The expression that computes the destination property's value.
    open var valueExpression: NSExpression?
    /// The user's own information about the mapping.
    open var userInfo: [AnyHashable: Any]?
    /// For a mapping read from Xcode's editor format without an expression: what to generate it from.
    var _generation: Generation?

    public override init() {
        super.init()
    }

    /// A mapping of the destination property `name` to `valueExpression`.
    convenience init(name: String, valueExpression: NSExpression?) {
        self.init()
        self.name = name
        self.valueExpression = valueExpression
    }

    open override var description: String {
        "(<NSPropertyMapping: \(Unmanaged.passUnretained(self).toOpaque())>), name \(name ?? "(null)"), "
            + "valueExpression \(valueExpression?.description ?? "(null)"), userInfo "
            + (userInfo.map { String(describing: $0) } ?? "(null)")
    }
}
