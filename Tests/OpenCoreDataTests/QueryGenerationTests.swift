import Foundation
import OpenCoreData
import Testing

/// Query generations: a context pinned with `setQueryGenerationFrom(.current)` keeps reading the SQLite store as it
/// was at its first read after pinning, while other contexts, coordinators or processes commit, until it saves,
/// merges, resets or is pinned again.
@Suite struct QueryGenerationTests {
    let directory = SQLiteTestDirectory()
    let model = SQLiteSampleModel.make()

    /// Runs `body` on `context`'s queue.
    func on<T>(_ context: NSManagedObjectContext, _ body: () throws -> T) throws -> T {
        try context.performAndWait(body)
    }

    func coordinator(_ options: [AnyHashable: Any]? = nil) throws -> NSPersistentStoreCoordinator {
        try SQLiteStack.coordinator(model, at: directory.store(), options: options)
    }

    /// Saves a new owner through a context of its own on `coordinator`, with `items` items.
    @discardableResult
    func insertOwner(_ name: String, items: Int = 0, into coordinator: NSPersistentStoreCoordinator) throws
        -> NSManagedObjectID
    {
        let context = SQLiteStack.context(coordinator)
        return try on(context) {
            let owner = NSEntityDescription.insertNewObject(forEntityName: "Owner", into: context)
            owner.setValue(name, forKey: "name")
            for index in 0..<items {
                let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
                item.setValue("\(name) \(index)", forKey: "name")
                item.setValue(owner, forKey: "owner")
            }
            try context.save()
            return owner.objectID
        }
    }

    /// Renames the owner `objectID` and gives it one more item, through a context of its own on `coordinator`.
    func changeOwner(_ objectID: NSManagedObjectID, to name: String, in coordinator: NSPersistentStoreCoordinator)
        throws
    {
        let context = SQLiteStack.context(coordinator)
        try on(context) {
            let owner = try context.existingObject(with: objectID)
            owner.setValue(name, forKey: "name")
            let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
            item.setValue("\(name) new", forKey: "name")
            item.setValue(owner, forKey: "owner")
            try context.save()
        }
    }

    /// The owners' names as the store holds them for `context` (dictionaries: read from the store, not from objects
    /// the context already holds).
    func storedNames(_ context: NSManagedObjectContext) throws -> [String] {
        let request = NSFetchRequest<NSDictionary>(entityName: "Owner")
        request.resultType = .dictionaryResultType
        request.propertiesToFetch = ["name"]
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        return try context.fetch(request).compactMap { $0["name"] as? String }
    }

    func owners(named name: String, in context: NSManagedObjectContext) throws -> [NSManagedObject] {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Owner")
        request.predicate = NSPredicate(format: "name == %@", name)
        return try context.fetch(request)
    }

    func ownerCount(_ context: NSManagedObjectContext) throws -> Int {
        try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Owner"))
    }

    /// A context on `coordinator` pinned with `setQueryGenerationFrom(.current)` that has read since (so that its
    /// generation is taken), with the number of owners it read.
    func pinnedContext(_ coordinator: NSPersistentStoreCoordinator) throws -> (NSManagedObjectContext, Int) {
        let context = SQLiteStack.context(coordinator)
        let count = try on(context) {
            try context.setQueryGenerationFrom(.current)
            return try ownerCount(context)
        }
        return (context, count)
    }

    /// A context pinned on its coordinator after reading Ada, then Grace saved (with `items` items) through another
    /// coordinator: the pinned context, its coordinator and the other.
    func pinnedContextBehindACommit(items: Int = 0) throws -> (
        NSManagedObjectContext, NSPersistentStoreCoordinator, NSPersistentStoreCoordinator
    ) {
        let here = try coordinator()
        let elsewhere = try coordinator()
        try insertOwner("Ada", into: elsewhere)
        let (pinned, count) = try pinnedContext(here)
        #expect(count == 1)
        try insertOwner("Grace", items: items, into: elsewhere)
        return (pinned, here, elsewhere)
    }

