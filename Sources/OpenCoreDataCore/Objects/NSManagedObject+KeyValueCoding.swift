/// Key-value coding of managed objects: converting between the public values Core Data hands out and the
/// object's storage.
extension NSManagedObject {
    /// A stored value as key-value coding returns it for `slot`.
    func _publicValue(_ value: StoredValue, slot: Int) -> Any? {
        switch value {
        case .toMany(let contents):
            if case .toMany(ordered: true) = _layout.kinds[slot] {
                return NSOrderedSet(array: contents.objects)
            }
            return Set(contents.objects)
        default:
            return value.publicValue
        }
    }

    /// Keys that are not properties but that `NSObject`'s key-value coding answers on Apple's platforms.
    func _valueForNonPropertyKey(_ key: String) -> Any? {
        switch key {
        case "objectID": return objectID
        case "entity": return entity
        case "managedObjectContext": return managedObjectContext
        case "self": return self
        case "isInserted", "inserted": return NSNumber(value: isInserted)
        case "isUpdated", "updated": return NSNumber(value: isUpdated)
        case "isDeleted", "deleted": return NSNumber(value: isDeleted)
        case "isFault", "fault": return NSNumber(value: isFault)
        case "hasChanges": return NSNumber(value: hasChanges)
        default:
            if let slot = _primitiveAccessorSlot(key) { return _publicValue(_resolvedValue(at: slot), slot: slot) }
            // Apple raises NSUnknownKeyException. While a throwing call (a fetch, a save) evaluates a predicate or a
            // derivation, the key is reported and reads as nil, and the call throws; elsewhere the program stops.
            let message = _unknownKeyMessage(key, "valueForUndefinedKey:")
            if PredicateFunctionDispatch.report(message) { return nil }
            preconditionFailure(message)
        }
    }

    /// The slot that a primitive accessor key names: `primitiveName` for the property `name`, as Core Data
    /// generates `primitiveName`/`setPrimitiveName:` for every modeled property. `nil` for any other key.
    func _primitiveAccessorSlot(_ key: String) -> Int? {
        let prefix = "primitive"
        guard key.utf8.count > prefix.utf8.count, key.hasPrefix(prefix) else { return nil }
        let stem = key.dropFirst(prefix.count)
        guard let first = stem.first, first.isUppercase else { return nil }
        // `primitiveName` is `name`; a property that starts with capitals (`URL`) keeps them.
        if let slot = _slotIfAny(named: first.lowercased() + stem.dropFirst()) { return slot }
        return _slotIfAny(named: String(stem))
    }

    func _setValueThroughKeyValueCoding(_ value: Any?, forKey key: String) {
        guard let slot = _slotIfAny(named: key) else {
            guard let slot = _primitiveAccessorSlot(key) else {
                preconditionFailure(_unknownKeyMessage(key, "setValue:forUndefinedKey:"))
            }
            _setPrimitiveValueThroughKeyValueCoding(value, forKey: _layout.slots[slot].name)
            return
        }
        switch _layout.kinds[slot] {
        case .attribute(let type), .derived(let type):
            guard let stored = StoredValue.attributeValue(value, type: type) else {
                _rejectValue(value, key: key, expected: type)
            }
            _setAttribute(stored, at: slot, key: key)
        case .toOne:
            _setToOne(_destinationObject(value, key: key), at: slot, key: key)
        case .toMany:
            _setToMany(_destinationObjects(value, key: key), at: slot, key: key)
        case .fetched:
            preconditionFailure(
                "The fetched property '\(key)' of entity '\(_entity._name ?? "")' is read-only; it cannot be set")
        }
    }

