/// One property value as a managed object and the stores hold it: compact (24 bytes), with no boxing for the
/// common attribute types, so that reading a fetched row and reading a property cost no dynamic casts.
package enum StoredValue {
    case null
    /// Integer 16, 32 and 64 attributes.
    case int(Int64)
    case bool(Bool)
    case double(Double)
    case float(Float)
    case string(String)
    case date(Date)
    case data(Data)
    case uuid(UUID)
    case url(URL)
    /// A to-one destination known only by its ID (a snapshot's foreign key, or a fault not yet resolved).
    case objectID(NSManagedObjectID)
    /// A to-one destination object.
    case object(NSManagedObject)
    /// A to-many relationship's loaded contents.
    case toMany(RelationshipContents)
    /// A to-many relationship not loaded yet: a relationship fault.
    case toManyFault
    /// Anything else: decimals, transformable values, composite dictionaries, object-ID attributes.
    case boxed(AnyBox)

    /// Whether a read resolves this value before returning it (see `NSManagedObject._resolvedValue(at:)`): a
    /// to-one destination known by its ID, a to-many fault, or no value (which may be a fetched property's).
    var isUnresolved: Bool {
        switch self {
        case .objectID, .toManyFault, .null: return true
        default: return false
        }
    }

    var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// Whether this is how an attribute of `type` holds its values (no value included), so that it needs no
    /// conversion. Looks at the case only, copying no payload.
    @inline(__always)
    func isRepresentation(of type: NSAttributeType) -> Bool {
        switch self {
        case .null: return true
        case .int:
            return type == .integer64AttributeType || type == .integer32AttributeType || type == .integer16AttributeType
        case .bool: return type == .booleanAttributeType
        case .double: return type == .doubleAttributeType
        case .float: return type == .floatAttributeType
        case .string: return type == .stringAttributeType
        case .date: return type == .dateAttributeType
        case .data: return type == .binaryDataAttributeType
        case .uuid: return type == .UUIDAttributeType
        case .url: return type == .URIAttributeType
        default: return false
        }
    }
}

/// Holds a value of any type inside a `StoredValue`, keeping the enum small.
package final class AnyBox: @unchecked Sendable {
    // @unchecked: `value` is a constant; a boxed value (a transformable's object) is used on its context's queue, as any
    // attribute value, or copied into a store row.
    let value: Any
    init(_ value: Any) { self.value = value }
}

/// The contents of a loaded to-many relationship: its objects in order (insertion order for unordered
/// relationships, the relationship's order for ordered ones) with a set for membership.
///
/// The set is made at the first question about membership, not with the contents: most relationships loaded from a
/// store are only read (iterated, counted, turned into a `Set` by their accessor), and a set per fault was a hash, an
/// allocation and a free for each relationship walked.
package final class RelationshipContents {
    private(set) var objects: [NSManagedObject]
    /// The objects' identities; `nil` until a membership question needs it.
    private var members: Set<ObjectKey>?

    /// Contents of `objects`, without repeats (the first of each is kept). The array is kept as given when it has
    /// none, as every store's answer has: taking its elements one by one into a new array retained each again.
    init(_ objects: [NSManagedObject] = []) {
        guard objects.count > 1 else {
            self.objects = objects
            return
        }
        var members = Set<ObjectKey>(minimumCapacity: objects.count)
        var repeated = false
        for object in objects where !members.insert(ObjectKey(ObjectIdentifier(object))).inserted {
            repeated = true
        }
        if repeated {
            var seen = Set<ObjectKey>(minimumCapacity: members.count)
            self.objects = objects.filter { seen.insert(ObjectKey(ObjectIdentifier($0))).inserted }
        } else {
            self.objects = objects
        }
        self.members = members
    }

    /// Contents of `objects`, which the caller knows to hold no object twice (objects just made for a store's rows,
    /// one per key): nothing is hashed until membership is asked.
    init(distinct objects: [NSManagedObject]) {
        self.objects = objects
    }

    var count: Int { objects.count }

    /// The membership set, made from the objects on first use.
    private func withMembers<Result>(_ body: (inout Set<ObjectKey>) -> Result) -> Result {
        if members == nil {
            var made = Set<ObjectKey>(minimumCapacity: objects.count)
            for object in objects { made.insert(ObjectKey(ObjectIdentifier(object))) }
            members = made
        }
        return body(&members!)
    }

    func contains(_ object: NSManagedObject) -> Bool {
        withMembers { $0.contains(ObjectKey(ObjectIdentifier(object))) }
    }

    /// Adds `object` at the end (or at `index`); false if it was already there.
    @discardableResult
    func insert(_ object: NSManagedObject, at index: Int? = nil) -> Bool {
        guard withMembers({ $0.insert(ObjectKey(ObjectIdentifier(object))).inserted }) else { return false }
        if let index, index <= objects.count {
            objects.insert(object, at: index)
        } else {
            objects.append(object)
        }
        return true
    }

    /// Removes `object`; false if it was not there.
    @discardableResult
    func remove(_ object: NSManagedObject) -> Bool {
        guard withMembers({ $0.remove(ObjectKey(ObjectIdentifier(object))) != nil }) else { return false }
        if let index = objects.firstIndex(where: { $0 === object }) {
            objects.remove(at: index)
        }
        return true
    }

    func copy() -> RelationshipContents { RelationshipContents(distinct: objects) }
}

