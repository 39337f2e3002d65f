/// The slot-level machinery under key-value coding and the typed accessors: reading with fault firing, writing
/// with change tracking, and keeping both sides of a relationship in step.
extension NSManagedObject {
    /// The slot of the property named `key`, if the entity has one. Every accessor asks: the name table is borrowed
    /// for the lookup, where reading it from `_layout` for a call retained and released it each time.
    @inline(__always)
    func _slotIfAny(named key: String) -> Int? {
        Unmanaged.passUnretained(_layout.slotByName)._withUnsafeGuaranteedRef { $0[key] }
    }

    /// The slot of `key`, or a stop naming the entity and key (Apple raises `NSUnknownKeyException`).
    @inline(__always)
    func _slot(forKey key: String, _ operation: StaticString = "valueForUndefinedKey:") -> Int {
        guard let slot = _slotIfAny(named: key) else { preconditionFailure(_unknownKeyMessage(key, operation)) }
        return slot
    }

    /// Apple's message for a key the entity does not have.
    func _unknownKeyMessage(_ key: String, _ operation: StaticString) -> String {
        """
        [<\(String(describing: type(of: self))) \(_address)> \(operation)]: the entity \
        \(_entity._name ?? "(null)") is not key value coding-compliant for the key "\(key)".
        """
    }

    var _address: String { "0x" + String(UInt(bitPattern: ObjectIdentifier(self).hashValue), radix: 16) }

    /// Loads the object's values if it is a fault.
    @inline(__always)
    func _fireFaultIfNeeded() {
        if _flags.contains(.fault) { _fireFault() }
    }

    /// Kept out of line, so that every read that checks for a fault stays small (and needs no stack frame of its
    /// own for the loading it does not do).
    @inline(never)
    func _fireFault() {
        if _contextReference != nil {
            _withContext { $0._fulfillFault(of: self) }
        } else {
            // An object whose context has gone has nothing to load from; it reads as empty, never as garbage.
            _values = StoredValues(repeating: .null, count: _layout.slots.count)
            _flags.remove(.fault)
        }
    }

    /// The value in `slot`, with relationship faults resolved to objects.
    func _resolvedValue(at slot: Int) -> StoredValue {
        _fireFaultIfNeeded()
        // Through `_withContext`: a retain of the context (weakly referenced, so taking the runtime's slow path) on
        // every property read would cost more than the read. The check is kept apart from the completion, so that
        // it is inlined into every read rather than called.
        if _withContext({ !$0._partialObjects.isEmpty }) == true {
            _withContext { $0._completePartialFault(self, for: slot) }
        }
        let value = _values[slot]
        if value.isUnresolved { return _resolve(value, at: slot) }
        return value
    }

    /// `_resolvedValue(at:)` for the values it does not return as they are: a to-one destination known by its ID, a
    /// to-many fault, no value (a fetched property's slot).
    @inline(never)
    private func _resolve(_ value: StoredValue, at slot: Int) -> StoredValue {
        switch value {
        case .objectID(let id):
            guard let context = _context else { return .null }
            let object = context.object(with: id)
            _values[slot] = .object(object)
            return .object(object)
        case .toManyFault:
            let contents = _loadToMany(slot)
            return .toMany(contents)
        case .null:
            if case .fetched = _layout.kinds[slot], let context = _context {
                return .boxed(AnyBox(context._evaluateFetchedProperty(slot: slot, of: self)))
            }
            return .null
        case let value:
            return value
        }
    }

    /// Loads a to-many relationship's destinations from the store (or parent context).
    func _loadToMany(_ slot: Int) -> RelationshipContents {
        guard let context = _context else {
            let empty = RelationshipContents()
            _values[slot] = .toMany(empty)
            return empty
        }
        guard let contents = try? context._destinationContents(of: self, slot: slot) else {
            // The store failed to answer (a relationship fault cannot throw): the relationship reads as empty, and
            // is not cached as such, so that the next access asks the store again.
            return RelationshipContents()
        }
        _values[slot] = .toMany(contents)
        return contents
    }

