/// The state of a managed object that few objects need — changes in the current event, live to-many proxies, a
/// merge policy's verdict, changes to slots beyond 62 — kept apart so that every object is smaller: an object's own
/// fields then fit the allocator's 96-byte size class instead of its 128-byte one.
final class ManagedObjectSideState {
    /// The old values of slots changed since the last `processPendingChanges()`, for
    /// `changedValuesForCurrentEvent()`. Few slots change in one event, so a list searched in order.
    var eventOldValues: [(slot: Int, value: StoredValue)]?
    /// Live `mutableSetValue(forKey:)`/`mutableOrderedSetValue(forKey:)` proxies, kept in step with the
    /// relationships they stand for.
    var proxies: [Int: [WeakProxy]]?
    /// The changed slots, when one of them is beyond 62.
    var changed: SlotSet?
}

extension NSManagedObject {
    /// The side state, made on first need.
    @inline(__always)
    func _makeSideState() -> ManagedObjectSideState {
        if let state = _sideState { return state }
        let state = ManagedObjectSideState()
        _sideState = state
        return state
    }

    /// Slots changed since the last save.
    var _changed: SlotSet {
        get {
            if _changedBits & Self._moreChangedSlots != 0, let changed = _sideState?.changed { return changed }
            return SlotSet(lowWord: _changedBits)
        }
        set {
            if let bits = newValue.lowWordIfOnlyBelow(63) {
                // The side state holds changed slots only while the flag bit says so: an object saved with only
                // low slots changed (nearly all) is not touched beyond itself, where its side state is cold.
                if _changedBits & Self._moreChangedSlots != 0 { _sideState?.changed = nil }
                _changedBits = bits
            } else {
                _changedBits = Self._moreChangedSlots
                _makeSideState().changed = newValue
            }
        }
    }

    /// Records that `slot` changed since the last save.
    @inline(__always)
    func _insertChanged(_ slot: Int) {
        if slot < 63, _changedBits & Self._moreChangedSlots == 0 {
            _changedBits |= 1 << UInt64(slot)
        } else {
            var changed = _changed
            changed.insert(slot)
            _changed = changed
        }
    }

    static let _moreChangedSlots: UInt64 = 1 << 63

    var _eventOldValues: [(slot: Int, value: StoredValue)]? {
        get { _sideState?.eventOldValues }
        set {
            if newValue == nil {
                _sideState?.eventOldValues = nil
            } else {
                _makeSideState().eventOldValues = newValue
            }
        }
    }

    var _proxies: [Int: [WeakProxy]]? {
        get { _sideState?.proxies }
        set {
            if newValue == nil {
                _sideState?.proxies = nil
            } else {
                _makeSideState().proxies = newValue
            }
        }
    }

    var _forceNextSave: Bool {
        get { _flags.contains(.forceNextSave) }
        set {
            if newValue { _flags.insert(.forceNextSave) } else { _flags.remove(.forceNextSave) }
        }
    }
}
