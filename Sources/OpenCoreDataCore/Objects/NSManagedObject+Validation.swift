/// Validation of managed objects against their model: mandatory values, validation predicates (which carry
/// ranges, lengths and patterns), relationship counts and delete rules.
extension NSManagedObject {
    /// Validates one property's value: the model's rules, then the per-key hook.
    func _validateValue(_ value: inout Any?, forKey key: String) throws {
        let slot = _slot(forKey: key, "validateValue:forKey:")
        try _validateValue(&value, slot: slot, stored: nil)
    }

    /// Validates one property's value. `stored` is the slot's value in storage when `value` is its public form.
    func _validateValue(_ value: inout Any?, slot: Int, stored: StoredValue?) throws {
        if !_passesModelRules(slot: slot, isNull: stored?.isNull ?? true),
            let error = _modelValidationError(for: _layout.slots[slot].property, value: value)
        {
            throw error
        }
        try validate(value: &value, forKey: _layout.slots[slot].name)
    }

    /// Whether a slot's value passes the model's rules without its public form being looked into: an attribute
    /// that has a value and no validation predicates — the common case.
    @inline(__always)
    private func _passesModelRules(slot: Int, isNull: Bool) -> Bool {
        guard !isNull, case .attribute = _layout.kinds[slot] else { return false }
        // (The property alone, not the slot: copying a slot retains its property and its name.)
        return _layout.allProperties[slot]._validationPredicates.isEmpty
    }

    /// The first rule of the model that `value` breaks for `property`, as Core Data reports it.
    func _modelValidationError(for property: NSPropertyDescription, value: Any?) -> NSError? {
        let isNil = value == nil || value is NSNull
        switch property {
        case let relationship as NSRelationshipDescription where relationship.isToMany:
            // A to-many relationship's value is a collection, never nil, so optionality alone requires nothing:
            // Apple enforces the minimum of a non-optional relationship always, and of an optional one only when it
            // holds something (an empty non-optional relationship with no minimum is valid).
            let count = _collectionCount(value)
            if relationship._minCount > 0, count < relationship._minCount, count > 0 || !relationship._isOptional {
                return _validationError(
                    NSValidationRelationshipLacksMinimumCountError, property: property, value: value,
                    message: "\(property._name) must have at least \(relationship._minCount) item(s).")
            }
            if relationship._maxCount > 0, count > relationship._maxCount {
                return _validationError(
                    NSValidationRelationshipExceedsMaximumCountError, property: property, value: value,
                    message: "\(property._name) may have at most \(relationship._maxCount) item(s).")
            }
            return nil
        default:
            if isNil {
                guard !property._isOptional else { return nil }
                return _validationError(
                    NSValidationMissingMandatoryPropertyError, property: property, value: nil,
                    message: "\(property._name) is a required value.")
            }
            for (index, predicate) in property._validationPredicates.enumerated() {
                guard !predicate.evaluate(with: value) else { continue }
                let warning = index < property._validationWarnings.count ? property._validationWarnings[index] : nil
                var code = NSManagedObjectValidationError
                var message = "\(property._name) is not valid (\(predicate.predicateFormat))."
                switch warning {
                case let number as Int: code = number
                case let number as NSNumber: code = number.intValue
                case let text as String where !text.isEmpty:
                    if let number = Int(text) { code = number } else { message = text }
                default: break
                }
                if code != NSManagedObjectValidationError { message = Self._message(for: code, property: property) }
                return _validationError(
                    code, property: property, value: value, message: message,
                    extra: [NSValidationPredicateErrorKey: predicate])
            }
            return nil
        }
    }

    private func _collectionCount(_ value: Any?) -> Int {
        switch value {
        case let set as NSSet: return set.count
        case let set as NSOrderedSet: return set.count
        case let set as Set<NSManagedObject>: return set.count
        case let array as [Any]: return array.count
        case let array as NSArray: return array.count
        default: return 0
        }
    }