    @Test func aPinnedContextKeepsReadingItsGenerationWhileAnotherCoordinatorCommits() throws {
        let here = try coordinator()
        let elsewhere = try coordinator()
        let ada = try insertOwner("Ada", into: elsewhere)
        let pinned = SQLiteStack.context(here)
        let unpinned = SQLiteStack.context(here)
        try on(pinned) {
            try pinned.setQueryGenerationFrom(.current)
            #expect(try storedNames(pinned) == ["Ada"])
        }
        try changeOwner(ada, to: "Countess", in: elsewhere)
        try insertOwner("Grace", into: elsewhere)
        try on(pinned) { () throws in
            #expect(try storedNames(pinned) == ["Ada"])
            #expect(try ownerCount(pinned) == 1)
            #expect(try owners(named: "Ada", in: pinned).count == 1)
            #expect(try owners(named: "Grace", in: pinned).isEmpty)
            let items = NSFetchRequest<NSManagedObject>(entityName: "Item")
            #expect(try pinned.count(for: items) == 0)
        }
        try on(unpinned) { () throws in
            #expect(try storedNames(unpinned) == ["Countess", "Grace"])
            #expect(try ownerCount(unpinned) == 2)
            #expect(try owners(named: "Ada", in: unpinned).isEmpty)
        }
    }

    @Test func aContextPinsItselfAtItsFirstReadAfterPinning() throws {
        let here = try coordinator()
        let elsewhere = try coordinator()
        try insertOwner("Ada", into: elsewhere)
        let pinned = SQLiteStack.context(here)
        try on(pinned) { try pinned.setQueryGenerationFrom(.current) }
        // Committed after the call but before the first read: the generation includes it.
        try insertOwner("Grace", into: elsewhere)
        try on(pinned) { () throws in #expect(try storedNames(pinned) == ["Ada", "Grace"]) }
        try insertOwner("Linus", into: elsewhere)
        try on(pinned) { () throws in #expect(try storedNames(pinned) == ["Ada", "Grace"]) }
    }

    @Test func faultsFiredAfterACommitReadThePinnedGeneration() throws {
        let here = try coordinator()
        let elsewhere = try coordinator()
        let adaID = try insertOwner("Ada", items: 2, into: elsewhere)
        let pinned = SQLiteStack.context(here)
        let ada = try on(pinned) {
            try pinned.setQueryGenerationFrom(.current)
            let request = NSFetchRequest<NSManagedObject>(entityName: "Owner")
            request.includesPropertyValues = false
            let ada = try #require(try pinned.fetch(request).first)
            #expect(ada.isFault)
            return ada
        }
        try changeOwner(adaID, to: "Countess", in: elsewhere)
        pinned.performAndWait {
            // The object's fault fires now, after the commit, and reads the generation.
            #expect(ada.value(forKey: "name") as? String == "Ada")
            let items = ada.value(forKey: "items") as? Set<NSManagedObject>
            #expect(items?.count == 2)
            #expect(Set(items?.compactMap { $0.value(forKey: "name") as? String } ?? []) == ["Ada 0", "Ada 1"])
            // Turned into a fault again, it still reads the generation.
            pinned.refresh(ada, mergeChanges: false)
            #expect(ada.value(forKey: "name") as? String == "Ada")
            pinned.refreshAllObjects()
            #expect((ada.value(forKey: "items") as? Set<NSManagedObject>)?.count == 2)
        }
    }

    @Test func rowsSavedThroughTheSameCoordinatorDoNotReachAPinnedContext() throws {
        let here = try coordinator()
        let adaID = try insertOwner("Ada", items: 1, into: here)
        let pinned = SQLiteStack.context(here)
        let ada = try on(pinned) {
            try pinned.setQueryGenerationFrom(.current)
            let ada = try pinned.existingObject(with: adaID)
            #expect(ada.value(forKey: "name") as? String == "Ada")
            pinned.refresh(ada, mergeChanges: false)
            return ada
        }
        // The coordinator's row cache now holds the new row.
        try changeOwner(adaID, to: "Countess", in: here)
        pinned.performAndWait {
            #expect(ada.value(forKey: "name") as? String == "Ada")
            #expect((ada.value(forKey: "items") as? Set<NSManagedObject>)?.count == 1)
        }
    }

    @Test func aChildContextReadsItsParentsGeneration() throws {
        let here = try coordinator()
        let elsewhere = try coordinator()
        let adaID = try insertOwner("Ada", into: elsewhere)
        let parent = SQLiteStack.context(here)
        try on(parent) {
            try parent.setQueryGenerationFrom(.current)
            _ = try ownerCount(parent)
        }
        try changeOwner(adaID, to: "Countess", in: elsewhere)
        try insertOwner("Grace", into: elsewhere)
        let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        child.parent = parent
        let adaHere = try #require(here.managedObjectID(forURIRepresentation: adaID.uriRepresentation()))
        try on(child) {
            #expect(child.queryGenerationToken == nil)
            #expect(try ownerCount(child) == 1)
            let ada = try child.existingObject(with: adaHere)
            #expect(ada.value(forKey: "name") as? String == "Ada")
        }
    }

    @Test func pinningAChildContextStopsTheProgram() async {
        await #expect(processExitsWith: .failure) {
            let model = SQLiteSampleModel.make()
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            let parent = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            parent.persistentStoreCoordinator = coordinator
            let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            child.parent = parent
            child.performAndWait { try? child.setQueryGenerationFrom(.current) }
        }
    }

    @Test func savingMovesThePinnedContextToTheGenerationOfItsNextRead() throws {
        let (pinned, _, elsewhere) = try pinnedContextBehindACommit()
        try on(pinned) {
            #expect(try storedNames(pinned) == ["Ada"])
            let linus = NSEntityDescription.insertNewObject(forEntityName: "Owner", into: pinned)
            linus.setValue("Linus", forKey: "name")
            try pinned.save()
            #expect(pinned.queryGenerationToken == nil)
            #expect(try storedNames(pinned) == ["Ada", "Grace", "Linus"])
            #expect(pinned.queryGenerationToken != nil)
        }
        // Pinned again: the new generation holds too.
        try insertOwner("Margaret", into: elsewhere)
        try on(pinned) { () throws in #expect(try storedNames(pinned) == ["Ada", "Grace", "Linus"]) }
    }

    @Test func savingWithoutChangesMovesThePinnedContextOnToo() throws {
        let (pinned, _, _) = try pinnedContextBehindACommit()
        try on(pinned) {
            try pinned.save()
            #expect(try storedNames(pinned) == ["Ada", "Grace"])
        }
    }

    @Test func pinningAgainToCurrentMovesOn() throws {
        let (pinned, _, elsewhere) = try pinnedContextBehindACommit()
        try on(pinned) {
            #expect(try ownerCount(pinned) == 1)
            try pinned.setQueryGenerationFrom(.current)
            #expect(try ownerCount(pinned) == 2)
        }
        try insertOwner("Linus", into: elsewhere)
        try on(pinned) {
            #expect(try ownerCount(pinned) == 2)
            try pinned.setQueryGenerationFrom(nil)
            #expect(pinned.queryGenerationToken == nil)
            #expect(try ownerCount(pinned) == 3)
        }
    }

    @Test func resettingAndMergingMoveThePinnedContextOn() throws {
        let here = try coordinator()
        let elsewhere = try coordinator()
        let adaID = try insertOwner("Ada", into: elsewhere)
        let (pinned, count) = try pinnedContext(here)
        #expect(count == 1)
        try insertOwner("Grace", into: elsewhere)
        try on(pinned) { () throws in
            pinned.reset()
            #expect(try ownerCount(pinned) == 2)
        }
        try changeOwner(adaID, to: "Countess", in: elsewhere)
        try on(pinned) { () throws in
            #expect(try storedNames(pinned) == ["Ada", "Grace"])
            NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSUpdatedObjectsKey: [adaID]], into: [pinned])
            #expect(try storedNames(pinned) == ["Countess", "Grace"])
            let adaHere = try #require(here.managedObjectID(forURIRepresentation: adaID.uriRepresentation()))
            #expect(try pinned.existingObject(with: adaHere).value(forKey: "name") as? String == "Countess")
        }
    }

