/// Declares a property of an `NSManagedObject` subclass whose value lives in the object's storage: the
/// stand-in for `@NSManaged`, which needs the Objective-C runtime. Write it exactly where `@NSManaged` would be.
///
/// ```swift
/// final class Employee: NSManagedObject {
///     @Managed var firstName: String?
///     @Managed var age: Int16            // scalar: nil reads as 0
///     @Managed var company: Company?     // to-one
///     @Managed var projects: Set<Project> // to-many (or NSSet; NSOrderedSet when ordered)
/// }
/// ```
@attached(accessor)
public macro Managed() = #externalMacro(module: "OpenCoreDataMacros", type: "ManagedMacro")

/// Declares one of the to-many accessor methods Xcode generates (`addToEmployees(_:)`,
/// `removeFromEmployees(_:)`, `insertIntoEmployees(_:at:)`, `replaceEmployees(at:with:)`…): the stand-in for
/// `@NSManaged` on such a method. The body is derived from the method's name.
///
/// ```swift
/// extension Company {
///     @ManagedAccessor func addToEmployees(_ value: Employee)
///     @ManagedAccessor func removeFromEmployees(_ values: NSSet)
/// }
/// ```
@attached(body)
public macro ManagedAccessor() = #externalMacro(module: "OpenCoreDataMacros", type: "ManagedAccessorMacro")

/// A property value in the representation a managed object stores. Public only so that `@Managed` accessors
/// can use it; not part of the API.
public struct _ManagedStorageValue {
    var stored: StoredValue
}

/// Types that `@Managed` properties may have, converted straight to and from the object's storage. Public only
/// so that `@Managed` accessors can use it; not part of the API.
public protocol _ManagedPropertyValue {
    static func _fromManagedStorage(_ value: consuming _ManagedStorageValue, key: String) -> Self
    var _managedStorage: _ManagedStorageValue { get }
}

extension _ManagedStorageValue {
    /// The objects of a loaded to-many relationship, in order; none for anything else.
    public var _toManyObjects: [NSManagedObject] {
        guard case .toMany(let contents) = stored else { return [] }
        return contents.objects
    }

    var integer: Int64 {
        switch stored {
        case .int(let value): return value
        case .bool(let value): return value ? 1 : 0
        case .double(let value): return value.isFinite ? Int64(value) : 0
        case .float(let value): return value.isFinite ? Int64(value) : 0
        case .boxed(let box): return StoredValue.integer(box.value) ?? 0
        default: return 0
        }
    }

    var floatingPoint: Double {
        switch stored {
        case .double(let value): return value
        case .float(let value): return Double(value)
        case .int(let value): return Double(value)
        case .bool(let value): return value ? 1 : 0
        case .boxed(let box): return StoredValue.double(box.value) ?? 0
        default: return 0
        }
    }
}

extension Int: _ManagedPropertyValue {
    public static func _fromManagedStorage(_ value: consuming _ManagedStorageValue, key: String) -> Int {
        Int(truncatingIfNeeded: value.integer)
    }
    public var _managedStorage: _ManagedStorageValue { .init(stored: .int(Int64(self))) }
}

extension Int16: _ManagedPropertyValue {
    public static func _fromManagedStorage(_ value: consuming _ManagedStorageValue, key: String) -> Int16 {
        Int16(truncatingIfNeeded: value.integer)
    }
    public var _managedStorage: _ManagedStorageValue { .init(stored: .int(Int64(self))) }
}

extension Int32: _ManagedPropertyValue {
    public static func _fromManagedStorage(_ value: consuming _ManagedStorageValue, key: String) -> Int32 {
        Int32(truncatingIfNeeded: value.integer)
    }
    public var _managedStorage: _ManagedStorageValue { .init(stored: .int(Int64(self))) }
}

extension Int64: _ManagedPropertyValue {
    public static func _fromManagedStorage(_ value: consuming _ManagedStorageValue, key: String) -> Int64 {
        value.integer
    }
    public var _managedStorage: _ManagedStorageValue { .init(stored: .int(self)) }
}