    static func _message(for code: Int, property: NSPropertyDescription) -> String {
        let name = property._name
        switch code {
        case NSValidationNumberTooLargeError: return "\(name) is too large."
        case NSValidationNumberTooSmallError: return "\(name) is too small."
        case NSValidationDateTooLateError: return "\(name) is too late."
        case NSValidationDateTooSoonError: return "\(name) is too soon."
        case NSValidationInvalidDateError: return "\(name) is not a valid date."
        case NSValidationStringTooLongError: return "\(name) is too long."
        case NSValidationStringTooShortError: return "\(name) is too short."
        case NSValidationStringPatternMatchingError: return "\(name) does not match the required pattern."
        case NSValidationInvalidURIError: return "\(name) is not a valid URI."
        default: return "\(name) is not valid."
        }
    }

    /// A validation error in Core Data's shape: code, message, object, key and value.
    func _validationError(
        _ code: Int, property: NSPropertyDescription, value: Any?, message: String, extra: [String: Any] = [:]
    ) -> NSError {
        var info = extra
        info[NSValidationObjectErrorKey] = self
        info[NSValidationKeyErrorKey] = property._name
        if let value, !(value is NSNull) { info[NSValidationValueErrorKey] = value }
        return coreDataError(code, message, userInfo: info)
    }

    /// Validates every property; several failures are reported together as `NSValidationMultipleErrorsError`.
    func _validateAllProperties() throws {
        var errors: [NSError] = []
        // Most classes leave the per-key hook alone; their values then need no public form (an `NSNumber` for
        // each number) where the model's rules need none either.
        let callsHook = ValidationHookOverrides.overridesHook(type(of: self))
        _fireFaultIfNeeded()
        for slot in _layout.slots.indices {
            if case .fetched = _layout.kinds[slot] { continue }
            if case .derived = _layout.kinds[slot] { continue }
            // An attribute's value is in `_values` as it is (only relationships resolve), so it is looked at there.
            if !callsHook {
                let isNull = _values.isNull(at: slot)
                if _passesModelRules(slot: slot, isNull: isNull) { continue }
                // No value passes an optional attribute's rules: its predicates judge values only. (Here alone:
                // `_validateValue` is also asked of a candidate value, which `_values` does not hold.)
                if isNull, case .attribute = _layout.kinds[slot], _layout.allProperties[slot]._isOptional { continue }
            }
            let stored = _resolvedValue(at: slot)
            var value = _publicValue(stored, slot: slot)
            do {
                try _validateValue(&value, slot: slot, stored: stored)
            } catch let error as NSError {
                errors.append(error)
            }
        }
        if errors.count == 1 { throw errors[0] }
        if errors.count > 1 { throw Self._multipleErrors(errors) }
    }

    static func _multipleErrors(_ errors: [NSError]) -> NSError {
        coreDataError(
            NSValidationMultipleErrorsError, "Multiple validation errors occurred.",
            userInfo: [NSDetailedErrorsKey: errors])
    }

    /// A deny rule forbids deleting an object while its relationship still holds objects.
    func _validateDeleteRules() throws {
        for slot in _layout.relationshipSlots {
            guard let relationship = _layout.slots[slot].property as? NSRelationshipDescription,
                relationship._deleteRule == .denyDeleteRule
            else { continue }
            let destinations: [NSManagedObject]
            switch _resolvedValue(at: slot) {
            case .object(let object): destinations = [object]
            case .toMany(let contents): destinations = contents.objects
            default: destinations = []
            }
            let remaining = destinations.filter { !$0.isDeleted }
            if !remaining.isEmpty {
                throw _validationError(
                    NSValidationRelationshipDeniedDeleteError, property: relationship, value: nil,
                    message:
                        "\(relationship._name) still holds \(remaining.count) object(s), so the deny rule forbids the deletion.",
                    extra: [NSValidationValueErrorKey: remaining.count == 1 ? remaining[0] : Set(remaining)])
            }
        }
    }
}
