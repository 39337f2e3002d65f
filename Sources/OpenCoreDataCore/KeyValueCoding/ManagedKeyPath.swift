import Synchronization

/// The Core Data key string of a Swift key path over `@Managed` properties (`\Book.author?.name` → `"author.name"`).
///
/// On Apple platforms the compiler records the key-value coding string of a key path made of `@objc` properties
/// (`_kvcKeyPathString`), and `@NSManaged` properties are `@objc`. Without the Objective-C runtime there is no such
/// string, so it is found by applying the key path once to stand-in objects of the key path's classes ("probes"):
/// a `@Managed` property of a probe records its key and hands back a placeholder (for a relationship, a probe of
/// its destination class). The result is kept per key path.
///
/// A key path whose components are not all `@Managed` properties, each read from the object the previous one
/// returned, has no key string: a plain Swift property, a computed property that reads several managed properties,
/// or a trailing non-managed component such as `.count`.
enum ManagedKeyPath {
    /// The key string of `keyPath`, or `nil` if it has none (see the type's documentation).
    static func keyString(of keyPath: AnyKeyPath) -> String? {
        switch resolution(of: keyPath) {
        case .key(let key): return key
        case .none: return nil
        }
    }

    /// The key string of `keyPath`, stopping with a message naming the key path if it has none: for APIs that
    /// Apple's framework also stops in (`NSSortDescriptor(keyPath:ascending:)` on a key path with no key string).
    static func requiredKeyString(of keyPath: AnyKeyPath, for api: String) -> String {
        switch resolution(of: keyPath) {
        case .key(let key):
            return key
        case .none(let reason):
            preconditionFailure(
                """
                \(api): the key path \(keyPath) has no Core Data key string: \(reason). Key paths made of @Managed \
                properties have one; otherwise give the key as a string
                """)
        }
    }

    enum Resolution: Sendable {
        case key(String)
        case none(reason: String)
    }

    /// A key path as a dictionary key: key paths are immutable values, safe to share between threads.
    private struct CacheKey: Hashable, @unchecked Sendable {
        // @unchecked: `AnyKeyPath` is not marked Sendable, but key paths are immutable values.
        let keyPath: AnyKeyPath
    }

    private static let resolutions = LockedState<[CacheKey: Resolution]>([:])

    static func resolution(of keyPath: AnyKeyPath) -> Resolution {
        let key = CacheKey(keyPath: keyPath)
        if let known = resolutions.withLock({ $0[key] }) { return known }
        let resolved = probe(keyPath)
        resolutions.withLock { $0[key] = resolved }
        return resolved
    }

    // MARK: Probing

    /// The entity every probe has: no properties, so that every `@Managed` accessor takes its undefined-key path,
    /// where probes are recognised (normal objects pay nothing for them).
    static let probeEntity: NSEntityDescription = {
        let entity = NSEntityDescription()
        entity.name = "_OpenCoreDataKeyPathProbe"
        return entity
    }()
    static let probeLayout: EntityCache = probeEntity._caches

    /// The value a probe's property access hands back in place of a stored value.
    static var placeholderStorage: _ManagedStorageValue { _ManagedStorageValue(stored: .boxed(placeholderBox)) }
    private static let placeholderBox = AnyBox(Placeholder())

    final class Placeholder: Sendable {}

    /// What the probing on this thread has seen so far.
    final class Recording {
        var keys: [String] = []
        /// The object the next recorded access must be made on: the root probe, then the probe the previous
        /// access returned. An access on any other object means a component that is not a plain property read.
        var expectedObject: ObjectIdentifier
        /// The declared type of the last property read.
        var lastValueType: Any.Type?
        var failure: String?
        /// Keeps the probes alive while the key path is applied, so that object identities stay distinct.
        var probes: [NSManagedObject] = []

        init(root: NSManagedObject) {
            expectedObject = ObjectIdentifier(root)
            probes = [root]
        }
    }

    static let current = ThreadLocal<Recording>()

    private static func probe(_ keyPath: AnyKeyPath) -> Resolution {
        let keyPathType = type(of: keyPath)
        // The identity key path (`\Double.self`) names the object itself, as key-value coding's `self` does.
        func identity<Root>(_: Root.Type) -> AnyKeyPath { \Root.self }
        if keyPath == _openExistential(keyPathType.rootType, do: identity) { return .key("self") }
        guard let rootClass = keyPathType.rootType as? NSManagedObject.Type else {
            return .none(reason: "its root \(keyPathType.rootType) is not an NSManagedObject subclass")
        }
        let root = makeProbe(of: rootClass)
        let recording = Recording(root: root)
        _ = current.withValue(recording) { root[keyPath: keyPath] }
        if let failure = recording.failure { return .none(reason: failure) }
        guard !recording.keys.isEmpty else {
            return .none(reason: "it reads no @Managed property")
        }
        // A last component that is not the last recorded property (`\Author.books.count`) returns a value of
        // another type than that property.
        if let declared = recording.lastValueType.map(unwrappedOptional),
            declared != unwrappedOptional(keyPathType.valueType)
        {
            return .none(reason: "it continues past the @Managed property '\(recording.keys.last ?? "")'")
        }
        return .key(recording.keys.joined(separator: "."))
    }