extension Double: _ManagedPropertyValue {
    public static func _fromManagedStorage(_ value: consuming _ManagedStorageValue, key: String) -> Double {
        value.floatingPoint
    }
    public var _managedStorage: _ManagedStorageValue { .init(stored: .double(self)) }
}

extension Float: _ManagedPropertyValue {
    public static func _fromManagedStorage(_ value: consuming _ManagedStorageValue, key: String) -> Float {
        if case .float(let float) = value.stored { return float }
        return Float(value.floatingPoint)
    }
    public var _managedStorage: _ManagedStorageValue { .init(stored: .float(self)) }
}

extension Bool: _ManagedPropertyValue {
    public static func _fromManagedStorage(_ value: consuming _ManagedStorageValue, key: String) -> Bool {
        if case .bool(let bool) = value.stored { return bool }
        return value.integer != 0
    }
    public var _managedStorage: _ManagedStorageValue { .init(stored: .bool(self)) }
}

extension String: _ManagedPropertyValue {
    public static func _fromManagedStorage(_ value: consuming _ManagedStorageValue, key: String) -> String {
        if case .string(let string) = value.stored { return string }
        return missingValue(key, value, placeholder: "")
    }
    public var _managedStorage: _ManagedStorageValue { .init(stored: .string(self)) }
}

extension Date: _ManagedPropertyValue {
    public static func _fromManagedStorage(_ value: consuming _ManagedStorageValue, key: String) -> Date {
        if case .date(let date) = value.stored { return date }
        return missingValue(key, value, placeholder: Date(timeIntervalSinceReferenceDate: 0))
    }
    public var _managedStorage: _ManagedStorageValue { .init(stored: .date(self)) }
}

extension Data: _ManagedPropertyValue {
    public static func _fromManagedStorage(_ value: consuming _ManagedStorageValue, key: String) -> Data {
        if case .data(let data) = value.stored { return data }
        return missingValue(key, value, placeholder: Data())
    }
    public var _managedStorage: _ManagedStorageValue { .init(stored: .data(self)) }
}