extension StoredValue {
    /// Converts a value given through key-value coding to the representation of `type`; `nil` if the value cannot
    /// be one (a string for a number, say). Numbers convert between numeric types as `NSNumber` does.
    package static func attributeValue(_ value: Any?, type: NSAttributeType) -> StoredValue? {
        guard let value = unwrap(value) else { return .null }
        if value is NSNull { return .null }
        switch type {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType:
            guard let number = integer(value) else { return nil }
            return .int(number)
        case .booleanAttributeType:
            if let bool = value as? Bool { return .bool(bool) }
            guard let number = integer(value) else { return nil }
            return .bool(number != 0)
        case .doubleAttributeType:
            guard let number = double(value) else { return nil }
            return .double(number)
        case .floatAttributeType:
            guard let number = double(value) else { return nil }
            return .float(Float(number))
        case .decimalAttributeType:
            if let decimal = value as? Decimal { return .boxed(AnyBox(decimal)) }
            if let number = value as? NSDecimalNumber { return .boxed(AnyBox(number.decimalValue)) }
            if let number = value as? NSNumber { return .boxed(AnyBox(number.decimalValue)) }
            if let number = double(value) { return .boxed(AnyBox(PredicateNumber.decimal(number))) }
            return nil
        case .stringAttributeType:
            if let string = value as? String { return .string(string) }
            if let string = value as? NSString { return .string(string as String) }
            return nil
        case .dateAttributeType:
            if let date = value as? Date { return .date(date) }
            if let date = value as? NSDate {
                return .date(Date(timeIntervalSinceReferenceDate: date.timeIntervalSinceReferenceDate))
            }
            return nil
        case .binaryDataAttributeType:
            if let data = value as? Data { return .data(data) }
            if let data = value as? NSData { return .data(Data(referencing: data)) }
            return nil
        case .UUIDAttributeType:
            if let uuid = value as? UUID { return .uuid(uuid) }
            if let uuid = value as? NSUUID { return .uuid(uuid as UUID) }
            return nil
        case .URIAttributeType:
            if let url = value as? URL { return .url(url) }
            if let url = value as? NSURL, let converted = url as URL? { return .url(converted) }
            return nil
        case .objectIDAttributeType:
            guard let objectID = value as? NSManagedObjectID else { return nil }
            return .boxed(AnyBox(objectID))
        case .compositeAttributeType:
            if let dictionary = value as? [String: Any] { return .boxed(AnyBox(dictionary)) }
            if let dictionary = value as? NSDictionary { return .boxed(AnyBox(dictionary)) }
            return nil
        case .transformableAttributeType, .undefinedAttributeType:
            return .boxed(AnyBox(value))
        }
    }

    /// The value as key-value coding returns it, as Apple's Core Data does: `NSNumber` for numbers and
    /// booleans, `NSDecimalNumber` for decimals, Swift values for the rest.
    package var publicValue: Any? {
        switch self {
        case .null, .toManyFault: return nil
        case .int(let value): return StoredValue.number(value)
        case .bool(let value): return value ? StoredValue.yes : StoredValue.no
        case .double(let value): return NSNumber(value: value)
        case .float(let value): return NSNumber(value: value)
        case .string(let value): return value
        case .date(let value): return value
        case .data(let value): return value
        case .uuid(let value): return value
        case .url(let value): return value
        case .objectID(let value): return value
        case .object(let value): return value
        case .toMany(let contents): return contents.objects
        case .boxed(let box):
            if let decimal = box.value as? Decimal { return NSDecimalNumber(decimal: decimal) }
            return box.value
        }
    }

