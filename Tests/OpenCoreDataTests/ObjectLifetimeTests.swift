import Foundation
import OpenCoreData
import Testing

/// Objects and contexts go away on whichever thread drops the last reference to them — often not the context's
/// queue, and sometimes both at the same moment on two threads.
@Suite struct ObjectLifetimeTests {
    static func model() -> NSManagedObjectModel {
        let number = NSAttributeDescription()
        number.name = "number"
        number.attributeType = .integer64AttributeType
        let item = NSEntityDescription()
        item.name = "Item"
        item.properties = [number]
        let model = NSManagedObjectModel()
        model.entities = [item]
        return model
    }

    /// A private-queue context on a new in-memory store holding `count` saved items, and the items as fetched.
    static func contextWithItems(_ count: Int, model: NSManagedObjectModel) throws
        -> (NSManagedObjectContext, [NSManagedObject])
    {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let items = try context.performAndWait {
            for number in 0..<count {
                let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
                item.setValue(Int64(number), forKey: "number")
            }
            try context.save()
            context.reset()
            return try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item"))
        }
        return (context, items)
    }

    static func held(_ made: (NSManagedObjectContext, [NSManagedObject]))
        -> (Locked<NSManagedObjectContext?>, Locked<[NSManagedObject]>)
    {
        (Locked(made.0), Locked(made.1))
    }

    /// Runs `first` and `second` on two new threads, released at the same moment, and waits for both.
    static func atOnce(_ first: @escaping @Sendable () -> Void, _ second: @escaping @Sendable () -> Void) {
        let ready = DispatchSemaphore(value: 0)
        let start = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        for body in [first, second] {
            done.enter()
            Thread {
                ready.signal()
                start.wait()
                body()
                done.leave()
            }.start()
        }
        ready.wait()
        ready.wait()
        start.signal()
        start.signal()
        done.wait()
    }

    @Test func objectsAndTheirContextCanGoAwayOnTwoThreadsAtOnce() throws {
        let model = Self.model()
        for _ in 0..<300 {
            // Only the two boxes hold the context and the items (no local variable keeps either alive).
            let (heldContext, heldItems) = try Self.held(Self.contextWithItems(64, model: model))
            let survivor = heldItems.withLock { $0.removeFirst() }
            Self.atOnce({ heldItems.withLock { $0 = [] } }, { heldContext.withLock { $0 = nil } })
            // The object that outlived its context is disconnected from it, and keeps its identity.
            #expect(survivor.managedObjectContext == nil)
            #expect(!survivor.objectID.isTemporaryID)
        }
    }

    @Test func objectsReleasedOnAnotherThreadLeaveTheirContext() throws {
        let (heldContext, held) = try Self.held(Self.contextWithItems(64, model: Self.model()))
        let context = try #require(heldContext.withLock { $0 })
        let ids = held.withLock { $0.map(\.objectID) }
        Self.atOnce({ held.withLock { $0 = [] } }, {})
        let (registered, refetched) = try context.performAndWait {
            (context.registeredObjects.count, try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item")))
        }
        // Nothing refers to the fetched objects any more: the context, which does not retain unchanged objects,
        // has none left, and fetching again makes new ones with the same IDs and values.
        #expect(registered == 0)
        #expect(Set(refetched.map(\.objectID)) == Set(ids))
        let numbers = context.performAndWait { refetched.compactMap { $0.value(forKey: "number") as? Int64 } }
        #expect(numbers.sorted() == Array(0..<64))
    }
}
