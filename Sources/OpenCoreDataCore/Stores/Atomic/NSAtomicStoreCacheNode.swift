/// One object in an atomic store's in-memory cache: its object ID and its property values by name.
///
/// Attribute values are stored as objects; a to-one relationship's value is the destination's cache node, a
/// to-many relationship's value a set (ordered set, if ordered) of cache nodes.
open class NSAtomicStoreCacheNode: NSObject, @unchecked Sendable {
    // @unchecked: a node belongs to its store's cache and is read and changed only in the store's serialized calls, as
    // in Apple's framework.
    public let objectID: NSManagedObjectID
    /// The node's property values by name.
    open var propertyCache: NSMutableDictionary?

    public init(objectID moid: NSManagedObjectID) {
        objectID = moid
        super.init()
    }

    /// The value of a property of the node.
    open func value(forKey key: String) -> Any? {
        propertyCache?.object(forKey: key)
    }

    /// Sets the value of a property of the node (`nil` removes it).
    open func setValue(_ value: Any?, forKey key: String) {
        if propertyCache == nil { propertyCache = NSMutableDictionary() }
        if let value {
            propertyCache!.setObject(value, forKey: key as NSString)
        } else {
            propertyCache!.removeObject(forKey: key)
        }
    }

    open override var hash: Int { objectID.hash }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSAtomicStoreCacheNode else { return false }
        return other === self || other.objectID == objectID
    }
}