    @Test func tokensNameGenerations() throws {
        let here = try coordinator()
        let elsewhere = try coordinator()
        try insertOwner("Ada", into: elsewhere)
        let first = SQLiteStack.context(here)
        let second = SQLiteStack.context(here)
        let token = try on(first) {
            #expect(first.queryGenerationToken == nil)
            try first.setQueryGenerationFrom(.current)
            _ = try ownerCount(first)
            return try #require(first.queryGenerationToken)
        }
        #expect(token != NSQueryGenerationToken.current)
        #expect(token == (token.copy() as? NSQueryGenerationToken))
        try insertOwner("Grace", into: elsewhere)
        try on(second) {
            // Pinned to the first context's generation, made before Grace was saved.
            try second.setQueryGenerationFrom(token)
            #expect(try ownerCount(second) == 1)
            #expect(second.queryGenerationToken == token)
        }
        try on(first) {
            #expect(first.queryGenerationToken == token)
            try first.setQueryGenerationFrom(.current)
            _ = try ownerCount(first)
            let moved = try #require(first.queryGenerationToken)
            #expect(moved != token)
            #expect(moved.hash != token.hash || moved != token)
        }
    }

    @Test func contextsPinnedWhileNothingIsCommittedShareTheirGeneration() throws {
        let here = try coordinator()
        try insertOwner("Ada", into: here)
        let first = SQLiteStack.context(here)
        let second = SQLiteStack.context(here)
        let tokens = try [first, second].map { context in
            try on(context) {
                try context.setQueryGenerationFrom(.current)
                _ = try ownerCount(context)
                return context.queryGenerationToken
            }
        }
        #expect(tokens[0] != nil)
        #expect(tokens[0] == tokens[1])
    }

