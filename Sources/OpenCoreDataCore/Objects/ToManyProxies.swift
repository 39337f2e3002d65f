/// A weak reference to a to-many proxy.
struct WeakProxy {
    weak var proxy: (any ToManyProxy)?
}

/// A mutable collection that stands for a to-many relationship of a managed object.
protocol ToManyProxy: AnyObject {
    /// Copies the relationship's current contents into the collection's own storage, which Foundation's
    /// non-overridable readers (`array`, `allObjects`, bridging) read.
    func resynchronize()
}

extension NSManagedObject {
    func _mutableSetProxy(forKey key: String) -> NSMutableSet {
        let slot = _slot(forKey: key, "mutableSetValueForKey:")
        guard case .toMany = _layout.kinds[slot] else {
            preconditionFailure(
                "mutableSetValue(forKey:): '\(key)' of entity '\(_entity._name ?? "")' is not a to-many relationship")
        }
        let proxy = ToManyMutableSet(owner: self, slot: slot)
        _proxies = _proxies ?? [:]
        _proxies![slot, default: []].removeAll { $0.proxy == nil }
        _proxies![slot, default: []].append(WeakProxy(proxy: proxy))
        return proxy
    }

    func _mutableOrderedSetProxy(forKey key: String) -> NSMutableOrderedSet {
        let slot = _slot(forKey: key, "mutableOrderedSetValueForKey:")
        guard case .toMany(ordered: true) = _layout.kinds[slot] else {
            preconditionFailure(
                """
                mutableOrderedSetValue(forKey:): '\(key)' of entity '\(_entity._name ?? "")' is not an ordered \
                to-many relationship
                """)
        }
        let proxy = ToManyMutableOrderedSet(owner: self, slot: slot)
        _proxies = _proxies ?? [:]
        _proxies![slot, default: []].removeAll { $0.proxy == nil }
        _proxies![slot, default: []].append(WeakProxy(proxy: proxy))
        return proxy
    }

    /// Tells the live proxies of `slot` that the relationship changed.
    func _proxiesDidChange(_ slot: Int) {
        guard let proxies = _proxies?[slot] else { return }
        for entry in proxies {
            entry.proxy?.resynchronize()
        }
    }

    /// An object being added to a relationship through a proxy, which must be a managed object.
    func _proxyDestination(_ object: Any, slot: Int) -> NSManagedObject {
        guard let destination = object as? NSManagedObject else {
            preconditionFailure(
                """
                Only managed objects can be added to the relationship '\(_layout.slots[slot].name)'; got a \
                \(type(of: object))
                """)
        }
        return destination
    }

    /// The objects of a to-many relationship, loading it if needed.
    func _toManyObjects(_ slot: Int) -> [NSManagedObject] { _toManyContents(slot).objects }
}

/// `mutableSetValue(forKey:)`: changes made through it change the relationship. Foundation's `NSSet` leaves its
/// primitives (`count`, `member(_:)`, `objectEnumerator()`) to subclasses, so this one answers them from the live
/// relationship and needs no copy.
final class ToManyMutableSet: NSMutableSet, ToManyProxy {
    private let owner: NSManagedObject
    private let slot: Int

    init(owner: NSManagedObject, slot: Int) {
        self.owner = owner
        self.slot = slot
        super.init(capacity: 0)
    }

    required init(capacity numItems: Int) {
        preconditionFailure("A relationship's mutable set is created only by mutableSetValue(forKey:)")
    }

    required init?(coder: NSCoder) {
        preconditionFailure("A relationship's mutable set cannot be decoded")
    }

    required convenience init(arrayLiteral elements: Any...) {
        preconditionFailure("A relationship's mutable set is created only by mutableSetValue(forKey:)")
    }

    func resynchronize() {}

    private var key: String { owner._layout.slots[slot].name }
    private var contents: RelationshipContents { owner._toManyContents(slot) }

    private func destination(_ object: Any) -> NSManagedObject {
        owner._proxyDestination(object, slot: slot)
    }

    override var count: Int { contents.count }

    override func member(_ object: Any) -> Any? {
        guard let object = object as? NSManagedObject, contents.contains(object) else { return nil }
        return object
    }

    override func objectEnumerator() -> NSEnumerator {
        NSArray(array: contents.objects).objectEnumerator()
    }

    override func add(_ object: Any) {
        owner._addToMany(destination(object), at: slot, key: key)
    }

    override func remove(_ object: Any) {
        guard let object = object as? NSManagedObject else { return }
        owner._removeFromMany(object, at: slot, key: key)
    }

    override func removeAllObjects() {
        owner._setToMany([], at: slot, key: key)
    }

    override func addObjects(from array: [Any]) {
        for object in array {
            add(object)
        }
    }
}

/// `mutableOrderedSetValue(forKey:)`: changes made through it change the ordered relationship.
final class ToManyMutableOrderedSet: NSMutableOrderedSet, ToManyProxy {
    private let owner: NSManagedObject
    private let slot: Int

    init(owner: NSManagedObject, slot: Int) {
        self.owner = owner
        self.slot = slot
        super.init(capacity: 0)
        resynchronize()
    }

    required init?(coder: NSCoder) {
        preconditionFailure("A relationship's mutable ordered set cannot be decoded")
    }

    required convenience init(arrayLiteral elements: Any...) {
        preconditionFailure("A relationship's mutable ordered set is created only by mutableOrderedSetValue(forKey:)")
    }

    private var isSynchronizing = false

