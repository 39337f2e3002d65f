// Filtering collections with a predicate, as Foundation's `filtered(using:)` does on Apple platforms. One scope is
// shared by every element, so filtering allocates once rather than once per element.

extension NSPredicate {
    /// The elements of `elements` that satisfy the predicate.
    func filter<S: Sequence>(_ elements: S) -> [S.Element] {
        let scope = PredicateScope(variables: [:], context: nil)
        return elements.filter { evaluateChild($0, in: scope) }
    }
}

extension NSArray {
    /// The elements that satisfy `predicate`, in order.
    public func filtered(using predicate: NSPredicate) -> [Any] {
        predicate.filter(self)
    }
}

extension NSMutableArray {
    /// Removes the elements that do not satisfy `predicate`.
    public func filter(using predicate: NSPredicate) {
        let kept = predicate.filter(self)
        removeAllObjects()
        addObjects(from: kept)
    }
}

extension NSSet {
    /// The elements that satisfy `predicate`.
    public func filtered(using predicate: NSPredicate) -> Set<AnyHashable> {
        Set(predicate.filter(self).map(KeyValueCodingHashing.hashable))
    }
}

extension NSMutableSet {
    /// Removes the elements that do not satisfy `predicate`.
    public func filter(using predicate: NSPredicate) {
        let kept = predicate.filter(self)
        removeAllObjects()
        addObjects(from: kept)
    }
}

extension NSOrderedSet {
    /// The elements that satisfy `predicate`, in order.
    public func filtered(using predicate: NSPredicate) -> NSOrderedSet {
        NSOrderedSet(array: predicate.filter(self))
    }
}

extension NSMutableOrderedSet {
    /// Removes the elements that do not satisfy `predicate`.
    public func filter(using predicate: NSPredicate) {
        let kept = predicate.filter(self)
        removeAllObjects()
        addObjects(from: kept)
    }
}

extension Array {
    /// The elements that satisfy `predicate`, in order (what `(array as NSArray).filtered(using:)` gives on Apple
    /// platforms, keeping the element type).
    public func filtered(using predicate: NSPredicate) -> [Element] {
        predicate.filter(self)
    }
}

extension Set {
    /// The elements that satisfy `predicate`.
    public func filtered(using predicate: NSPredicate) -> Set<Element> {
        Set(predicate.filter(self))
    }
}