    /// The loaded contents of the to-many relationship in `slot`.
    func _toManyContents(_ slot: Int) -> RelationshipContents {
        switch _resolvedValue(at: slot) {
        case .toMany(let contents): return contents
        default:
            let contents = RelationshipContents()
            _values[slot] = .toMany(contents)
            return contents
        }
    }

    /// The to-one destination in `slot`.
    func _toOneDestination(_ slot: Int) -> NSManagedObject? {
        if case .object(let object) = _resolvedValue(at: slot) { return object }
        return nil
    }

    // MARK: Change tracking

    /// Keeps the value `slot` had before the first change of the current event (a copy, for a to-many
    /// relationship, whose contents are about to change in place).
    func _rememberOldValue(_ slot: Int) {
        // An inserted object has no values from before to report.
        if _flags.contains(.inserted) || _contextReference == nil { return }
        if _sideState?.eventOldValues?.contains(where: { $0.slot == slot }) == true { return }
        let old: StoredValue
        if case .toMany(let contents) = _values[slot] {
            old = .toMany(contents.copy())
        } else {
            old = _values[slot]
        }
        let state = _makeSideState()
        if state.eventOldValues == nil {
            state.eventOldValues = [(slot, old)]
        } else {
            state.eventOldValues!.append((slot, old))
        }
    }

    /// Records that `slot` changed: the object becomes updated in its context.
    func _markChanged(_ slot: Int) {
        _insertChanged(slot)
        _withContext { context in
            context._noteChange(of: self)
            guard !_flags.contains(.inserted), !_flags.contains(.deleted), !_flags.contains(.updated) else { return }
            _flags.insert(.updated)
            context._registerUpdated(self)
        }
    }

    /// Whether the context records undo actions (checked before building one).
    var _contextRegistersUndo: Bool {
        @inline(__always) get { _withContext { $0._registersUndo } ?? false }
    }

    /// Before a change: makes sure the committed values are kept apart from the values about to change.
    @inline(__always)
    func _prepareToChange() {
        _fireFaultIfNeeded()
        if _withContext({ !$0._partialObjects.isEmpty }) == true {
            _withContext { $0._completePartialFault(self) }
        }
        if _flags.contains(.deletedAndSaved) {
            preconditionFailure(
                "The object \(_objectID) was deleted and saved; it can no longer be changed (key-value coding)")
        }
    }

    /// Writes an attribute value, tracking the change and registering its undo.
    func _setAttribute(_ newValue: StoredValue, at slot: Int, key: String) {
        _prepareToChange()
        let registersUndo = _contextRegistersUndo
        let old = registersUndo ? _values[slot] : .null
        willChangeValue(forKey: key)
        _rememberOldValue(slot)
        _values[slot] = newValue
        _markChanged(slot)
        didChangeValue(forKey: key)
        if registersUndo, let context = _context {
            context._registerUndo(for: self) { object in
                object._setAttribute(old, at: slot, key: key)
            }
        }
    }

    // MARK: Relationships

    /// The slot of the inverse of the relationship in `slot`, in `destination`'s layout.
    func _inverseSlot(of slot: Int, in destination: NSManagedObject) -> Int? {
        guard let relationship = _layout.slots[slot].property as? NSRelationshipDescription,
            let inverse = relationship._inverseRelationship
        else { return nil }
        return destination._layout.slotByName[inverse._name]
    }