    /// The `NSNumber` of an integer. Small ones — flags, counts, enumerations — come from a table made once: on
    /// Linux each `NSNumber` is a Core Foundation object whose making and freeing cost several hundred instructions,
    /// and key-value coding and validation make one for every integer they read. (Apple's Foundation shares small
    /// numbers as tagged pointers.)
    static func number(_ value: Int64) -> NSNumber {
        if value >= smallNumberRange.lowerBound, value <= smallNumberRange.upperBound {
            return smallNumbers[Int(value - smallNumberRange.lowerBound)]
        }
        return NSNumber(value: value)
    }

    private static let smallNumberRange: ClosedRange<Int64> = -16...1_023
    private static let smallNumbers: [NSNumber] = smallNumberRange.map { NSNumber(value: $0) }
    private static let yes = NSNumber(value: true)
    private static let no = NSNumber(value: false)

    /// Whether two values are the same, for change tracking: a value set back to what it was is no change.
    func isSame(as other: StoredValue) -> Bool {
        switch (self, other) {
        case (.null, .null), (.toManyFault, .toManyFault): return true
        case (.int(let a), .int(let b)): return a == b
        case (.bool(let a), .bool(let b)): return a == b
        case (.double(let a), .double(let b)): return a == b || (a.isNaN && b.isNaN)
        case (.float(let a), .float(let b)): return a == b || (a.isNaN && b.isNaN)
        case (.string(let a), .string(let b)): return a == b
        case (.date(let a), .date(let b)): return a == b
        case (.data(let a), .data(let b)): return a == b
        case (.uuid(let a), .uuid(let b)): return a == b
        case (.url(let a), .url(let b)): return a == b
        case (.objectID(let a), .objectID(let b)): return a == b
        case (.object(let a), .object(let b)): return a === b
        case (.object(let a), .objectID(let b)), (.objectID(let b), .object(let a)): return a.objectID == b
        case (.toMany(let a), .toMany(let b)): return a === b
        case (.boxed(let a), .boxed(let b)):
            if a === b { return true }
            if let x = a.value as? Decimal, let y = b.value as? Decimal { return x == y }
            if let x = a.value as? AnyHashable, let y = b.value as? AnyHashable { return x == y }
            if let x = a.value as? NSObject, let y = b.value as? NSObject { return x.isEqual(y) }
            return false
        default: return false
        }
    }

    private static func unwrap(_ value: Any?) -> Any? {
        guard let value else { return nil }
        // An `Optional` inside an `Any` (e.g. `Int?` passed to `setValue(_:forKey:)`) is looked through. Objects
        // (`NSNumber`, as expressions and key-value coding hand numbers over) and the common value types are not
        // optionals, which a metatype comparison shows; a conformance check answers for the rest. Reflecting every
        // value with `Mirror` cost a tenth of a mapping-model migration's time.
        let type = type(of: value)
        if type is AnyObject.Type || type == String.self || type == Int.self || type == Int64.self
            || type == Double.self || type == Bool.self || type == Date.self || type == Data.self
        {
            return value
        }
        if let optional = value as? any OptionalUnwrapping { return optional.unwrappedValue }
        return value
    }

    static func integer(_ value: Any) -> Int64? {
        switch value {
        case let number as Int: return Int64(number)
        case let number as Int64: return number
        case let number as Int32: return Int64(number)
        case let number as Int16: return Int64(number)
        case let number as Int8: return Int64(number)
        case let number as UInt: return Int64(exactly: number)
        case let number as UInt64: return Int64(exactly: number)
        case let number as UInt32: return Int64(number)
        case let number as UInt16: return Int64(number)
        case let number as UInt8: return Int64(number)
        case let bool as Bool: return bool ? 1 : 0
        case let number as Double: return number.isFinite ? Int64(exactly: number.rounded(.towardZero)) : nil
        case let number as Float: return number.isFinite ? Int64(exactly: number.rounded(.towardZero)) : nil
        case let decimal as Decimal: return NSDecimalNumber(decimal: decimal).int64Value
        case let number as NSNumber: return number.int64Value
        default: return nil
        }
    }

    static func double(_ value: Any) -> Double? {
        switch value {
        case let number as Double: return number
        case let number as Float: return Double(number)
        case let number as Int: return Double(number)
        case let number as Int64: return Double(number)
        case let number as Int32: return Double(number)
        case let number as Int16: return Double(number)
        case let number as Int8: return Double(number)
        case let number as UInt: return Double(number)
        case let number as UInt64: return Double(number)
        case let number as UInt32: return Double(number)
        case let number as UInt16: return Double(number)
        case let number as UInt8: return Double(number)
        case let bool as Bool: return bool ? 1 : 0
        case let decimal as Decimal: return NSDecimalNumber(decimal: decimal).doubleValue
        case let number as NSNumber: return number.doubleValue
        default: return nil
        }
    }
}