extension UUID: _ManagedPropertyValue {
    public static func _fromManagedStorage(_ value: consuming _ManagedStorageValue, key: String) -> UUID {
        if case .uuid(let uuid) = value.stored { return uuid }
        return missingValue(key, value, placeholder: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
    }
    public var _managedStorage: _ManagedStorageValue { .init(stored: .uuid(self)) }
}

extension URL: _ManagedPropertyValue {
    public static func _fromManagedStorage(_ value: consuming _ManagedStorageValue, key: String) -> URL {
        if case .url(let url) = value.stored { return url }
        return missingValue(key, value, placeholder: URL(fileURLWithPath: "/"))
    }
    public var _managedStorage: _ManagedStorageValue { .init(stored: .url(self)) }
}

extension Decimal: _ManagedPropertyValue {
    public static func _fromManagedStorage(_ value: consuming _ManagedStorageValue, key: String) -> Decimal {
        if case .boxed(let box) = value.stored, let decimal = box.value as? Decimal { return decimal }
        if case .null = value.stored { return missingValue(key, value, placeholder: 0) }
        return PredicateNumber.decimal(value.floatingPoint)
    }
    public var _managedStorage: _ManagedStorageValue { .init(stored: .boxed(AnyBox(self))) }
}

extension NSDecimalNumber: _ManagedPropertyValue {
    public static func _fromManagedStorage(_ value: consuming _ManagedStorageValue, key: String) -> Self {
        if case .boxed(let box) = value.stored, let decimal = box.value as? Decimal {
            return NSDecimalNumber(decimal: decimal) as! Self
        }
        return missingValue(key, value, placeholder: NSDecimalNumber.zero as? Self)
    }
    public var _managedStorage: _ManagedStorageValue { .init(stored: .boxed(AnyBox(decimalValue))) }
}

extension Optional: _ManagedPropertyValue where Wrapped: _ManagedPropertyValue {
    public static func _fromManagedStorage(_ value: consuming _ManagedStorageValue, key: String) -> Wrapped? {
        if case .null = value.stored { return nil }
        return Wrapped._fromManagedStorage(value, key: key)
    }
    public var _managedStorage: _ManagedStorageValue {
        switch self {
        case .none: return .init(stored: .null)
        case .some(let wrapped): return wrapped._managedStorage
        }
    }
}

extension NSManagedObject: _ManagedPropertyValue {
    public static func _fromManagedStorage(_ value: consuming _ManagedStorageValue, key: String) -> Self {
        if case .object(let object) = value.stored, let typed = object as? Self { return typed }
        if value._isKeyPathPlaceholder { return ManagedKeyPath.destinationProbe(of: self) as! Self }
        return missingValue(key, value, placeholder: nil)
    }
    public var _managedStorage: _ManagedStorageValue { .init(stored: .object(self)) }
}

extension Set: _ManagedPropertyValue where Element: NSManagedObject {
    /// Inlinable, so that the set is built by code specialized for `Element` in the module that declares it.
    @inlinable
    public static func _fromManagedStorage(_ value: consuming _ManagedStorageValue, key: String) -> Set<Element> {
        let objects = value._toManyObjects
        var set = Set<Element>(minimumCapacity: objects.count)
        for object in objects {
            // Destinations are mostly of exactly the declared class: then no dynamic cast is needed.
            set.insert(type(of: object) == Element.self ? unsafeDowncast(object, to: Element.self) : object as! Element)
        }
        return set
    }
    public var _managedStorage: _ManagedStorageValue {
        .init(stored: .toMany(RelationshipContents(Array(self))))
    }
}

extension NSSet: _ManagedPropertyValue {
    public static func _fromManagedStorage(_ value: consuming _ManagedStorageValue, key: String) -> Self {
        guard case .toMany(let contents) = value.stored else { return NSSet(array: []) as! Self }
        return NSSet(array: contents.objects) as! Self
    }
    public var _managedStorage: _ManagedStorageValue {
        .init(stored: .toMany(RelationshipContents(allObjects.compactMap { $0 as? NSManagedObject })))
    }
}

extension NSOrderedSet: _ManagedPropertyValue {
    public static func _fromManagedStorage(_ value: consuming _ManagedStorageValue, key: String) -> Self {
        guard case .toMany(let contents) = value.stored else { return NSOrderedSet(array: []) as! Self }
        return NSOrderedSet(array: contents.objects) as! Self
    }
    public var _managedStorage: _ManagedStorageValue {
        .init(stored: .toMany(RelationshipContents(array.compactMap { $0 as? NSManagedObject })))
    }
}

/// What a non-optional property with no value reads as: a stand-in while a key path is probed (see
/// `ManagedKeyPath`), a stop with a message otherwise.
private func missingValue<T>(_ key: String, _ value: _ManagedStorageValue, placeholder: @autoclosure () -> T?) -> T {
    if value._isKeyPathPlaceholder, let placeholder = placeholder() { return placeholder }
    preconditionFailure(
        """
        The managed property '\(key)' has no value but is declared with the non-optional type \(T.self); declare \
        it optional, or give it a value (or a default value in the model) before reading it
        """)
}

/// What a generated to-many accessor does (see `@ManagedAccessor`). Public only for the macro's expansion.
public enum _ToManyAccessorOperation: Sendable {
    case addObject, addObjects, removeObject, removeObjects
    case insertObjectAtIndex, insertObjectsAtIndexes, removeObjectAtIndex, removeObjectsAtIndexes
    case replaceObjectAtIndex, replaceObjectsAtIndexes
}

extension NSManagedObject {
    /// The getter of a `@Managed` property. Inlinable, so that the conversion is specialized for the property's
    /// type in the module that declares it instead of going through the protocol's witness table.
    @inlinable
    public func _managedValue<T: _ManagedPropertyValue>(forKey key: String) -> T {
        T._fromManagedStorage(_managedStorageValue(forKey: key, as: T.self), key: key)
    }

