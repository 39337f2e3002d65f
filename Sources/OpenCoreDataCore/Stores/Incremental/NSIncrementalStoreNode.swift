import Foundation

/// One object's values as an `NSIncrementalStore` hands them out in `newValuesForObject(with:with:)`: its ID, its
/// persistent values by property name, and its version.
///
/// The values are keyed by property name:
/// - attributes: the value (`NSNumber`, `String`, `Date`, `Data`, `UUID`, `URL`, `NSDecimalNumber`, or for a
///   transformable attribute the value itself); a missing key or `NSNull` means no value;
/// - to-one relationships: the destination's `NSManagedObjectID`, or `NSNull` for none; a missing key makes the
///   coordinator ask `newValue(forRelationship:forObjectWith:with:)`;
/// - to-many relationships: left out; the coordinator asks `newValue(forRelationship:forObjectWith:with:)` when the
///   relationship is first used.
///
/// The version is the object's optimistic-locking version: it must change whenever the store saves a change to the
/// object (Core Data's SQLite store counts up from 1), so that a context that read an older version gets a merge
/// conflict rather than overwriting the change.
///
/// ```swift
/// let values: [String: Any] = ["name": "Acme", "boss": bossID]
/// return NSIncrementalStoreNode(objectID: objectID, withValues: values, version: 3)
/// ```
open class NSIncrementalStoreNode: NSObject, @unchecked Sendable {
    // @unchecked: the values and version change only under `lock`, so a node may be shared by a store's threads.
    private let lock = NSLock()
    private let _objectID: NSManagedObjectID
    private var _values: [String: Any]
    private var _version: UInt64

    /// A node for the object `objectID` with `values` (keyed by property name) at `version`.
    public init(objectID: NSManagedObjectID, withValues values: [String: Any], version: UInt64) {
        _objectID = objectID
        _values = values
        _version = version
        super.init()
    }

    /// Replaces the node's values and version, after the store saved or reloaded the object.
    open func update(withValues values: [String: Any], version: UInt64) {
        lock.withLock {
            _values = values
            _version = version
        }
    }

    /// The ID of the object whose values the node holds.
    open var objectID: NSManagedObjectID { _objectID }

    /// The object's version in the store.
    open var version: UInt64 { lock.withLock { _version } }

    /// The value of a property: as given to the node, `nil` where it has none.
    open func value(for prop: NSPropertyDescription) -> Any? {
        lock.withLock { _values[prop.name] }
    }
}
