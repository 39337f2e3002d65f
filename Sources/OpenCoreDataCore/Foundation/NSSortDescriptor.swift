// swift-corelibs-foundation offers only key-path-based sort descriptors; Core Data's API names keys as strings and
// comparison methods as selectors. This class has Apple's name and initializers and shadows Foundation's for
// clients. Values are read through key-value coding, so it sorts managed objects, dictionaries and plain Swift
// values alike.

/// A description of how to order objects: a key path, a direction and a comparison.
///
/// ```swift
/// let byName = NSSortDescriptor(key: "name", ascending: true,
///                               selector: Selector("localizedStandardCompare:"))
/// let sorted = people.sorted(using: [NSSortDescriptor(key: "age", ascending: false), byName])
/// ```
///
/// `nil` values order before every other value, as on Apple platforms and in SQL's ascending order.
open class NSSortDescriptor: NSObject, NSCopying, @unchecked Sendable {
    // @unchecked: every stored property is a constant (a key path is immutable).
    /// How two values are compared.
    enum Comparison {
        /// A selector: `compare:`, `caseInsensitiveCompare:`, `localizedCompare:`,
        /// `localizedCaseInsensitiveCompare:`, `localizedStandardCompare:`, or one a value answers through
        /// `PredicateFunctionTarget`.
        case selector(Selector)
        case comparator(Comparator)
    }

    /// The key path the values are read at, or `nil` to compare the objects themselves.
    public let key: String?
    /// Whether values sort in ascending order.
    public let ascending: Bool
    /// The comparison selector, or `nil` for comparator-based descriptors.
    open var selector: Selector? {
        if case .selector(let selector) = comparison { return selector }
        return nil
    }

    /// The comparator of a comparator-based descriptor. For a selector-based one, a comparator that applies the
    /// selector.
    open var comparator: Comparator {
        switch comparison {
        case .comparator(let comparator): return comparator
        case .selector(let selector): return { NSSortDescriptor.compare($0, $1, selector: selector) }
        }
    }

    let comparison: Comparison
    /// The key path split once, for sorting many objects.
    let components: [String]
    /// A Swift key path, for descriptors made with `init(keyPath:ascending:)`.
    let swiftKeyPath: AnyKeyPath?

    /// Creates a descriptor that orders by `key` with `compare:`.
    public convenience init(key: String?, ascending: Bool) {
        self.init(key: key, ascending: ascending, selector: nil)
    }

    /// Creates a descriptor that orders by `key` with the comparison method `selector` (`compare:` when `nil`).
    public init(key: String?, ascending: Bool, selector: Selector?) {
        self.key = key
        self.ascending = ascending
        comparison = .selector(selector ?? Selector("compare:"))
        components = key.map(KeyValueCodingPath.split) ?? []
        swiftKeyPath = nil
        super.init()
    }

    /// Creates a descriptor that orders by `key` with `cmptr`.
    public init(key: String?, ascending: Bool, comparator cmptr: @escaping Comparator) {
        self.key = key
        self.ascending = ascending
        comparison = .comparator(cmptr)
        components = key.map(KeyValueCodingPath.split) ?? []
        swiftKeyPath = nil
        super.init()
    }

    /// Creates a descriptor that orders by the value at a Swift key path with `compare:`.
    ///
    /// A key path of `@Managed` properties has the key its properties name, as on Apple platforms
    /// (`NSSortDescriptor(keyPath: \Book.author?.name, ascending: true).key == "author.name"`), and can sort a
    /// fetch; a key path over another type sorts values in memory.
    public convenience init<Root, Value>(keyPath: KeyPath<Root, Value>, ascending: Bool) {
        self.init(keyPath: keyPath, ascending: ascending, comparison: .selector(Selector("compare:")))
    }

    /// Creates a descriptor that orders by the value at a Swift key path with `cmptr`.
    public convenience init<Root, Value>(
        keyPath: KeyPath<Root, Value>, ascending: Bool, comparator cmptr: @escaping Comparator
    ) {
        self.init(keyPath: keyPath, ascending: ascending, comparison: .comparator(cmptr))
    }

    private init(keyPath: AnyKeyPath, ascending: Bool, comparison: Comparison) {
        if type(of: keyPath).rootType is NSManagedObject.Type {
            let key = ManagedKeyPath.requiredKeyString(of: keyPath, for: "NSSortDescriptor(keyPath:ascending:)")
            self.key = key
            components = KeyValueCodingPath.split(key)
            swiftKeyPath = nil
        } else {
            key = nil
            components = []
            swiftKeyPath = keyPath
        }
        self.ascending = ascending
        self.comparison = comparison
        super.init()
    }

    private init(copying other: NSSortDescriptor, ascending: Bool) {
        key = other.key
        self.ascending = ascending
        comparison = other.comparison
        components = other.components
        swiftKeyPath = other.swiftKeyPath
        super.init()
    }

    /// A descriptor with the same key and comparison and the opposite direction.
    open var reversedSortDescriptor: Any {
        NSSortDescriptor(copying: self, ascending: !ascending)
    }

    /// Orders two objects by their values at the descriptor's key, in the descriptor's direction.
    open func compare(_ object1: Any, to object2: Any) -> ComparisonResult {
        let order = compareValues(value(of: object1), value(of: object2))
        guard !ascending else { return order }
        switch order {
        case .orderedAscending: return .orderedDescending
        case .orderedDescending: return .orderedAscending
        case .orderedSame: return .orderedSame
        }
    }

    /// Enables use of a descriptor decoded from an archive; descriptors here carry no disabled state.
    open func allowEvaluation() {}

    /// Returns the receiver: sort descriptors are immutable.
    open func copy(with zone: NSZone? = nil) -> Any {
        self
    }

    /// Whether `object` has the same key, direction and selector. Comparator-based descriptors are equal only to
    /// themselves.
    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSSortDescriptor else { return false }
        if self === other { return true }
        guard key == other.key, ascending == other.ascending, swiftKeyPath == other.swiftKeyPath else { return false }
        switch (comparison, other.comparison) {
        case (.selector(let a), .selector(let b)): return a == b
        default: return false
        }
    }

    /// A hash consistent with `isEqual(_:)`.
    open override var hash: Int {
        var hasher = Hasher()
        hasher.combine(key)
        hasher.combine(ascending)
        hasher.combine(selector)
        return hasher.finalize()
    }

    /// Apple's format: `(key, ascending, compare:)`.
    open override var description: String {
        let keyText = key ?? swiftKeyPath.map { String(describing: $0) } ?? "(null)"
        let comparisonText = selector?.name ?? "<comparator>"
        return "(\(keyText), \(ascending ? "ascending" : "descending"), \(comparisonText))"
    }
}