    /// The stored value of a `@Managed` property of type `type`, read as its getter reads it: access
    /// notifications, faults fired.
    public func _managedStorageValue<T>(forKey key: String, as type: T.Type) -> _ManagedStorageValue {
        guard let slot = _slotIfAny(named: key) else { return _storageValueForUndefinedKey(key, as: type) }
        willAccessValue(forKey: key)
        let value = _resolvedValue(at: slot)
        didAccessValue(forKey: key)
        return _ManagedStorageValue(stored: value)
    }

    /// A `@Managed` property the entity does not have: a stand-in's, while a key path is probed (see
    /// `ManagedKeyPath`), or a programmer error.
    @inline(never)
    func _storageValueForUndefinedKey<T>(_ key: String, as type: T.Type) -> _ManagedStorageValue {
        guard _layout === ManagedKeyPath.probeLayout else {
            // `@Managed var primitiveName` beside `@Managed var name`: the stored value, without notifications.
            if let slot = _primitiveAccessorSlot(key) { return _ManagedStorageValue(stored: _resolvedValue(at: slot)) }
            _ = _slot(forKey: key)
            preconditionFailure("unreachable: '\(key)' is not a property of the entity")
        }
        ManagedKeyPath.record(key, of: self, valueType: type)
        return ManagedKeyPath.placeholderStorage
    }

    /// The getter of a `@Managed` property of a type the storage does not know (a transformable attribute's
    /// class, say): the value is cast from key-value coding's.
    public func _managedValue<T>(forKey key: String) -> T {
        if _layout === ManagedKeyPath.probeLayout {
            ManagedKeyPath.record(key, of: self, valueType: T.self)
            if let placeholder = ManagedKeyPath.placeholder(of: T.self) { return placeholder }
            preconditionFailure(
                """
                Cannot find the Core Data key of a key path through the @Managed property '\(key)': OpenCoreData \
                cannot make a stand-in \(T.self) to read past it. Give the key as a string instead
                """)
        }
        let value = self.value(forKey: key)
        if let typed = value as? T { return typed }
        if value == nil, let none = Optional<Any>.none as? T { return none }
        preconditionFailure(
            """
            The managed property '\(key)' of entity '\(_entity._name ?? "")' holds \
            \(value.map { "a value of type \(type(of: $0))" } ?? "no value"), which is not a \(T.self)
            """)
    }

    /// The setter of a `@Managed` property (inlinable, as the getter is).
    @inlinable
    public func _setManagedValue<T: _ManagedPropertyValue>(_ newValue: T, forKey key: String) {
        _setManagedStorageValue(newValue._managedStorage, of: T.self, forKey: key)
    }

    /// Sets a `@Managed` property from its stored form; `type` is the property's declared type, for messages.
    public func _setManagedStorageValue(_ value: _ManagedStorageValue, of type: Any.Type, forKey key: String) {
        guard let slot = _slotIfAny(named: key) else {
            guard let slot = _primitiveAccessorSlot(key) else {
                preconditionFailure(_unknownKeyMessage(key, "setValue:forUndefinedKey:"))
            }
            _setPrimitiveValueThroughKeyValueCoding(
                _publicValue(value.stored, slot: slot), forKey: _layout.slots[slot].name)
            return
        }
        let stored = value.stored
        switch _layout.kinds[slot] {
        case .attribute(let attributeType), .derived(let attributeType):
            // Typed properties nearly always hold the attribute's own representation: then it is stored as it is.
            if stored.isRepresentation(of: attributeType) {
                _setAttribute(stored, at: slot, key: key)
                return
            }
            guard let normalized = _normalize(stored, to: attributeType) else {
                _rejectValue(ofType: type, key: key, expected: attributeType)
            }
            _setAttribute(normalized, at: slot, key: key)
        case .toOne:
            switch stored {
            case .object(let object): _setToOne(object, at: slot, key: key)
            case .null: _setToOne(nil, at: slot, key: key)
            default: _rejectValue(ofType: type, key: key, expected: .objectIDAttributeType)
            }
        case .toMany:
            if case .toMany(let contents) = stored {
                _setToMany(contents.objects, at: slot, key: key)
            } else {
                _setToMany([], at: slot, key: key)
            }
        case .fetched:
            preconditionFailure("The fetched property '\(key)' is read-only; it cannot be set")
        }
    }