    func resynchronize() {
        isSynchronizing = true
        defer { isSynchronizing = false }
        super.removeAllObjects()
        super.addObjects(from: owner._toManyObjects(slot))
    }

    private var key: String { owner._layout.slots[slot].name }
    private var current: [NSManagedObject] { owner._toManyObjects(slot) }

    private func destination(_ object: Any) -> NSManagedObject {
        owner._proxyDestination(object, slot: slot)
    }

    /// Makes the relationship hold exactly `objects`, in this order.
    private func apply(_ objects: [NSManagedObject]) {
        owner._setToMany(objects, at: slot, key: key)
    }

    private func without(_ object: NSManagedObject, in objects: [NSManagedObject]) -> [NSManagedObject] {
        objects.filter { $0 !== object }
    }

    override func insert(_ object: Any, at idx: Int) {
        if isSynchronizing { return super.insert(object, at: idx) }
        let object = destination(object)
        var objects = current
        precondition(idx >= 0 && idx <= objects.count, "Index \(idx) is out of bounds of relationship '\(key)'")
        if objects.contains(where: { $0 === object }) { return }
        objects.insert(object, at: idx)
        apply(objects)
    }

    override func removeObject(at idx: Int) {
        if isSynchronizing { return super.removeObject(at: idx) }
        var objects = current
        precondition(objects.indices.contains(idx), "Index \(idx) is out of bounds of relationship '\(key)'")
        objects.remove(at: idx)
        apply(objects)
    }

    override func replaceObject(at idx: Int, with obj: Any) {
        if isSynchronizing { return super.replaceObject(at: idx, with: obj) }
        let object = destination(obj)
        var objects = current
        precondition(objects.indices.contains(idx), "Index \(idx) is out of bounds of relationship '\(key)'")
        objects = objects.enumerated().filter { $0.offset == idx || $0.element !== object }.map(\.element)
        if let position = objects.firstIndex(where: { $0 === current[idx] }) {
            objects[position] = object
        }
        apply(objects)
    }

    override func add(_ object: Any) {
        if isSynchronizing { return super.add(object) }
        insert(object, at: current.count)
    }

    override func addObjects(from array: [Any]) {
        if isSynchronizing { return super.addObjects(from: array) }
        var objects = current
        for element in array {
            let object = destination(element)
            if !objects.contains(where: { $0 === object }) { objects.append(object) }
        }
        apply(objects)
    }

    override func remove(_ val: Any) {
        if isSynchronizing { return super.remove(val) }
        guard let object = val as? NSManagedObject else { return }
        apply(without(object, in: current))
    }

    override func removeObjects(in array: [Any]) {
        let doomed = Set(array.compactMap { ($0 as? NSManagedObject).map(ObjectIdentifier.init) })
        apply(current.filter { !doomed.contains(ObjectIdentifier($0)) })
    }

    override func removeObjects(at indexes: IndexSet) {
        apply(current.enumerated().filter { !indexes.contains($0.offset) }.map(\.element))
    }

    override func removeObjects(in range: NSRange) {
        guard let range = Range(range) else { return }
        apply(current.enumerated().filter { !range.contains($0.offset) }.map(\.element))
    }

    override func removeAllObjects() {
        if isSynchronizing { return super.removeAllObjects() }
        apply([])
    }

    override func exchangeObject(at idx1: Int, withObjectAt idx2: Int) {
        var objects = current
        objects.swapAt(idx1, idx2)
        apply(objects)
    }

    override func moveObjects(at indexes: IndexSet, to idx: Int) {
        let objects = current
        let moving = indexes.map { objects[$0] }
        var remaining = objects.enumerated().filter { !indexes.contains($0.offset) }.map(\.element)
        remaining.insert(contentsOf: moving, at: Swift.min(idx, remaining.count))
        apply(remaining)
    }

    override func insert(_ objects: [Any], at indexes: IndexSet) {
        var result = current
        for (object, index) in zip(objects.map(destination), indexes) where !result.contains(where: { $0 === object }) {
            result.insert(object, at: Swift.min(index, result.count))
        }
        apply(result)
    }

    override func replaceObjects(at indexes: IndexSet, with objects: [Any]) {
        for (object, index) in zip(objects, indexes) {
            replaceObject(at: index, with: object)
        }
    }

    override func setObject(_ obj: Any, at idx: Int) {
        if idx == current.count { insert(obj, at: idx) } else { replaceObject(at: idx, with: obj) }
    }

    override func intersect(_ other: NSOrderedSet) {
        apply(current.filter { other.contains($0) })
    }

    override func minus(_ other: NSOrderedSet) {
        apply(current.filter { !other.contains($0) })
    }

    override func union(_ other: NSOrderedSet) {
        addObjects(from: other.array)
    }

    override func intersectSet(_ other: Set<AnyHashable>) {
        apply(current.filter { other.contains($0) })
    }

    override func minusSet(_ other: Set<AnyHashable>) {
        apply(current.filter { !other.contains($0) })
    }

    override func unionSet(_ other: Set<AnyHashable>) {
        addObjects(from: Array(other))
    }

    override func sort(options opts: NSSortOptions = [], usingComparator cmptr: (Any, Any) -> ComparisonResult) {
        apply(current.sorted { cmptr($0, $1) == .orderedAscending })
    }

    override func sortRange(
        _ range: NSRange, options opts: NSSortOptions = [], usingComparator cmptr: (Any, Any) -> ComparisonResult
    ) {
        guard let range = Range(range) else { return }
        var objects = current
        objects[range].sort { cmptr($0, $1) == .orderedAscending }
        apply(objects)
    }
}
