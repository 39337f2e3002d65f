import Foundation

// Partial faults: a fetch of managed objects with `propertiesToFetch` loads only those properties (Apple's
// NSFetchRequest reference: "the returned objects are partial faults"). Reading one of them does not go to the
// store; reading another property loads the rest of the object. A store may load the listed properties only (the
// SQLite store selects their columns alone) or the whole row; the context treats the objects the same either way.

extension NSFetchRequest {
    /// The names of the properties a fetch of managed objects loads, or `nil` if it loads them all: property names
    /// and descriptions of attributes and relationships in `propertiesToFetch` (key paths and expressions make no
    /// sense for objects and load everything).
    var _partialPropertyNames: Set<String>? {
        guard resultType == .managedObjectResultType, let properties = propertiesToFetch else { return nil }
        var names = Set<String>()
        for property in properties {
            switch property {
            case is NSExpressionDescription: return nil
            case let description as NSPropertyDescription: names.insert(description._name)
            case let name as String where !name.contains("."): names.insert(name)
            default: return nil
            }
        }
        return names
    }
}

extension NSEntityDescription {
    /// The slots a partial fetch that loads `names` leaves unloaded: the stored attributes and to-one relationships
    /// not named. (To-many relationships are faults of their own; transient properties are never loaded.)
    func _unfetchedSlots(loading names: Set<String>) -> SlotSet {
        var unfetched = SlotSet()
        for (index, slot) in _caches.slots.enumerated() where slot.isPersistent && !names.contains(slot.name) {
            switch slot.kind {
            case .attribute, .toOne: unfetched.insert(index)
            default: break
            }
        }
        return unfetched
    }
}