    func _setPrimitiveValueThroughKeyValueCoding(_ value: Any?, forKey key: String) {
        let slot = _slot(forKey: key, "setPrimitiveValue:forUndefinedKey:")
        _prepareToChange()
        switch _layout.kinds[slot] {
        case .attribute(let type), .derived(let type):
            guard let stored = StoredValue.attributeValue(value, type: type) else {
                _rejectValue(value, key: key, expected: type)
            }
            _values[slot] = stored
        case .toOne:
            _values[slot] = _destinationObject(value, key: key).map { .object($0) } ?? .null
        case .toMany:
            _values[slot] = .toMany(RelationshipContents(_destinationObjects(value, key: key)))
            _proxiesDidChange(slot)
        case .fetched:
            preconditionFailure(
                "The fetched property '\(key)' of entity '\(_entity._name ?? "")' is read-only; it cannot be set")
        }
        _markChanged(slot)
    }

    func _rejectValue(_ value: Any?, key: String, expected: NSAttributeType) -> Never {
        _rejectValue(ofType: value.map { type(of: $0) }, key: key, expected: expected)
    }

    func _rejectValue(ofType givenType: Any.Type?, key: String, expected: NSAttributeType) -> Never {
        preconditionFailure(
            """
            Unacceptable type of value for attribute: property = "\(key)" of entity \(_entity._name ?? ""); \
            desired type = \(expected.defaultValueClassName ?? expected.modelEditorName); given type = \
            \(givenType.map { String(describing: $0) } ?? "nil")
            """)
    }

    func _destinationObject(_ value: Any?, key: String) -> NSManagedObject? {
        guard let value, !(value is NSNull) else { return nil }
        guard let object = value as? NSManagedObject else {
            preconditionFailure(
                """
                Unacceptable type of value for to-one relationship: property = "\(key)" of entity \
                \(_entity._name ?? ""); desired type = NSManagedObject; given type = \(type(of: value))
                """)
        }
        return object
    }

    func _destinationObjects(_ value: Any?, key: String) -> [NSManagedObject] {
        guard let value, !(value is NSNull) else { return [] }
        let elements: [Any]
        switch value {
        case let set as NSOrderedSet: elements = set.array
        case let set as NSSet: elements = set.allObjects
        case let array as NSArray: elements = array.map { $0 }
        case let objects as [NSManagedObject]: return objects
        case let objects as Set<NSManagedObject>: return Array(objects)
        case let array as [Any]: elements = array
        default:
            preconditionFailure(
                """
                Unacceptable type of value for to-many relationship: property = "\(key)" of entity \
                \(_entity._name ?? ""); desired type = NSSet or NSOrderedSet; given type = \(type(of: value))
                """)
        }
        return elements.map { element in
            guard let object = element as? NSManagedObject else {
                preconditionFailure(
                    """
                    Unacceptable element in to-many relationship "\(key)" of entity \(_entity._name ?? ""): \
                    \(type(of: element)) is not a managed object
                    """)
            }
            return object
        }
    }

    /// Sets the value at a dotted key path: every component but the last is read, the last is set.
    public func setValue(_ value: Any?, forKeyPath keyPath: String) {
        guard let dot = keyPath.lastIndex(of: ".") else {
            setValue(value, forKey: keyPath)
            return
        }
        let head = String(keyPath[..<dot])
        let last = String(keyPath[keyPath.index(after: dot)...])
        var target: Any? = self
        for component in head.split(separator: ".") {
            guard let object = target as? NSManagedObject else { return }
            target = object.value(forKey: String(component))
        }
        (target as? NSManagedObject)?.setValue(value, forKey: last)
    }

    /// The values of several keys, with `NSNull` for no value.
    public func dictionaryWithValues(forKeys keys: [String]) -> [String: Any] {
        var result: [String: Any] = [:]
        for key in keys {
            result[key] = value(forKey: key) ?? NSNull()
        }
        return result
    }

    /// Sets several keys at once; `NSNull` stands for no value.
    public func setValuesForKeys(_ keyedValues: [String: Any]) {
        for (key, value) in keyedValues {
            setValue(value is NSNull ? nil : value, forKey: key)
        }
    }
}

extension NSManagedObject: KeyValueCoding {}