    @Test func aTokenOfAnotherCoordinatorIsRejected() throws {
        let here = try coordinator()
        let elsewhere = try coordinator()
        try insertOwner("Ada", into: here)
        let other = SQLiteStack.context(elsewhere)
        let token = try on(other) {
            try other.setQueryGenerationFrom(.current)
            _ = try ownerCount(other)
            return try #require(other.queryGenerationToken)
        }
        let context = SQLiteStack.context(here)
        context.performAndWait {
            let error = #expect(throws: NSError.self) { try context.setQueryGenerationFrom(token) }
            #expect(error?.domain == NSCocoaErrorDomain)
            #expect(error?.code == NSPersistentStoreOperationError)
            #expect(context.queryGenerationToken == nil)
        }
        withExtendedLifetime(other) {}
    }

    @Test func storesWithoutAWriteAheadLogReadAsUnpinned() throws {
        let options = [NSSQLitePragmasOption: ["journal_mode": "DELETE"]]
        let here = try coordinator(options)
        let elsewhere = try coordinator(options)
        try insertOwner("Ada", into: elsewhere)
        let (pinned, count) = try pinnedContext(here)
        #expect(count == 1)
        try insertOwner("Grace", into: elsewhere)
        try on(pinned) { () throws in #expect(try ownerCount(pinned) == 2) }
    }

    @Test func anInMemoryStoreReadsAsUnpinned() throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
        try insertOwner("Ada", into: coordinator)
        let (pinned, count) = try pinnedContext(coordinator)
        #expect(count == 1)
        try insertOwner("Grace", into: coordinator)
        try on(pinned) { () throws in #expect(try ownerCount(pinned) == 2) }
    }

    /// Whether a checkpoint can copy the whole write-ahead log into the store file: not while a pinned context's read
    /// transaction holds a state of the file older than the log's end.
    func logCanBeCheckpointed() throws -> Bool {
        let result = try RawSQLite.checkpoint(directory.store(), mode: "PASSIVE")
        return result.busy == 0 && result.log == result.done
    }

    /// Whether the write-ahead log can be checkpointed and emptied: only once no read transaction uses it.
    func logCanBeEmptied() throws -> Bool {
        let result = try RawSQLite.checkpoint(directory.store(), mode: "TRUNCATE")
        let size = (try? FileManager.default.attributesOfItem(atPath: directory.store().path + "-wal"))?[.size]
        return result.busy == 0 && (size as? NSNumber)?.intValue ?? 0 == 0
    }

    @Test func unpinningLetsTheLogBeCheckpointed() throws {
        let (pinned, _, elsewhere) = try pinnedContextBehindACommit(items: 20)
        #expect(try !logCanBeCheckpointed())
        pinned.performAndWait { try? pinned.setQueryGenerationFrom(nil) }
        #expect(try logCanBeEmptied())
        withExtendedLifetime(elsewhere) {}
    }

    @Test func aPinnedContextGoingAwayLetsTheLogBeCheckpointed() throws {
        let elsewhere = try SQLiteStack.releasingObjects {
            let (pinned, _, elsewhere) = try pinnedContextBehindACommit(items: 20)
            #expect(try !logCanBeCheckpointed())
            withExtendedLifetime(pinned) {}
            return elsewhere
        }
        #expect(try logCanBeEmptied())
        withExtendedLifetime(elsewhere) {}
    }

    @Test func movingOnLetsGoOfTheOldGeneration() throws {
        let (pinned, _, elsewhere) = try pinnedContextBehindACommit(items: 20)
        #expect(try !logCanBeCheckpointed())
        try on(pinned) {
            pinned.reset()
            _ = try ownerCount(pinned)
        }
        // The new generation reads the end of the log; only the old one held it back.
        #expect(try logCanBeCheckpointed())
        #expect(try !logCanBeEmptied())
        withExtendedLifetime(elsewhere) {}
    }

    @Test func removingTheStoreEndsItsGenerations() throws {
        let here = try coordinator()
        let elsewhere = try coordinator()
        try insertOwner("Ada", into: elsewhere)
        let (pinned, _) = try pinnedContext(here)
        try insertOwner("Grace", into: elsewhere)
        #expect(try !logCanBeCheckpointed())
        try SQLiteStack.close(here)
        #expect(try logCanBeEmptied())
        withExtendedLifetime(pinned) {}
    }
}

/// Pinned readers on several threads, on the writer's coordinator and on another, while a writer commits: each
/// reader sees one state of the store — counts, values of faults fired again and again — until it moves on, and
/// every new generation is at least as recent as the one before. Run under ThreadSanitizer by `.ci/run`.
@Suite struct QueryGenerationConcurrencyTests {
    @Test func pinnedReadersSeeOneStateWhileAWriterCommits() throws {
        let directory = SQLiteTestDirectory()
        let model = SQLiteSampleModel.make()
        let shared = try SQLiteStack.coordinator(model, at: directory.store())
        let other = try SQLiteStack.coordinator(model, at: directory.store())
        let writer = SQLiteStack.context(shared)
        let counterID = try writer.performAndWait {
            let counter = NSEntityDescription.insertNewObject(forEntityName: "Item", into: writer)
            counter.setValue(Int64(0), forKey: "int64")
            try writer.save()
            return counter.objectID
        }
        let rounds = 150
        let failures = Locked<[String]>([])
        let writing = Locked(true)
        // Generations each reader saw move on while it read: the readers did overlap the writer.
        let movesSeen = Locked(0)
        @Sendable func fail(_ message: String) { failures.withLock { $0.append(message) } }
        // The writer starts once every reader has read once, so that they overlap however the threads are scheduled
        // (one thread each: a pool as large as the two cores of CI ran the writer to its end before any reader).
        let readersStarted = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        @Sendable func run(_ index: Int) {
            if index == 0 {
                for _ in 1...3 { _ = readersStarted.wait(timeout: .now() + 30) }
                writer.performAndWait {
                    do {
                        let counter = try writer.existingObject(with: counterID)
                        for round in 1...rounds {
                            counter.setValue(Int64(round), forKey: "int64")
                            let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: writer)
                            item.setValue(Int64(-round), forKey: "int64")
                            try writer.save()
                        }
                    } catch {
                        fail("writer: \(error)")
                    }
                }
                writing.withLock { $0 = false }
                return
            }
            let coordinator = index == 2 ? other : shared
            let reader = SQLiteStack.context(coordinator)
            // The counter's ID on the reader's coordinator: IDs name the store object of their coordinator.
            let counterID = coordinator.managedObjectID(forURIRepresentation: counterID.uriRepresentation())!
            reader.performAndWait {
                do {
                    var lastValue: Int64 = 0
                    // Until the writer is done (bounded all the same).
                    for pass in 0..<2_000 where writing.withLock({ $0 }) {
                        defer { if pass == 0 { readersStarted.signal() } }
                        try reader.setQueryGenerationFrom(.current)
                        let items = NSFetchRequest<NSManagedObject>(entityName: "Item")
                        let count = try reader.count(for: items)
                        let value = try reader.existingObject(with: counterID).value(forKey: "int64") as? Int64 ?? -1
                        // The counter and the items are saved together: the generation holds both or neither.
                        if count != Int(value) + 1 {
                            fail("reader \(index): \(count) items with the counter at \(value)")
                        }
                        if value < lastValue { fail("reader \(index): went back from \(lastValue) to \(value)") }
                        if value > lastValue { movesSeen.withLock { $0 += 1 } }
                        lastValue = value
                        for _ in 0..<3 {
                            reader.refreshAllObjects()
                            let again = try reader.existingObject(with: counterID).value(forKey: "int64") as? Int64
                            let fetched = try reader.fetch(items).count
                            if again != value || fetched != count {
                                fail("reader \(index): read \(again ?? -1), \(fetched) items in generation \(value)")
                            }
                        }
                    }
                    try reader.setQueryGenerationFrom(nil)
                } catch {
                    fail("reader \(index): \(error)")
                }
            }
        }
        for index in 0..<4 {
            done.enter()
            Thread {
                run(index)
                done.leave()
            }.start()
        }
        done.wait()
        #expect(movesSeen.withLock { $0 } > 0)
        #expect(failures.withLock { $0 } == [])
        try writer.performAndWait {
            let finalValue = try writer.existingObject(with: counterID).value(forKey: "int64") as? Int64
            #expect(finalValue == Int64(rounds))
        }
    }
}