    /// A stand-in object of `objectClass`, in no context.
    static func makeProbe(of objectClass: NSManagedObject.Type) -> NSManagedObject {
        objectClass.init(entity: probeEntity, insertInto: nil)
    }

    /// Notes that the property `key`, declared as `valueType`, was read from `object`.
    static func record(_ key: String, of object: NSManagedObject, valueType: Any.Type) {
        guard let recording = current.value else { return }
        if ObjectIdentifier(object) != recording.expectedObject {
            recording.failure =
                recording.failure
                ?? "'\(key)' is not read from the object the previous component returned (a computed property?)"
        }
        recording.keys.append(key)
        recording.lastValueType = valueType
        // Nothing may be read from this object again; a relationship's probe, handed out next, takes over.
        recording.expectedObject = ObjectIdentifier(Placeholder.self)
    }

    /// A probe of `objectClass` for the destination of the relationship just recorded.
    static func destinationProbe(of objectClass: NSManagedObject.Type) -> NSManagedObject {
        let probe = makeProbe(of: objectClass)
        if let recording = current.value {
            recording.probes.append(probe)
            recording.expectedObject = ObjectIdentifier(probe)
        }
        return probe
    }

    /// Stops the probing with `reason` (the key path has no key string).
    static func fail(_ reason: String) {
        current.value?.failure = current.value?.failure ?? reason
    }

    /// A value of `type` to hand back from a probe's property whose type the storage does not know, if one can be
    /// made without knowing the type.
    static func placeholder<T>(of type: T.Type) -> T? {
        // An array holds one stand-in element where one can be made, so that a key path that goes on into the
        // array (`\Item.tags[0].isEmpty`, which has no key string) reads it instead of trapping out of range.
        func empty<A: ExpressibleByArrayLiteral>(_: A.Type) -> A {
            placeholder(of: A.ArrayLiteralElement.self).map { A(arrayLiteral: $0) } ?? []
        }
        func emptyDictionary<D: ExpressibleByDictionaryLiteral>(_: D.Type) -> D { [:] }
        func emptyString<S: ExpressibleByStringLiteral>(_: S.Type) -> S { "" }
        func zero<I: ExpressibleByIntegerLiteral>(_: I.Type) -> I { 0 }
        func no<B: ExpressibleByBooleanLiteral>(_: B.Type) -> B { false }
        func firstCase<C: CaseIterable>(_: C.Type) -> C? { C.allCases.first }
        if let optional = type as? any ExpressibleByNilLiteral.Type { return optional.init(nilLiteral: ()) as? T }
        if let cases = type as? any CaseIterable.Type { return firstCase(cases) as? T }
        if let array = type as? any ExpressibleByArrayLiteral.Type { return empty(array) as? T }
        if let dictionary = type as? any ExpressibleByDictionaryLiteral.Type {
            return emptyDictionary(dictionary) as? T
        }
        if let string = type as? any ExpressibleByStringLiteral.Type { return emptyString(string) as? T }
        if let integer = type as? any ExpressibleByIntegerLiteral.Type { return zero(integer) as? T }
        if let boolean = type as? any ExpressibleByBooleanLiteral.Type { return no(boolean) as? T }
        return nil
    }

    private static func unwrappedOptional(_ type: Any.Type) -> Any.Type {
        (type as? any _OptionalType.Type)?.wrappedType.map(unwrappedOptional) ?? type
    }
}

private protocol _OptionalType {
    static var wrappedType: Any.Type? { get }
}

extension Optional: _OptionalType {
    static var wrappedType: Any.Type? { Wrapped.self }
}

extension _ManagedStorageValue {
    /// Whether this is what a probe's property access hands back (see `ManagedKeyPath`).
    var _isKeyPathPlaceholder: Bool {
        if case .boxed(let box) = stored, box.value is ManagedKeyPath.Placeholder { return true }
        return false
    }
}

extension AnyKeyPath {
    /// The key-value coding string of the key path: on Apple platforms the compiler's, for key paths of `@objc`
    /// properties; here, for key paths of `@Managed` properties of managed objects (`\Book.author?.name` →
    /// `"author.name"`), and `nil` for others. Code that reads this to build predicates or sort descriptors from
    /// key paths works unchanged.
    public var _kvcKeyPathString: String? {
        ManagedKeyPath.keyString(of: self)
    }
}