    func _checkDestination(_ object: NSManagedObject, slot: Int) {
        let relationship = _layout.slots[slot].property as! NSRelationshipDescription
        if let destination = relationship._destinationEntity, !object._entity.isKindOf(entity: destination) {
            preconditionFailure(
                """
                Unacceptable type of value for relationship: property = "\(relationship._name)" of entity \
                \(_entity._name ?? ""); desired type = \(destination._name ?? ""); given type = \
                \(object._entity._name ?? "")
                """)
        }
        if let mine = _context, let theirs = object._context, mine !== theirs {
            preconditionFailure(
                """
                Illegal attempt to establish a relationship '\(relationship._name)' between objects in different \
                contexts (source = \(_objectID), destination = \(object._objectID))
                """)
        }
        if let mine = _context, object._context == nil {
            // Relating an object to one that is in no context inserts it, so that saving stays consistent.
            mine.insert(object)
        }
    }

    /// Sets a to-one relationship, keeping the inverse in step.
    func _setToOne(_ newDestination: NSManagedObject?, at slot: Int, key: String, registerUndo: Bool = true) {
        _prepareToChange()
        let old = _toOneDestination(slot)
        if old === newDestination { return }
        if let newDestination { _checkDestination(newDestination, slot: slot) }
        willChangeValue(forKey: key)
        _rememberOldValue(slot)
        _values[slot] = newDestination.map { .object($0) } ?? .null
        _markChanged(slot)
        didChangeValue(forKey: key)
        if let old, let inverseSlot = _inverseSlot(of: slot, in: old) {
            old._primitiveDetach(self, inverseSlot: inverseSlot)
        }
        if let newDestination, let inverseSlot = _inverseSlot(of: slot, in: newDestination) {
            newDestination._primitiveAttach(self, inverseSlot: inverseSlot, sourceSlot: slot)
        }
        if registerUndo, let context = _context, context._registersUndo {
            context._registerUndo(for: self) { object in
                object._setToOne(old, at: slot, key: key)
            }
        }
    }

    /// Adds `destination` to the to-many relationship in `slot`, keeping the inverse in step.
    func _addToMany(_ destination: NSManagedObject, at slot: Int, key: String, index: Int? = nil) {
        _prepareToChange()
        _checkDestination(destination, slot: slot)
        let contents = _toManyContents(slot)
        guard !contents.contains(destination) else { return }
        willChangeValue(forKey: key)
        _rememberOldValue(slot)
        contents.insert(destination, at: index)
        _markChanged(slot)
        _proxiesDidChange(slot)
        didChangeValue(forKey: key)
        if let inverseSlot = _inverseSlot(of: slot, in: destination) {
            destination._primitiveAttach(self, inverseSlot: inverseSlot, sourceSlot: slot)
        }
        if _contextRegistersUndo, let context = _context {
            context._registerUndo(for: self) { object in
                object._removeFromMany(destination, at: slot, key: key)
            }
        }
    }

    /// Removes `destination` from the to-many relationship in `slot`, keeping the inverse in step.
    func _removeFromMany(_ destination: NSManagedObject, at slot: Int, key: String) {
        _prepareToChange()
        let contents = _toManyContents(slot)
        let position = contents.objects.firstIndex { $0 === destination }
        guard let position else { return }
        willChangeValue(forKey: key)
        _rememberOldValue(slot)
        contents.remove(destination)
        _markChanged(slot)
        _proxiesDidChange(slot)
        didChangeValue(forKey: key)
        if let inverseSlot = _inverseSlot(of: slot, in: destination) {
            destination._primitiveDetach(self, inverseSlot: inverseSlot)
        }
        if _contextRegistersUndo, let context = _context {
            let ordered = (_layout.slots[slot].property as? NSRelationshipDescription)?._isOrdered ?? false
            context._registerUndo(for: self) { object in
                object._addToMany(destination, at: slot, key: key, index: ordered ? position : nil)
            }
        }
    }

