import Foundation
import OpenCoreDataShim
import Testing

/// A person whose transient `fullName` is computed when the object is fetched, as in the Core Data Programming
/// Guide's example of refreshing an object with a cached derived value.
final class SQLiteFaultingPerson: NSManagedObject {
    override func awakeFromFetch() {
        super.awakeFromFetch()
        let first = primitiveValue(forKey: "firstName") as? String ?? ""
        let last = primitiveValue(forKey: "lastName") as? String ?? ""
        setPrimitiveValue("\(first) \(last)", forKey: "fullName")
    }
}

/// Faults, the row cache and batched loading with the SQLite store: objects come back as faults holding their
/// values, relationships load on first access, `fetchBatchSize` and `relationshipKeyPathsForPrefetching` load rows
/// a batch or a relationship at a time, and refreshing follows Apple's rules.
@Suite(.serialized) struct SQLiteFaultingTests {
    /// Shelf ⟷> Volume, and Person with a transient fullName. Table names unique to this suite, so that statements
    /// can be counted while other suites run.
    static func model() -> NSManagedObjectModel {
        let model = SQLiteCorpusModels.model([
            .init(
                name: "FaultShelf",
                properties: [
                    .attribute("label", .stringAttributeType), .toMany("volumes", "FaultVolume", inverse: "shelf"),
                ]),
            .init(
                name: "FaultVolume",
                properties: [
                    .attribute("title", .stringAttributeType), .attribute("number", .integer32AttributeType),
                    .toOne("shelf", "FaultShelf", inverse: "volumes"),
                ]),
            .init(
                name: "FaultPerson",
                properties: [
                    .attribute("firstName", .stringAttributeType), .transient("fullName", .stringAttributeType),
                    .attribute("lastName", .stringAttributeType),
                ]),
        ])
        model.entitiesByName["FaultPerson"]?.managedObjectClassName = "SQLiteFaultingPerson"
        return model
    }

    static let sharedModel = model()

