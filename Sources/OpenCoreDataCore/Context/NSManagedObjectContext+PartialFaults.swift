import Foundation

// Partial faults (`propertiesToFetch` on a fetch of managed objects, see `StorePartialFetch.swift`). The context
// keeps, for each such object, the slots it has not loaded. Reading one of them, changing the object or deleting it
// loads the object's row and fills them in; reading a loaded slot needs no store. An object that turns back into a
// fault, or goes away, stops being partial: its next fault loads it whole.

extension NSManagedObjectContext {
    /// Loads the rest of `object` if it is a partial fault that has not loaded `slot`.
    @inline(__always)
    func _completePartialFault(_ object: NSManagedObject, for slot: Int) {
        guard let unfetched = _partialObjects[ObjectIdentifier(object)], unfetched.contains(slot) else { return }
        _completePartialFault(object)
    }

    /// Loads the rest of `object` if it is a partial fault: the row's values, with the object's unsaved changes,
    /// loaded to-many relationships and transient values kept over them. The row's version becomes the object's,
    /// as its values now all come from that row.
    func _completePartialFault(_ object: NSManagedObject) {
        guard _partialObjects.removeValue(forKey: ObjectIdentifier(object)) != nil,
            !object._objectID.isTemporaryID, !object._values.isEmpty,
            let row = try? _parentStore?._row(for: object._objectID, for: self)
        else { return }
        var values = row.values
        for slot in object._layout.slots.indices where slot < values.count && slot < object._values.count {
            let kept: Bool
            if object._changed.contains(slot) || !object._layout.slots[slot].isPersistent {
                kept = true
            } else if case .toMany = object._values[slot] {
                kept = true
            } else {
                kept = false
            }
            if kept { values[slot] = object._values[slot] }
        }
        object._values = values
        object._committed = row.values
        object._version = row.version
    }
}