    /// Replaces the whole contents of a to-many relationship.
    func _setToMany(_ newObjects: [NSManagedObject], at slot: Int, key: String) {
        _prepareToChange()
        let contents = _toManyContents(slot)
        let newIdentities = Set(newObjects.map(ObjectIdentifier.init))
        for old in contents.objects where !newIdentities.contains(ObjectIdentifier(old)) {
            _removeFromMany(old, at: slot, key: key)
        }
        let ordered = (_layout.slots[slot].property as? NSRelationshipDescription)?._isOrdered ?? false
        for (position, object) in newObjects.enumerated() {
            if contents.contains(object) {
                if ordered, let current = contents.objects.firstIndex(where: { $0 === object }), current != position {
                    _moveInOrdered(object, to: position, at: slot, key: key)
                }
            } else {
                _addToMany(object, at: slot, key: key, index: ordered ? position : nil)
            }
        }
    }

    func _moveInOrdered(_ object: NSManagedObject, to position: Int, at slot: Int, key: String) {
        let contents = _toManyContents(slot)
        guard let current = contents.objects.firstIndex(where: { $0 === object }), current != position else { return }
        willChangeValue(forKey: key)
        _rememberOldValue(slot)
        contents.remove(object)
        contents.insert(object, at: min(position, contents.count))
        _markChanged(slot)
        _proxiesDidChange(slot)
        didChangeValue(forKey: key)
        if _contextRegistersUndo, let context = _context {
            context._registerUndo(for: self) { target in
                target._moveInOrdered(object, to: current, at: slot, key: key)
            }
        }
    }

    /// The inverse side of a relationship gains `source`; no further inverse handling and no undo of its own
    /// (undoing the change on the source side restores both sides).
    func _primitiveAttach(_ source: NSManagedObject, inverseSlot: Int, sourceSlot: Int) {
        _fireFaultIfNeeded()
        let key = _layout.slots[inverseSlot].name
        switch _layout.kinds[inverseSlot] {
        case .toMany:
            let contents = _toManyContents(inverseSlot)
            guard !contents.contains(source) else { return }
            willChangeValue(forKey: key)
            _rememberOldValue(inverseSlot)
            contents.insert(source)
            _markChanged(inverseSlot)
            _proxiesDidChange(inverseSlot)
            didChangeValue(forKey: key)
        case .toOne:
            let previous = _toOneDestination(inverseSlot)
            if previous === source { return }
            willChangeValue(forKey: key)
            _rememberOldValue(inverseSlot)
            _values[inverseSlot] = .object(source)
            _markChanged(inverseSlot)
            didChangeValue(forKey: key)
            // The object this one pointed to loses it: a one-to-one or many-to-one moves, never duplicates.
            let sourceName = source._layout.slots[sourceSlot].name
            if let previous, previous !== source, let previousSlot = previous._layout.slotByName[sourceName] {
                previous._primitiveDetach(self, inverseSlot: previousSlot)
            }
        default:
            break
        }
    }

    /// The inverse side of a relationship loses `source`.
    func _primitiveDetach(_ source: NSManagedObject, inverseSlot: Int) {
        _fireFaultIfNeeded()
        let key = _layout.slots[inverseSlot].name
        switch _layout.kinds[inverseSlot] {
        case .toMany:
            let contents = _toManyContents(inverseSlot)
            guard contents.contains(source) else { return }
            willChangeValue(forKey: key)
            _rememberOldValue(inverseSlot)
            contents.remove(source)
            _markChanged(inverseSlot)
            _proxiesDidChange(inverseSlot)
            didChangeValue(forKey: key)
        case .toOne:
            // Compared without resolving a destination known only by its ID: that would make an object of it and
            // store it here, a copy of all this object's values, only for the slot to be cleared below.
            switch _values[inverseSlot] {
            case .object(let destination) where destination === source: break
            case .objectID(let id) where id._isEqual(to: source._objectID): break
            default: return
            }
            willChangeValue(forKey: key)
            _rememberOldValue(inverseSlot)
            _values[inverseSlot] = .null
            _markChanged(inverseSlot)
            didChangeValue(forKey: key)
        default:
            break
        }
    }
}