    /// The setter of a `@Managed` property of a type the storage does not know.
    public func _setManagedValue<T>(_ newValue: T, forKey key: String) {
        setValue(newValue as Any?, forKey: key)
    }

    /// The getter of a `@Managed` property whose type is an enumeration over an attribute's values
    /// (`@Managed var status: Status` with `enum Status: Int16`), as `@NSManaged` allows for `@objc` enums.
    @inlinable
    public func _managedValue<T: RawRepresentable>(forKey key: String) -> T where T.RawValue: _ManagedPropertyValue {
        let raw = T.RawValue._fromManagedStorage(_managedStorageValue(forKey: key, as: T.self), key: key)
        return T(rawValue: raw) ?? _noCase(of: T.self, forRawValue: raw, key: key)
    }

    /// The getter of an optional `@Managed` enumeration property: `nil` for no value.
    @inlinable
    public func _managedValue<T: RawRepresentable>(forKey key: String) -> T? where T.RawValue: _ManagedPropertyValue {
        let raw = T.RawValue?._fromManagedStorage(_managedStorageValue(forKey: key, as: T?.self), key: key)
        return raw.flatMap(T.init(rawValue:))
    }

    /// What a non-optional enumeration property reads when its attribute holds a value that is none of its cases.
    public func _noCase<T: RawRepresentable>(of type: T.Type, forRawValue raw: T.RawValue, key: String) -> T {
        if _layout === ManagedKeyPath.probeLayout, let placeholder = ManagedKeyPath.placeholder(of: T.self) {
            return placeholder
        }
        preconditionFailure(
            """
            The managed property '\(key)' of entity '\(_entity._name ?? "")' holds \(raw), which is no case of \
            \(T.self); declare the property optional to read such values as nil
            """)
    }

    /// The setter of a `@Managed` enumeration property: the attribute holds the raw value.
    @inlinable
    public func _setManagedValue<T: RawRepresentable>(_ newValue: T, forKey key: String)
    where T.RawValue: _ManagedPropertyValue {
        _setManagedStorageValue(newValue.rawValue._managedStorage, of: T.self, forKey: key)
    }

    /// The setter of an optional `@Managed` enumeration property.
    @inlinable
    public func _setManagedValue<T: RawRepresentable>(_ newValue: T?, forKey key: String)
    where T.RawValue: _ManagedPropertyValue {
        _setManagedStorageValue(newValue.map(\.rawValue)._managedStorage, of: T?.self, forKey: key)
    }

    /// Converts a typed value to the storage of an attribute of `type` (an `Int` into a Double attribute, say).
    func _normalize(_ value: StoredValue, to type: NSAttributeType) -> StoredValue? {
        switch (value, type) {
        case (.null, _): return .null
        case (.int, .integer16AttributeType), (.int, .integer32AttributeType), (.int, .integer64AttributeType),
            (.bool, .booleanAttributeType), (.double, .doubleAttributeType), (.float, .floatAttributeType),
            (.string, .stringAttributeType), (.date, .dateAttributeType), (.data, .binaryDataAttributeType),
            (.uuid, .UUIDAttributeType), (.url, .URIAttributeType), (.boxed, _):
            if case .boxed(let box) = value { return StoredValue.attributeValue(box.value, type: type) }
            return value
        default:
            return StoredValue.attributeValue(value.publicValue, type: type)
        }
    }

