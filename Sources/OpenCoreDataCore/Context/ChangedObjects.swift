/// A context's inserted, updated or deleted objects: a list in the order the objects were listed, each object
/// holding its place in it (`NSManagedObject._changeIndex`).
///
/// Listing an object is an append and a save walks the list forward, where a hash table keyed by object identity
/// wrote and read its buckets at random, grew by rehashing, and gave its objects back in hash order. An object is
/// in at most one of a context's three lists at a time (inserted, updated and deleted exclude each other), so one
/// place per object serves all three; the list checks that the object at that place is the one asked about, so a
/// place left over from another list is never taken for membership. Removing an object puts a placeholder in its
/// place and releases it at once; the placeholders are squeezed out when they outnumber the objects.
struct ChangedObjects: Sequence {
    /// The objects, and `hole` where one was removed.
    private var slots: [NSManagedObject] = []
    /// How many objects are listed (the slots that are not holes).
    private(set) var count = 0
    /// How many times an object was listed or removed: equal counts mean the same objects.
    private(set) var mutations = 0

    /// What a removed object's slot holds: an object of no entity that no context ever lists. Shared by every
    /// thread, and safely: nothing ever writes to it (it is never listed, so not even its `_changeIndex`).
    nonisolated(unsafe) private static let hole = NSManagedObject(entity: NSManagedObject._noEntity, insertInto: nil)

    var isEmpty: Bool { count == 0 }

    /// The objects, in the order they were listed.
    var objects: [NSManagedObject] {
        count == slots.count ? slots : slots.filter { $0 !== Self.hole }
    }

    func makeIterator() -> IndexingIterator<[NSManagedObject]> {
        objects.makeIterator()
    }

    var underestimatedCount: Int { count }

    @inline(__always)
    func contains(_ object: NSManagedObject) -> Bool {
        let index = Int(object._changeIndex)
        return index < slots.count && slots[index] === object
    }

    /// Lists `object` (once).
    @inline(__always)
    mutating func insert(_ object: NSManagedObject) {
        guard !contains(object) else { return }
        object._changeIndex = UInt32(truncatingIfNeeded: slots.count)
        slots.append(object)
        count += 1
        mutations += 1
    }

    /// Removes `object` if it is listed.
    mutating func remove(_ object: NSManagedObject) {
        guard contains(object) else { return }
        slots[Int(object._changeIndex)] = Self.hole
        count -= 1
        mutations += 1
        if count == 0 {
            slots = []
        } else if slots.count >= 64, count < slots.count / 2 {
            slots.removeAll { $0 === Self.hole }
            for (index, object) in slots.enumerated() {
                object._changeIndex = UInt32(truncatingIfNeeded: index)
            }
        }
    }

    mutating func removeAll() {
        slots = []
        count = 0
        mutations += 1
    }

    /// The objects in the order they were made (see `NSManagedObjectID._creationOrder`): usually the order they
    /// were listed in, which one pass confirms.
    func inCreationOrder() -> [NSManagedObject] {
        let objects = self.objects
        var previous = UInt64.min
        var ordered = true
        objects._forEachUnretained { object in
            let order = object._objectID._creationOrder
            if order < previous { ordered = false }
            previous = order
        }
        return ordered ? objects : objects._inCreationOrder()
    }
}
