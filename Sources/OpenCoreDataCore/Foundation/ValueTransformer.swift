import Synchronization

/// The name of a registered value transformer.
public struct NSValueTransformerName: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public static let negateBooleanTransformerName = NSValueTransformerName("NSNegateBoolean")
    public static let isNilTransformerName = NSValueTransformerName("NSIsNil")
    public static let isNotNilTransformerName = NSValueTransformerName("NSIsNotNil")
    public static let unarchiveFromDataTransformerName = NSValueTransformerName("NSUnarchiveFromData")
    public static let keyedUnarchiveFromDataTransformerName = NSValueTransformerName("NSKeyedUnarchiveFromData")
    public static let secureUnarchiveFromDataTransformerName = NSValueTransformerName("NSSecureUnarchiveFromData")
}

/// Converts values to other values, and optionally back — Foundation's `ValueTransformer`, which
/// swift-corelibs-foundation lacks. Transformable attributes are stored through one: by default
/// `NSSecureUnarchiveFromDataTransformer`, or the one their `valueTransformerName` names.
///
/// ```swift
/// ValueTransformer.setValueTransformer(ColorTransformer(), forName: NSValueTransformerName("ColorTransformer"))
/// ```
open class ValueTransformer: NSObject, @unchecked Sendable {
    // @unchecked: the registry is a `LockedState`; `registered` is set in the initializer only. Subclasses keep state of
    // their own at their own risk, as with Foundation's class.
    private static let registry = LockedState<[String: ValueTransformer]>([:])
    /// For a transformer obtained with `init?(forName:)`: the registered transformer it speaks for.
    private var registered: ValueTransformer?

    public override init() {
        super.init()
    }

    /// The transformer registered under `name` (the built-in ones are always registered). Returns `nil` for an
    /// unknown name.
    public convenience init?(forName name: NSValueTransformerName) {
        guard let transformer = ValueTransformer._transformer(named: name.rawValue) else { return nil }
        self.init()
        registered = transformer
    }

    /// Registers `transformer` under `name`; `nil` removes the registration.
    open class func setValueTransformer(_ transformer: ValueTransformer?, forName name: NSValueTransformerName) {
        registry.withLock { $0[name.rawValue] = transformer }
    }

    /// The names of the registered transformers.
    open class func valueTransformerNames() -> [NSValueTransformerName] {
        let custom = registry.withLock { Array($0.keys) }
        let builtIn: [NSValueTransformerName] = [
            .negateBooleanTransformerName, .isNilTransformerName, .isNotNilTransformerName,
            .unarchiveFromDataTransformerName, .keyedUnarchiveFromDataTransformerName,
            .secureUnarchiveFromDataTransformerName,
        ]
        return builtIn + custom.map(NSValueTransformerName.init(rawValue:)).filter { !builtIn.contains($0) }
    }

    static func _transformer(named name: String) -> ValueTransformer? {
        if let custom = registry.withLock({ $0[name] }) { return custom }
        switch name {
        case NSValueTransformerName.negateBooleanTransformerName.rawValue: return NegateBooleanTransformer()
        case NSValueTransformerName.isNilTransformerName.rawValue: return IsNilTransformer(negated: false)
        case NSValueTransformerName.isNotNilTransformerName.rawValue: return IsNilTransformer(negated: true)
        case NSValueTransformerName.unarchiveFromDataTransformerName.rawValue,
            NSValueTransformerName.keyedUnarchiveFromDataTransformerName.rawValue,
            NSValueTransformerName.secureUnarchiveFromDataTransformerName.rawValue:
            return NSSecureUnarchiveFromDataTransformer()
        default: return nil
        }
    }

    /// The class of the values `transformedValue(_:)` returns.
    open class func transformedValueClass() -> AnyClass { NSObject.self }

    /// Whether `reverseTransformedValue(_:)` is supported.
    open class func allowsReverseTransformation() -> Bool { true }

    /// The transformed value. Subclasses override.
    open func transformedValue(_ value: Any?) -> Any? {
        if let registered { return registered.transformedValue(value) }
        return value
    }

    /// The value `transformedValue(_:)` was made from. Subclasses that allow reverse transformation override.
    open func reverseTransformedValue(_ value: Any?) -> Any? {
        if let registered { return registered.reverseTransformedValue(value) }
        precondition(
            type(of: self).allowsReverseTransformation(),
            "\(type(of: self)) does not allow reverse transformation")
        return value
    }
}

private final class NegateBooleanTransformer: ValueTransformer, @unchecked Sendable {
    // @unchecked: no state.
    override class func transformedValueClass() -> AnyClass { NSNumber.self }
    override func transformedValue(_ value: Any?) -> Any? {
        NSNumber(value: !((value as? NSNumber)?.boolValue ?? (value as? Bool) ?? false))
    }
    override func reverseTransformedValue(_ value: Any?) -> Any? { transformedValue(value) }
}

private final class IsNilTransformer: ValueTransformer, @unchecked Sendable {
    // @unchecked: `negated` is a constant.
    let negated: Bool
    init(negated: Bool) {
        self.negated = negated
        super.init()
    }
    override class func transformedValueClass() -> AnyClass { NSNumber.self }
    override class func allowsReverseTransformation() -> Bool { false }
    override func transformedValue(_ value: Any?) -> Any? {
        let isNil = value == nil || value is NSNull
        return NSNumber(value: negated ? !isNil : isNil)
    }
}

/// The default transformer of transformable attributes: values are archived with `NSKeyedArchiver` and
/// unarchived only if their classes are allowed (`allowedTopLevelClasses`). Subclass it and override
/// `allowedTopLevelClasses` to allow your own `NSSecureCoding` classes.
open class NSSecureUnarchiveFromDataTransformer: ValueTransformer, @unchecked Sendable {
    // @unchecked: no state beyond ValueTransformer's.
    /// The classes that may be unarchived: Foundation's property-list classes by default.
    open class var allowedTopLevelClasses: [AnyClass] {
        [
            NSArray.self, NSDictionary.self, NSSet.self, NSOrderedSet.self, NSString.self, NSNumber.self, NSDate.self,
            NSData.self, NSURL.self, NSUUID.self, NSNull.self, NSValue.self,
        ]
    }

    open override class func transformedValueClass() -> AnyClass { NSData.self }

    open override class func allowsReverseTransformation() -> Bool { true }

    /// Unarchives archived data; `nil` for data that is not a valid archive of allowed classes.
    open override func transformedValue(_ value: Any?) -> Any? {
        guard let data = (value as? Data) ?? (value as? NSData).map({ Data(referencing: $0) }) else { return nil }
        let classes = type(of: self).allowedTopLevelClasses
        return try? NSKeyedUnarchiver.unarchivedObject(ofClasses: classes, from: data)
    }

    /// Archives a value; `nil` if it cannot be archived.
    open override func reverseTransformedValue(_ value: Any?) -> Any? {
        guard let value else { return nil }
        return try? NSKeyedArchiver.archivedData(withRootObject: value, requiringSecureCoding: true)
    }
}