    /// The body of a `@ManagedAccessor` method.
    public func _performToManyAccessor(
        _ operation: _ToManyAccessorOperation, relationship name: String, value: Any?, index: Any?
    ) {
        let slot = _toManySlot(capitalizedName: name)
        let key = _layout.slots[slot].name
        func objects(_ value: Any?) -> [NSManagedObject] { _destinationObjects(value, key: key) }
        func indexes(_ value: Any?) -> [Int] {
            switch value {
            case let set as IndexSet: return Array(set)
            case let set as NSIndexSet: return Array(set as IndexSet)
            default: return []
            }
        }
        switch operation {
        case .addObject, .addObjects:
            for object in objects(operation == .addObject ? [value as Any] : value) {
                _addToMany(object, at: slot, key: key)
            }
        case .removeObject, .removeObjects:
            for object in objects(operation == .removeObject ? [value as Any] : value) {
                _removeFromMany(object, at: slot, key: key)
            }
        case .insertObjectAtIndex:
            if let object = objects([value as Any]).first, let position = index as? Int {
                _insertIntoOrdered(object, at: position, slot: slot, key: key)
            }
        case .insertObjectsAtIndexes:
            for (object, position) in zip(objects(value), indexes(index)) {
                _insertIntoOrdered(object, at: position, slot: slot, key: key)
            }
        case .removeObjectAtIndex:
            if let position = index as? Int {
                let contents = _toManyContents(slot)
                precondition(
                    contents.objects.indices.contains(position),
                    "Index \(position) is out of bounds of relationship '\(key)' (\(contents.count) objects)")
                _removeFromMany(contents.objects[position], at: slot, key: key)
            }
        case .removeObjectsAtIndexes:
            let contents = _toManyContents(slot)
            let doomed = indexes(index).filter { contents.objects.indices.contains($0) }.map { contents.objects[$0] }
            for object in doomed {
                _removeFromMany(object, at: slot, key: key)
            }
        case .replaceObjectAtIndex:
            if let object = objects([value as Any]).first, let position = index as? Int {
                _replaceInOrdered(at: position, with: object, slot: slot, key: key)
            }
        case .replaceObjectsAtIndexes:
            for (object, position) in zip(objects(value), indexes(index)) {
                _replaceInOrdered(at: position, with: object, slot: slot, key: key)
            }
        }
    }

    func _insertIntoOrdered(_ object: NSManagedObject, at position: Int, slot: Int, key: String) {
        let contents = _toManyContents(slot)
        if contents.contains(object) {
            _moveInOrdered(object, to: position, at: slot, key: key)
        } else {
            _addToMany(object, at: slot, key: key, index: position)
        }
    }

    func _replaceInOrdered(at position: Int, with object: NSManagedObject, slot: Int, key: String) {
        let contents = _toManyContents(slot)
        precondition(
            contents.objects.indices.contains(position),
            "Index \(position) is out of bounds of relationship '\(key)' (\(contents.count) objects)")
        let old = contents.objects[position]
        guard old !== object else { return }
        _removeFromMany(old, at: slot, key: key)
        _insertIntoOrdered(object, at: position, slot: slot, key: key)
    }

    /// The slot of the to-many relationship named in a generated accessor (`Employees` in `addToEmployees`).
    func _toManySlot(capitalizedName name: String) -> Int {
        let lowered = name.prefix(1).lowercased() + name.dropFirst()
        for candidate in [lowered, name] {
            if let slot = _slotIfAny(named: candidate), case .toMany = _layout.kinds[slot] { return slot }
        }
        for (index, slot) in _layout.slots.enumerated() {
            if case .toMany = slot.kind, slot.name.prefix(1).uppercased() + slot.name.dropFirst() == name {
                return index
            }
        }
        preconditionFailure(
            "Entity '\(_entity._name ?? "")' has no to-many relationship named '\(lowered)' for the accessor")
    }
}
