/// What changed in a managed object since it was last fetched or saved.
extension NSManagedObject {
    /// The persistent properties changed since the object was last fetched or saved, with their new values
    /// (`NSNull` for no value). A property set back to its committed value is not listed.
    public func changedValues() -> [String: Any] {
        guard !_changed.isEmpty, !_values.isEmpty else { return [:] }
        var result: [String: Any] = [:]
        for slot in _changed.elements where _layout.slots[slot].isPersistent {
            if let committed = _committed, slot < committed.count, _isUnchanged(slot, committed: committed[slot]) {
                continue
            }
            result[_layout.slots[slot].name] = _publicValue(_values[slot], slot: slot) ?? NSNull()
        }
        return result
    }

    /// The persistent properties changed since the context last processed pending changes, with their values
    /// from before those changes (`NSNull` for no value).
    public func changedValuesForCurrentEvent() -> [String: Any] {
        guard let old = _eventOldValues else { return [:] }
        var result: [String: Any] = [:]
        for (slot, value) in old where _layout.slots[slot].isPersistent {
            result[_layout.slots[slot].name] = _publicValue(value, slot: slot) ?? NSNull()
        }
        return result
    }

    /// The values of `keys` as last fetched or saved — what the store holds — ignoring unsaved changes; all
    /// persistent properties for `nil`. An object never saved has no committed values.
    public func committedValues(forKeys keys: [String]?) -> [String: Any] {
        guard let committed = _committedSnapshot() else { return [:] }
        let slots: [Int]
        if let keys {
            slots = keys.map { _slot(forKey: $0) }
        } else {
            slots = _layout.persistentSlots
        }
        var result: [String: Any] = [:]
        for slot in slots {
            let value: Any?
            switch _layout.kinds[slot] {
            case .toMany:
                let ids = (try? _context?._committedDestinationIDs(of: self, slot: slot)) ?? []
                let objects = ids.compactMap { _context?.object(with: $0) }
                if case .toMany(ordered: true) = _layout.kinds[slot] {
                    value = NSOrderedSet(array: objects)
                } else {
                    value = Set(objects)
                }
            case .toOne:
                switch committed[slot] {
                case .objectID(let id): value = _context?.object(with: id)
                case .object(let object): value = object
                default: value = nil
                }
            default:
                value = committed[slot].publicValue
            }
            result[_layout.slots[slot].name] = value ?? NSNull()
        }
        return result
    }

    /// The committed values, loading them if the object is a fault.
    func _committedSnapshot() -> StoredValues? {
        _fireFaultIfNeeded()
        return _committed
    }

    /// Whether the current value of `slot` equals its committed value.
    func _isUnchanged(_ slot: Int, committed: StoredValue) -> Bool {
        switch (_values[slot], committed) {
        case (.toMany, _), (.toManyFault, _):
            return false
        default:
            return _values[slot].isSame(as: committed)
        }
    }
}
