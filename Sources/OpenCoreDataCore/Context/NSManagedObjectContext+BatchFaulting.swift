import Foundation

// A fetch with a `fetchBatchSize` returns faults that load their values a batch at a time (the SQLite store loads
// the whole batch of the first one touched). Apple's result is an array that holds object IDs and lets batches go
// once they are no longer touched; here the result is a Swift array of objects, so the objects stay, and what must
// go is their values. The context follows the iteration over the last such result: when a fault of a batch that is
// not among the last few touched fires, the oldest resident batch turns back into faults — those of its objects that
// have no unsaved changes (a changed object keeps its values until it is saved or refreshed). Memory then holds the
// objects' shells and a few batches of values, whatever the number of rows; an object touched again later loads its
// values again, as any fault does.

/// The objects of a batched result, which of its batches hold their values, and where iteration stands.
///
/// The objects are held unretained (one word each, beside the user's array of them): the context gives the whole
/// record up when any of its objects goes away, is reset, or makes another batched fetch, before a reference could
/// dangle.
final class BatchResidency {
    /// How many batches keep their values: the one being iterated, the one before (iteration may look back a
    /// little) and one more.
    static let residentBatches = 3

    private let objects: [Unmanaged<NSManagedObject>]
    private let batchSize: Int
    /// The index the next touched object is expected at, when the result is iterated in order.
    private var cursor = 0
    /// The batches whose objects were touched, least recently touched first.
    private var resident: [Int] = []

    init(_ objects: [NSManagedObject], batchSize: Int) {
        self.objects = objects.map { Unmanaged.passUnretained($0) }
        self.batchSize = batchSize
    }

    /// Notes that the fault of `object` fires; turns the least recently touched batch back into faults when more
    /// than `residentBatches` have been touched.
    func touch(_ object: NSManagedObject, in context: NSManagedObjectContext) {
        guard let index = index(of: object) else { return }
        cursor = index + 1
        let batch = index / batchSize
        guard resident.last != batch else { return }
        resident.removeAll { $0 == batch }
        resident.append(batch)
        while resident.count > Self.residentBatches {
            release(resident.removeFirst(), in: context)
        }
    }

    /// The index of `object`: where iteration stands, else in the batches around it. An object touched far from
    /// there (random access) is not followed; its batch stays loaded until the context lets it go.
    private func index(of object: NSManagedObject) -> Int? {
        let wanted = Unmanaged.passUnretained(object).toOpaque()
        if cursor < objects.count, objects[cursor].toOpaque() == wanted { return cursor }
        let batch = cursor / batchSize
        let range = max(0, (batch - 1) * batchSize)..<min(objects.count, (batch + 2) * batchSize)
        return range.first { objects[$0].toOpaque() == wanted }
    }

    /// Turns the unchanged objects of `batch` back into faults, giving their values up.
    private func release(_ batch: Int, in context: NSManagedObjectContext) {
        let range = batch * batchSize..<min(objects.count, (batch + 1) * batchSize)
        for index in range {
            let object = objects[index].takeUnretainedValue()
            guard object._context === context, !object._values.isEmpty, !object.hasChanges,
                object._flags.isDisjoint(with: [.inserted, .deleted, .updated, .inaccessible])
            else { continue }
            object.willTurnIntoFault()
            object._flags.insert(.fault)
            context._giveUpValues(of: object)
            object.didTurnIntoFault()
        }
    }
}
