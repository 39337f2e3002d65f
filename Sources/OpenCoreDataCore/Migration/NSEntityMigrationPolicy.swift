/// The migration manager's variable for itself in property mapping expressions (`$manager`).
public let NSMigrationManagerKey = "manager"
/// The variable for the source object (`$source`).
public let NSMigrationSourceObjectKey = "source"
/// The variable for the destination object (`$destination`).
public let NSMigrationDestinationObjectKey = "destination"
/// The variable for the entity mapping being run (`$entityMapping`).
public let NSMigrationEntityMappingKey = "entityMapping"
/// The variable for the property mapping being evaluated (`$propertyMapping`).
public let NSMigrationPropertyMappingKey = "propertyMapping"
/// The variable for the entity migration policy of the entity mapping (`$entityPolicy`).
public let NSMigrationEntityPolicyKey = "entityPolicy"

/// Migrates the objects of one entity mapping: the migration manager calls its methods in stages — `begin`, then
/// `createDestinationInstances(forSource:in:manager:)` for each source object and `endInstanceCreation`, then
/// `createRelationships(forDestination:in:manager:)` for each destination object and `endRelationshipCreation`,
/// then `performCustomValidation` and `end`. The default implementation creates one destination object per source
/// object from the entity mapping's property mappings; a subclass overrides what it needs:
///
/// ```swift
/// final class PostToPostPolicy: NSEntityMigrationPolicy {
///     override func createDestinationInstances(
///         forSource source: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager
///     ) throws {
///         try super.createDestinationInstances(forSource: source, in: mapping, manager: manager)
///         let post = manager.destinationInstances(forEntityMappingName: mapping.name, sourceInstances: [source])[0]
///         let color = NSEntityDescription.insertNewObject(forEntityName: "Color", into: manager.destinationContext)
///         color.setValue(source.value(forKey: "hexColor"), forKey: "hex")
///         post.setValue(color, forKey: "color")
///     }
/// }
/// ```
///
/// An entity mapping names its policy by class name (`entityMigrationPolicyClassName`, as Xcode's mapping editor
/// writes it, often module-qualified: `MyApp.PostToPostPolicy`). Linux has no Objective-C runtime to look the name
/// up, so OpenCoreData finds the class as it finds managed object subclasses: a class registered with
/// `register(_:)`, else the module-qualified name, else the unqualified name among the classes of every loaded Swift
/// image — so a policy class needs no registration unless it is nested in another type or generic.
///
/// `FUNCTION($entityPolicy, "selector:", …)` in a property mapping calls a method by Objective-C selector name. A
/// policy answers such calls by overriding `respondsToPredicateFunction(_:)` and
/// `performPredicateFunction(_:arguments:)`:
///
/// ```swift
/// override func performPredicateFunction(_ name: String, arguments: [Any?]) -> Any? {
///     name == "uppercase:" ? (arguments[0] as? String)?.uppercased() : nil
/// }
/// override func respondsToPredicateFunction(_ name: String) -> Bool { name == "uppercase:" }
/// ```
///
/// An error thrown by a stage fails the migration with `NSEntityMigrationPolicyError` (134170), the thrown error
/// as its underlying error; the source store is left as it was.
open class NSEntityMigrationPolicy: NSObject, PredicateFunctionTarget {
    public required override init() {
        super.init()
    }

    /// Called before the mapping's objects are migrated.
    open func begin(_ mapping: NSEntityMapping, with manager: NSMigrationManager) throws {}

    /// Creates the destination objects of `sInstance`: by default one object of the destination entity, with the
    /// values of the mapping's attribute mappings, associated with the source object.
    open func createDestinationInstances(
        forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager
    ) throws {
        try manager._createDestinationInstance(forSource: sInstance, in: mapping, policy: self)
    }

    /// Called once every source object of the mapping has its destination objects.
    open func endInstanceCreation(forMapping mapping: NSEntityMapping, manager: NSMigrationManager) throws {}

    /// Sets the relationships of `dInstance`: by default from the mapping's relationship mappings, evaluated with
    /// the source object `dInstance` was made from.
    open func createRelationships(
        forDestination dInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager
    ) throws {
        try manager._createRelationships(forDestination: dInstance, in: mapping, policy: self)
    }

    /// Called once every destination object of the mapping has its relationships.
    open func endRelationshipCreation(forMapping mapping: NSEntityMapping, manager: NSMigrationManager) throws {}

    /// Checks the migrated objects beyond what the destination model validates; throw to fail the migration.
    open func performCustomValidation(forMapping mapping: NSEntityMapping, manager: NSMigrationManager) throws {}

    /// Called when the mapping is done.
    open func end(_ mapping: NSEntityMapping, manager: NSMigrationManager) throws {}

    // MARK: FUNCTION($entityPolicy, …)

    /// Whether the policy answers `FUNCTION($entityPolicy, name, …)`; none by default.
    open func respondsToPredicateFunction(_ name: String) -> Bool { false }

    /// Answers `FUNCTION($entityPolicy, name, …)` with the evaluated arguments.
    open func performPredicateFunction(_ name: String, arguments: [Any?]) -> Any? { nil }

    // MARK: Finding classes by name

    /// Registers a policy class so that entity mappings can name it, for classes the automatic lookup cannot find
    /// (nested or generic classes). Both its module-qualified and unqualified names are registered.
    public class func register(_ policyClass: NSEntityMigrationPolicy.Type) {
        MigrationPolicyClassRegistry.register(policyClass)
    }
}