    /// A store with `shelves` shelves of `volumes` volumes each, written through one coordinator; returns its URL.
    static func fill(_ directory: SQLiteTestDirectory, shelves: Int, volumes: Int) throws -> URL {
        let url = directory.store()
        let coordinator = try SQLiteStack.coordinator(sharedModel, at: url)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            for shelfNumber in 0..<shelves {
                let shelf = NSEntityDescription.insertNewObject(forEntityName: "FaultShelf", into: context)
                shelf.setValue("shelf \(shelfNumber)", forKey: "label")
                var contents = Set<NSManagedObject>()
                for number in 0..<volumes {
                    let volume = NSEntityDescription.insertNewObject(forEntityName: "FaultVolume", into: context)
                    volume.setValue("volume \(shelfNumber)-\(number)", forKey: "title")
                    volume.setValue(Int32(shelfNumber * volumes + number), forKey: "number")
                    contents.insert(volume)
                }
                shelf.setValue(contents, forKey: "volumes")
            }
            try context.save()
        }
        try SQLiteStack.close(coordinator)
        return url
    }

    @Test func fetchedObjectsAreFaultsThatAlreadyHoldTheirValues() throws {
        let directory = SQLiteTestDirectory()
        let url = try Self.fill(directory, shelves: 1, volumes: 5)
        let context = SQLiteStack.context(try SQLiteStack.coordinator(Self.sharedModel, at: url))
        let recorder = SQLiteReadCounter()
        defer { recorder.stop() }
        try context.performAndWait {
            let volumes = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "FaultVolume"))
            #expect(volumes.count == 5)
            #expect(volumes.allSatisfy { $0.isFault })
            let readsAfterFetch = recorder.reads("ZFAULTVOLUME")
            #expect(volumes.compactMap { $0.value(forKey: "title") as? String }.count == 5)
            #expect(volumes.allSatisfy { !$0.isFault })
            #expect(recorder.reads("ZFAULTVOLUME") == readsAfterFetch)

            let again = NSFetchRequest<NSManagedObject>(entityName: "FaultVolume")
            again.returnsObjectsAsFaults = false
            let refetched = try context.fetch(again)
            #expect(Set(refetched.map(ObjectIdentifier.init)) == Set(volumes.map(ObjectIdentifier.init)))
        }
    }

    @Test func objectsFetchedWithoutValuesLoadTheirRowWhenTouched() throws {
        let directory = SQLiteTestDirectory()
        let url = try Self.fill(directory, shelves: 1, volumes: 4)
        let context = SQLiteStack.context(try SQLiteStack.coordinator(Self.sharedModel, at: url))
        let recorder = SQLiteReadCounter()
        defer { recorder.stop() }
        try context.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "FaultVolume")
            request.includesPropertyValues = false
            request.sortDescriptors = [NSSortDescriptor(key: "number", ascending: true)]
            let volumes = try context.fetch(request)
            #expect(volumes.allSatisfy { $0.isFault })
            #expect(recorder.read("ZFAULTVOLUME", times: 1))
            #expect(volumes[2].value(forKey: "number") as? Int32 == 2)
            #expect(recorder.read("ZFAULTVOLUME", times: 2))
            #expect(volumes[0].isFault)

            let shelf = try #require(volumes[2].value(forKey: "shelf") as? NSManagedObject)
            #expect(shelf.isFault)
            #expect(shelf.hasFault(forRelationshipNamed: "volumes"))
            #expect(shelf.value(forKey: "label") as? String == "shelf 0")
            let contents = try #require(shelf.value(forKey: "volumes") as? Set<NSManagedObject>)
            // The same instances: objects are unique per context.
            #expect(contents.contains { $0 === volumes[2] })
            #expect(!shelf.hasFault(forRelationshipNamed: "volumes"))
        }
    }

    /// A context on a new store of one shelf of `volumes` volumes, and a counter of the reads from then on.
    static func countingContext(volumes: Int, in directory: SQLiteTestDirectory) throws
        -> (context: NSManagedObjectContext, recorder: SQLiteReadCounter)
    {
        let url = try fill(directory, shelves: 1, volumes: volumes)
        return (SQLiteStack.context(try SQLiteStack.coordinator(sharedModel, at: url)), SQLiteReadCounter())
    }

    /// The volumes (from `number` on) in order of `number`, fetched in batches of `batchSize`; on `context`'s queue.
    static func batchedVolumes(
        _ context: NSManagedObjectContext, ascending: Bool = true, batchSize: Int = 10, from number: Int = 0
    ) throws -> [NSManagedObject] {
        let request = NSFetchRequest<NSManagedObject>(entityName: "FaultVolume")
        request.predicate = NSPredicate(format: "number >= %d", number)
        request.fetchBatchSize = batchSize
        request.sortDescriptors = [NSSortDescriptor(key: "number", ascending: ascending)]
        return try context.fetch(request)
    }

    @Test func batchedFetchesLoadRowsOneBatchAtATime() throws {
        let directory = SQLiteTestDirectory()
        let (context, recorder) = try Self.countingContext(volumes: 35, in: directory)
        defer { recorder.stop() }
        try context.performAndWait {
            let volumes = try Self.batchedVolumes(context)
            #expect(volumes.count == 35)
            // The keys of all, then the values of the first batch.
            #expect(recorder.read("ZFAULTVOLUME", times: 2))
            #expect(volumes[3].value(forKey: "number") as? Int32 == 3)
            #expect(recorder.read("ZFAULTVOLUME", times: 2))
            #expect(volumes[25].value(forKey: "number") as? Int32 == 25)
            #expect(recorder.read("ZFAULTVOLUME", times: 3))
            #expect((20..<30).map { volumes[$0].value(forKey: "number") as? Int32 } == (20..<30).map { Int32($0) })
            #expect(recorder.read("ZFAULTVOLUME", times: 3))
            #expect((30..<35).compactMap { volumes[$0].value(forKey: "title") as? String }.count == 5)
            #expect(recorder.read("ZFAULTVOLUME", times: 4))
        }
    }

    /// A batched result in an order of its own, not the rows' keys': touching any object, wherever its batch lies,
    /// loads the whole batch in one read, and the rest of that batch reads nothing more.
    @Test func aBatchedResultInItsOwnOrderLoadsTheBatchOfAnyObjectTouched() throws {
        let directory = SQLiteTestDirectory()
        let (context, recorder) = try Self.countingContext(volumes: 35, in: directory)
        defer { recorder.stop() }
        try context.performAndWait {
            let volumes = try Self.batchedVolumes(context, ascending: false)
            #expect(volumes.count == 35)
            #expect(recorder.read("ZFAULTVOLUME", times: 2))
            #expect(volumes[27].value(forKey: "number") as? Int32 == 7)
            #expect(recorder.read("ZFAULTVOLUME", times: 3))
            #expect(
                (20..<30).map { volumes[$0].value(forKey: "number") as? Int32 } == (5...14).reversed().map(Int32.init))
            #expect(recorder.read("ZFAULTVOLUME", times: 3))
            #expect(volumes[34].value(forKey: "number") as? Int32 == 0)
            #expect(volumes[12].value(forKey: "number") as? Int32 == 22)
            #expect(recorder.read("ZFAULTVOLUME", times: 5))
            let rest = (10..<20).map { volumes[$0].value(forKey: "number") as? Int32 }
            #expect(rest == (15...24).reversed().map(Int32.init))
            #expect((30..<35).compactMap { volumes[$0].value(forKey: "title") as? String }.count == 5)
            #expect(recorder.read("ZFAULTVOLUME", times: 5))
        }
    }

    /// Two batched results of the same rows in one context (two fetched results controllers, say): touching the
    /// objects of the first, fetched before the second, still loads them a batch at a time, and the second then finds
    /// those rows loaded.
    @Test func twoBatchedResultsOfTheSameRowsEachLoadABatchAtATime() throws {
        let directory = SQLiteTestDirectory()
        let (context, recorder) = try Self.countingContext(volumes: 40, in: directory)
        defer { recorder.stop() }
        try context.performAndWait {
            let first = try Self.batchedVolumes(context)
            let second = try Self.batchedVolumes(context, ascending: false)
            #expect(recorder.read("ZFAULTVOLUME", times: 4))
            #expect((10..<20).map { first[$0].value(forKey: "number") as? Int32 } == (10..<20).map(Int32.init))
            #expect(recorder.read("ZFAULTVOLUME", times: 5))
            #expect((20..<30).map { first[$0].value(forKey: "number") as? Int32 } == (20..<30).map(Int32.init))
            #expect(recorder.read("ZFAULTVOLUME", times: 6))
            #expect(
                (10..<30).map { second[$0].value(forKey: "number") as? Int32 } == (10..<30).reversed().map(Int32.init))
            #expect(recorder.read("ZFAULTVOLUME", times: 6))
        }
    }

    /// Many batched results fetched and left untouched (a list fetched again as it changes): the latest still loads a
    /// batch at a time, and objects that only the oldest result holds still load their values, one row each once the
    /// store has let that result's record of batches go.
    @Test func manyBatchedResultsLeftUntouchedStillLoadTheirValues() throws {
        let directory = SQLiteTestDirectory()
        let (context, recorder) = try Self.countingContext(volumes: 30, in: directory)
        defer { recorder.stop() }
        try context.performAndWait {
            let oldest = try Self.batchedVolumes(context)
            let later = try (0..<39).map { _ in try Self.batchedVolumes(context, batchSize: 2, from: 25) }
            #expect(recorder.read("ZFAULTVOLUME", times: 80))
            let titles = (10..<20).map { oldest[$0].value(forKey: "title") as? String }
            #expect(titles == (10..<20).map { "volume 0-\($0)" })
            #expect(recorder.read("ZFAULTVOLUME", times: 90))
            let latest = try #require(later.last)
            #expect(latest.map { $0.value(forKey: "number") as? Int32 } == (25..<30).map(Int32.init))
            #expect(recorder.read("ZFAULTVOLUME", times: 92))
        }
    }

    /// Iterating a batched result keeps only the last batches' values: earlier unchanged objects turn back into
    /// faults (and load again if touched again); changed ones keep their changes and save.
    @Test func batchesNoLongerTouchedGiveTheirValuesBack() throws {
        let directory = SQLiteTestDirectory()
        let url = try Self.fill(directory, shelves: 1, volumes: 60)
        let context = SQLiteStack.context(try SQLiteStack.coordinator(Self.sharedModel, at: url))
        try context.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "FaultVolume")
            request.fetchBatchSize = 10
            request.sortDescriptors = [NSSortDescriptor(key: "number", ascending: true)]
            let volumes = try context.fetch(request)
            volumes[5].setValue("changed", forKey: "title")
            var numbers: [Int32] = []
            for volume in volumes { numbers.append(volume.value(forKey: "number") as? Int32 ?? -1) }
            #expect(numbers == (0..<60).map { Int32($0) })
            #if !canImport(CoreData)
            // The first batches gave their values back; the last ones keep them.
            #expect(volumes[0].isFault)
            #expect(volumes[25].isFault)
            #expect(!volumes[59].isFault)
            #endif
            // The changed object kept its change; the others read their values again.
            #expect(!volumes[5].isFault)
            #expect(volumes[5].value(forKey: "title") as? String == "changed")
            #expect(volumes[0].value(forKey: "title") as? String == "volume 0-0")
            #expect(volumes[26].value(forKey: "number") as? Int32 == 26)
            try context.save()
        }
        let reader = SQLiteStack.context(try SQLiteStack.coordinator(Self.sharedModel, at: url))
        try reader.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "FaultVolume")
            request.predicate = NSPredicate(format: "number == 5")
            let saved = try reader.fetch(request)
            #expect(saved.first?.value(forKey: "title") as? String == "changed")
        }
    }

    /// Prefetching reads a to-many relationship of every fetched object in one query, values included: touching the
    /// destinations reads nothing more — also when they are more than the row cache takes at once (2 × 5,001).
    @Test(arguments: zip([6, 2], [5, 5_001]))
    func prefetchingAToManyRelationshipLoadsItInOneQuery(shelves shelfCount: Int, volumes volumeCount: Int) throws {
        let directory = SQLiteTestDirectory()
        let url = try Self.fill(directory, shelves: shelfCount, volumes: volumeCount)
        let context = SQLiteStack.context(try SQLiteStack.coordinator(Self.sharedModel, at: url))
        let recorder = SQLiteReadCounter()
        defer { recorder.stop() }
        try context.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "FaultShelf")
            request.relationshipKeyPathsForPrefetching = ["volumes"]
            let shelves = try context.fetch(request)
            let readsAfterFetch = (recorder.reads("ZFAULTVOLUME") ?? 0) + (recorder.reads("ZFAULTSHELF") ?? 0)
            #expect(readsAfterFetch <= 3)
            var titles = 0
            for shelf in shelves {
                for volume in shelf.value(forKey: "volumes") as? Set<NSManagedObject> ?? [] {
                    if volume.value(forKey: "title") is String { titles += 1 }
                }
            }
            #expect(titles == shelfCount * volumeCount)
            #expect((recorder.reads("ZFAULTVOLUME") ?? 0) + (recorder.reads("ZFAULTSHELF") ?? 0) == readsAfterFetch)
        }
    }

    @Test func prefetchingAToOneRelationshipLoadsItInOneQuery() throws {
        let directory = SQLiteTestDirectory()
        let url = try Self.fill(directory, shelves: 6, volumes: 5)
        let context = SQLiteStack.context(try SQLiteStack.coordinator(Self.sharedModel, at: url))
        let recorder = SQLiteReadCounter()
        defer { recorder.stop() }
        try context.performAndWait {
            let volumes = NSFetchRequest<NSManagedObject>(entityName: "FaultVolume")
            volumes.relationshipKeyPathsForPrefetching = ["shelf"]
            let fetched = try context.fetch(volumes)
            let before = recorder.reads("ZFAULTSHELF")
            #expect(
                Set(
                    fetched.compactMap {
                        ($0.value(forKey: "shelf") as? NSManagedObject)?.value(forKey: "label") as? String
                    }
                ).count == 6)
            #expect(recorder.reads("ZFAULTSHELF") == before)
        }
    }

    /// A many-to-many relationship prefetches through its join table: destinations shared by several sources come
    /// once, with their values, and each source gets its own.
    @Test func prefetchingAManyToManyRelationshipGivesEachSourceItsDestinationsWithTheirValues() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let coordinator = try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: url)
        let setup = SQLiteStack.context(coordinator)
        try setup.performAndWait {
            let tags = (0..<3).map { number in
                let tag = NSEntityDescription.insertNewObject(forEntityName: "Tag", into: setup)
                tag.setValue("tag \(number)", forKey: "label")
                return tag
            }
            for number in 0..<4 {
                let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: setup)
                item.setValue("item \(number)", forKey: "name")
                item.setValue(Set(tags.prefix(number)), forKey: "tags")
            }
            try setup.save()
        }
        // Another coordinator, whose row cache holds none of the rows.
        let context = SQLiteStack.context(try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: url))
        let recorder = SQLiteReadCounter()
        defer { recorder.stop() }
        try context.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
            request.relationshipKeyPathsForPrefetching = ["tags"]
            let items = try context.fetch(request)
            // The join table with the destinations' keys, then the destinations' rows.
            let readsAfterFetch = recorder.reads("ZTAG") ?? 0
            #expect(readsAfterFetch <= 2)
            var labels: [String: [String]] = [:]
            for item in items {
                let tags = item.value(forKey: "tags") as? Set<NSManagedObject> ?? []
                labels[item.value(forKey: "name") as? String ?? ""] =
                    tags.compactMap { $0.value(forKey: "label") as? String }.sorted()
            }
            #expect(
                labels == [
                    "item 0": [], "item 1": ["tag 0"], "item 2": ["tag 0", "tag 1"],
                    "item 3": ["tag 0", "tag 1", "tag 2"],
                ])
            #expect((recorder.reads("ZTAG") ?? 0) == readsAfterFetch)
        }
    }

    /// Destinations prefetched for a context that already had them wait for another context to need them; rows read
    /// since then are what that context gets, not the older prefetched ones.
    @Test func prefetchedDestinationsLeftUnusedGiveWayToRowsReadSince() throws {
        let directory = SQLiteTestDirectory()
        let url = try Self.fill(directory, shelves: 1, volumes: 3)
        let coordinator = try SQLiteStack.coordinator(Self.sharedModel, at: url)
        let holder = SQLiteStack.context(coordinator)
        let held = try holder.performAndWait {
            let shelf = try #require(try holder.fetch(NSFetchRequest<NSManagedObject>(entityName: "FaultShelf")).first)
            #expect((shelf.value(forKey: "volumes") as? Set<NSManagedObject>)?.count == 3)
            let prefetching = NSFetchRequest<NSManagedObject>(entityName: "FaultShelf")
            prefetching.relationshipKeyPathsForPrefetching = ["volumes"]
            return (shelf, try holder.fetch(prefetching))
        }
        let writer = SQLiteStack.context(try SQLiteStack.coordinator(Self.sharedModel, at: url))
        try writer.performAndWait {
            let volumeZero = NSFetchRequest<NSManagedObject>(entityName: "FaultVolume")
            volumeZero.predicate = NSPredicate(format: "number == 0")
            try #require(try writer.fetch(volumeZero).first).setValue("renamed elsewhere", forKey: "title")
            try writer.save()
        }
        let fetcher = SQLiteStack.context(coordinator)
        let fetched = try fetcher.performAndWait {
            try fetcher.fetch(NSFetchRequest<NSManagedObject>(entityName: "FaultVolume"))
        }
        let reader = SQLiteStack.context(coordinator)
        try withExtendedLifetime((held, fetched)) {
            let titles = try reader.performAndWait {
                let shelf = try #require(
                    try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "FaultShelf")).first)
                let volumes = shelf.value(forKey: "volumes") as? Set<NSManagedObject> ?? []
                return Set(volumes.compactMap { $0.value(forKey: "title") as? String })
            }
            #expect(titles == ["renamed elsewhere", "volume 0-1", "volume 0-2"])
        }
    }

    /// The delete rules of deleted objects load their relationships together, and so do rows beyond what the row
    /// cache takes at once: deleting two shelves of 5,001 volumes reads the volumes in one query, not one each.
    @Test func deletingObjectsWithMoreRelatedRowsThanTheRowCacheTakesReadsThemTogether() throws {
        let directory = SQLiteTestDirectory()
        let url = try Self.fill(directory, shelves: 2, volumes: 5_001)
        let coordinator = try SQLiteStack.coordinator(Self.sharedModel, at: url)
        let context = SQLiteStack.context(coordinator)
        let recorder = SQLiteReadCounter()
        defer { recorder.stop() }
        try context.performAndWait {
            let shelves = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "FaultShelf"))
            #expect(shelves.count == 2)
            let before = recorder.reads("ZFAULTVOLUME") ?? 0
            for shelf in shelves { context.delete(shelf) }
            try context.save()
            #expect((recorder.reads("ZFAULTVOLUME") ?? 0) - before <= 1)
        }
        let reader = SQLiteStack.context(coordinator)
        try reader.performAndWait {
            let orphans = NSFetchRequest<NSManagedObject>(entityName: "FaultVolume")
            orphans.predicate = NSPredicate(format: "shelf == nil")
            let orphanCount = try reader.count(for: orphans)
            let shelfCount = try reader.count(for: NSFetchRequest<NSManagedObject>(entityName: "FaultShelf"))
            #expect(orphanCount == 10_002)
            #expect(shelfCount == 0)
        }
    }

    @Test func refreshingUsesTheRowCacheUnlessItIsStale() throws {
        let directory = SQLiteTestDirectory()
        let url = try Self.fill(directory, shelves: 1, volumes: 1)
        let reader = SQLiteStack.context(try SQLiteStack.coordinator(Self.sharedModel, at: url))
        let writer = SQLiteStack.context(try SQLiteStack.coordinator(Self.sharedModel, at: url))
        let volume = try reader.performAndWait {
            let volume = try #require(
                try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "FaultVolume")).first)
            #expect(volume.value(forKey: "title") as? String == "volume 0-0")
            return volume
        }
        try writer.performAndWait {
            let theirs = try #require(
                try writer.fetch(NSFetchRequest<NSManagedObject>(entityName: "FaultVolume")).first)
            theirs.setValue("renamed by another coordinator", forKey: "title")
            try writer.save()
        }
        reader.performAndWait {
            // Infinite staleness (the default): the fault is fulfilled from the row cache.
            volume.setValue("local change", forKey: "title")
            reader.refresh(volume, mergeChanges: false)
            #expect(volume.isFault)
            #expect(!volume.hasChanges)
            #expect(volume.value(forKey: "title") as? String == "volume 0-0")
            // No staleness allowed: the fault is fulfilled from the store.
            reader.stalenessInterval = 0
            reader.refresh(volume, mergeChanges: false)
            #expect(volume.value(forKey: "title") as? String == "renamed by another coordinator")
        }
    }

    /// The Programming Guide's "Automatic Snapshot Management": the coordinator keeps a row while managed objects
    /// hold it — another context's fault is fulfilled from it, however old — and lets it go when the last of them
    /// goes away, so that a later fault reads the store even with infinite staleness.
    @Test func aRowIsCachedWhileObjectsHoldItAndNoLonger() throws {
        let directory = SQLiteTestDirectory()
        let url = try Self.fill(directory, shelves: 1, volumes: 1)
        let coordinator = try SQLiteStack.coordinator(Self.sharedModel, at: url)
        let writer = SQLiteStack.context(try SQLiteStack.coordinator(Self.sharedModel, at: url))
        func rename(to title: String) throws {
            try writer.performAndWait {
                let theirs = try #require(
                    try writer.fetch(NSFetchRequest<NSManagedObject>(entityName: "FaultVolume")).first)
                theirs.setValue(title, forKey: "title")
                try writer.save()
            }
        }
        func title(of objectID: NSManagedObjectID, in context: NSManagedObjectContext) -> String? {
            context.performAndWait { context.object(with: objectID).value(forKey: "title") as? String }
        }
        let objectID = try SQLiteStack.releasingObjects {
            let holder = SQLiteStack.context(coordinator)
            let volume = try holder.performAndWait {
                try #require(try holder.fetch(NSFetchRequest<NSManagedObject>(entityName: "FaultVolume")).first)
            }
            try rename(to: "renamed once")
            // The holder's volume still holds the row: a fault of another context is fulfilled from it.
            #expect(title(of: volume.objectID, in: SQLiteStack.context(coordinator)) == "volume 0-0")
            return holder.performAndWait { volume.objectID }
        }
        // Every object that held the row, and its context, has gone: the next fault reads the store.
        #expect(title(of: objectID, in: SQLiteStack.context(coordinator)) == "renamed once")
    }

    /// A save of more rows than the row cache takes at once still replaces what the cache held of them: a fault in
    /// a third context sees the saved values, not the row another context's object still holds.
    @Test func aSaveTooLargeForTheRowCacheLeavesNoOlderRowsInIt() throws {
        let directory = SQLiteTestDirectory()
        let url = try Self.fill(directory, shelves: 1, volumes: 10_001)
        let coordinator = try SQLiteStack.coordinator(Self.sharedModel, at: url)
        let holder = SQLiteStack.context(coordinator)
        let held = try holder.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "FaultVolume")
            request.predicate = NSPredicate(format: "number == 0")
            return try #require(try holder.fetch(request).first)
        }
        let writer = SQLiteStack.context(coordinator)
        try writer.performAndWait {
            let volumes = try writer.fetch(NSFetchRequest<NSManagedObject>(entityName: "FaultVolume"))
            #expect(volumes.count == 10_001)
            for volume in volumes { volume.setValue("renamed", forKey: "title") }
            try writer.save()
        }
        let objectID = holder.performAndWait { held.objectID }
        let reader = SQLiteStack.context(coordinator)
        #expect(reader.performAndWait { reader.object(with: objectID).value(forKey: "title") as? String } == "renamed")
        holder.performAndWait { #expect(held.value(forKey: "title") as? String == "volume 0-0") }
    }

    /// A store of one shelf of `volumes` volumes, and a context of its coordinator holding volume 0 as first read:
    /// afterwards renamed "renamed elsewhere" through another coordinator, as another process would.
    static func volumeRenamedElsewhere(_ directory: SQLiteTestDirectory, volumes: Int) throws
        -> (coordinator: NSPersistentStoreCoordinator, holder: NSManagedObjectContext, held: NSManagedObject)
    {
        let url = try fill(directory, shelves: 1, volumes: volumes)
        let coordinator = try SQLiteStack.coordinator(sharedModel, at: url)
        let volumeZero = NSFetchRequest<NSManagedObject>(entityName: "FaultVolume")
        volumeZero.predicate = NSPredicate(format: "number == 0")
        let holder = SQLiteStack.context(coordinator)
        let held = try holder.performAndWait { try #require(try holder.fetch(volumeZero).first) }
        let writer = SQLiteStack.context(try SQLiteStack.coordinator(sharedModel, at: url))
        try writer.performAndWait {
            try #require(try writer.fetch(volumeZero).first).setValue("renamed elsewhere", forKey: "title")
            try writer.save()
        }
        return (coordinator, holder, held)
    }

    /// A fetch of more rows than the row cache takes at once still replaces what the cache held of them: while its
    /// objects live, a fault in a third context sees the values it read, not the older row another context holds.
    @Test func aFetchTooLargeForTheRowCacheReplacesOlderRowsInIt() throws {
        let directory = SQLiteTestDirectory()
        let (coordinator, holder, held) = try Self.volumeRenamedElsewhere(directory, volumes: 10_001)
        let fetcher = SQLiteStack.context(coordinator)
        let fetched = try fetcher.performAndWait {
            try fetcher.fetch(NSFetchRequest<NSManagedObject>(entityName: "FaultVolume"))
        }
        let objectID = holder.performAndWait { held.objectID }
        let reader = SQLiteStack.context(coordinator)
        withExtendedLifetime(fetched) {
            #expect(fetched.count == 10_001)
            #expect(
                reader.performAndWait { reader.object(with: objectID).value(forKey: "title") as? String }
                    == "renamed elsewhere")
        }
        holder.performAndWait { #expect(held.value(forKey: "title") as? String == "volume 0-0") }
    }

    /// A to-many fault reads its destinations' rows afresh, and those replace what the row cache held of them: while
    /// its objects live, a fault in a third context sees the values it read, not the older row another context holds.
    @Test func aToManyFaultReplacesOlderRowsInTheRowCache() throws {
        let directory = SQLiteTestDirectory()
        let (coordinator, holder, held) = try Self.volumeRenamedElsewhere(directory, volumes: 3)
        let faulter = SQLiteStack.context(coordinator)
        let volumes = try faulter.performAndWait {
            let shelf = try #require(
                try faulter.fetch(NSFetchRequest<NSManagedObject>(entityName: "FaultShelf")).first)
            let volumes = shelf.value(forKey: "volumes") as? Set<NSManagedObject> ?? []
            #expect(volumes.compactMap { $0.value(forKey: "title") as? String }.contains("renamed elsewhere"))
            return (shelf, volumes)
        }
        let objectID = holder.performAndWait { held.objectID }
        let reader = SQLiteStack.context(coordinator)
        withExtendedLifetime(volumes) {
            #expect(volumes.1.count == 3)
            #expect(
                reader.performAndWait { reader.object(with: objectID).value(forKey: "title") as? String }
                    == "renamed elsewhere")
        }
        holder.performAndWait { #expect(held.value(forKey: "title") as? String == "volume 0-0") }
    }

    @Test func refreshingWithMergedChangesKeepsTransientValuesAsTheProgrammingGuideSays() throws {
        // The Core Data Programming Guide's example: fullName is a transient value computed in awakeFromFetch. In
        // the store the person is Sarit Smith. This context changes the first name to Fiona (and so the full name
        // to "Fiona Smith"); another context changes the last name to Jones and saves. Refreshing with
        // mergeChanges: true gives Fiona Jones, but the transient full name keeps its value, "Fiona Smith".
        let directory = SQLiteTestDirectory()
        let coordinator = try SQLiteStack.coordinator(Self.sharedModel, at: directory.store())
        let setup = SQLiteStack.context(coordinator)
        try setup.performAndWait {
            let person = SQLiteFaultingPerson(context: setup)
            person.setValue("Sarit", forKey: "firstName")
            person.setValue("Smith", forKey: "lastName")
            try setup.save()
        }
        let mine = SQLiteStack.context(coordinator)
        let other = SQLiteStack.context(coordinator)
        let person = try mine.performAndWait {
            let request = NSFetchRequest<SQLiteFaultingPerson>(entityName: "FaultPerson")
            let person = try #require(try mine.fetch(request).first)
            #expect(person.value(forKey: "fullName") as? String == "Sarit Smith")
            person.setValue("Fiona", forKey: "firstName")
            person.setValue("Fiona Smith", forKey: "fullName")
            return person
        }
        try other.performAndWait {
            let theirs = try #require(try other.fetch(NSFetchRequest<NSManagedObject>(entityName: "FaultPerson")).first)
            theirs.setValue("Jones", forKey: "lastName")
            try other.save()
        }
        mine.performAndWait {
            mine.refresh(person, mergeChanges: true)
            #expect(person.value(forKey: "firstName") as? String == "Fiona")
            #expect(person.value(forKey: "lastName") as? String == "Jones")
            #expect(person.value(forKey: "fullName") as? String == "Fiona Smith")
            #expect(person.hasChanges)
        }
    }

    @Test func refreshAllObjectsTurnsUnchangedObjectsIntoFaultsAndKeepsChanges() throws {
        let directory = SQLiteTestDirectory()
        let url = try Self.fill(directory, shelves: 1, volumes: 3)
        let context = SQLiteStack.context(try SQLiteStack.coordinator(Self.sharedModel, at: url))
        try context.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "FaultVolume")
            request.sortDescriptors = [NSSortDescriptor(key: "number", ascending: true)]
            let volumes = try context.fetch(request)
            for volume in volumes { _ = volume.value(forKey: "title") }
            volumes[0].setValue("changed", forKey: "title")
            context.refreshAllObjects()
            #expect(!volumes[0].isFault)
            #expect(volumes[0].value(forKey: "title") as? String == "changed")
            #expect(volumes[1].isFault)
            #expect(volumes[1].value(forKey: "title") as? String == "volume 0-1")
            try context.save()
        }
        #expect(
            try RawSQLite.query(url, "SELECT ZTITLE, Z_OPT FROM ZFAULTVOLUME ORDER BY ZNUMBER").first == [
                .text("changed"), .integer(2),
            ])
    }
}
