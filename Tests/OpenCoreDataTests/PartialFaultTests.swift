import Foundation
import OpenCoreDataShim
import Testing

/// `propertiesToFetch` on a fetch of managed objects: the objects are partial faults. Reading a fetched property
/// does not go to the store; reading another one loads the rest of the object. Objects the context already holds
/// keep their values, and partial faults change, save and delete as any object does.
@Suite(.serialized) struct PartialFaultTests {
    static func stack(volumes: Int = 6) throws -> (SQLiteTestDirectory, URL) {
        let directory = SQLiteTestDirectory()
        return (directory, try SQLiteFaultingTests.fill(directory, shelves: 1, volumes: volumes))
    }

    static func partialRequest() -> NSFetchRequest<NSManagedObject> {
        let request = NSFetchRequest<NSManagedObject>(entityName: "FaultVolume")
        request.propertiesToFetch = ["title"]
        request.sortDescriptors = [NSSortDescriptor(key: "title", ascending: true)]
        return request
    }

    @Test func onlyTheFetchedPropertiesAreLoaded() throws {
        let (directory, url) = try Self.stack()
        _ = directory
        let context = SQLiteStack.context(try SQLiteStack.coordinator(SQLiteFaultingTests.sharedModel, at: url))
        let recorder = SQLiteReadCounter()
        defer { recorder.stop() }
        try context.performAndWait {
            let volumes = try context.fetch(Self.partialRequest())
            #expect(recorder.read("ZFAULTVOLUME", times: 1))
            #if !canImport(CoreData)
            let select = try #require(recorder.statements.first { $0.contains(" ZFAULTVOLUME ") })
            #expect(select.contains("t0.ZTITLE"))
            #expect(!select.contains("ZNUMBER"))
            #expect(!select.contains("ZSHELF"))
            #endif
            // Fetched properties come without the store.
            #expect(volumes.map { $0.value(forKey: "title") as? String } == (0..<6).map { "volume 0-\($0)" })
            #expect(recorder.read("ZFAULTVOLUME", times: 1))
            // Another property loads the rest of that object, once.
            #expect(volumes[2].value(forKey: "number") as? Int32 == 2)
            #expect(recorder.read("ZFAULTVOLUME", times: 2))
            #expect(
                (volumes[2].value(forKey: "shelf") as? NSManagedObject)?.value(forKey: "label") as? String
                    == "shelf 0")
            #expect(recorder.read("ZFAULTVOLUME", times: 2))
            #expect(volumes[3].value(forKey: "number") as? Int32 == 3)
            #expect(recorder.read("ZFAULTVOLUME", times: 3))
        }
    }

    @Test func objectsAlreadyLoadedKeepTheirValues() throws {
        let (directory, url) = try Self.stack()
        _ = directory
        let context = SQLiteStack.context(try SQLiteStack.coordinator(SQLiteFaultingTests.sharedModel, at: url))
        let recorder = SQLiteReadCounter()
        defer { recorder.stop() }
        try context.performAndWait {
            let full = NSFetchRequest<NSManagedObject>(entityName: "FaultVolume")
            full.returnsObjectsAsFaults = false
            let loaded = try context.fetch(full)
            loaded[0].setValue("edited", forKey: "title")
            let before = recorder.reads("ZFAULTVOLUME")
            let volumes = try context.fetch(Self.partialRequest())
            #expect(volumes.count == 6)
            // The full values stay: reading any property needs no store, and the unsaved change is kept.
            #expect(Set(volumes.compactMap { $0.value(forKey: "number") as? Int32 }) == Set((0..<6).map { Int32($0) }))
            #expect(loaded[0].value(forKey: "title") as? String == "edited")
            #expect(recorder.reads("ZFAULTVOLUME") == before.map { $0 + 1 })
        }
    }

    @Test func partialFaultsChangeSaveAndDelete() throws {
        let (directory, url) = try Self.stack()
        _ = directory
        let coordinator = try SQLiteStack.coordinator(SQLiteFaultingTests.sharedModel, at: url)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            let volumes = try context.fetch(Self.partialRequest())
            // A fetched property, an unfetched one and a deletion, saved with optimistic locking.
            volumes[0].setValue("renamed", forKey: "title")
            volumes[1].setValue(Int32(41), forKey: "number")
            #expect(volumes[1].value(forKey: "title") as? String == "volume 0-1")
            #expect(volumes[1].changedValues().keys.sorted() == ["number"])
            context.delete(volumes[2])
            try context.save()
        }
        let reader = SQLiteStack.context(try SQLiteStack.coordinator(SQLiteFaultingTests.sharedModel, at: url))
        try reader.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "FaultVolume")
            request.sortDescriptors = [NSSortDescriptor(key: "number", ascending: true)]
            let rows = try reader.fetch(request).map {
                "\($0.value(forKey: "title") as? String ?? "-") \($0.value(forKey: "number") as? Int32 ?? -1)"
            }
            #expect(rows == ["renamed 0", "volume 0-3 3", "volume 0-4 4", "volume 0-5 5", "volume 0-1 41"])
        }
    }
}
