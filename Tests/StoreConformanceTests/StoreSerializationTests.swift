import Foundation
import OpenCoreData
import StoreConformance
import Testing

/// Calls into one store are serialized, calls into different stores are not: a context waiting on a slow store holds
/// up no context working with another store.
@Suite struct StoreSerializationTests {
    /// A sample incremental store whose fetches stop at a gate: each fetch reports that it entered, then waits until
    /// the test opens the gate (or a generous timeout passes, which the test reports as a failure rather than hang).
    final class GatedStore: DictionaryStore, @unchecked Sendable {
        // @unchecked: the semaphores are thread-safe; `isGated` is set while no fetch runs.
        override class var storeType: String { "GatedDictionary" }

        var isGated = false
        let entered = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        private let counts = LockedCounts()

        /// How many fetches entered the store, and how many gave up waiting at the gate.
        var enteredCount: Int { counts.entered }
        var timedOutCount: Int { counts.timedOut }

        override func execute(_ request: NSPersistentStoreRequest, with context: NSManagedObjectContext?) throws
            -> Any
        {
            if isGated, request is NSFetchRequest<NSFetchRequestResult> {
                counts.enter()
                entered.signal()
                if gate.wait(timeout: .now() + .seconds(180)) == .timedOut { counts.timeOut() }
            }
            return try super.execute(request, with: context)
        }
    }

    /// Waits for `semaphore`, failing (rather than hanging) if it is not signalled within a generous time.
    static func wait(
        _ semaphore: DispatchSemaphore, _ what: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let result = semaphore.wait(timeout: .now() + .seconds(240))
        try #require(result == .success, "\(what) did not happen", sourceLocation: sourceLocation)
    }

    final class LockedCounts: @unchecked Sendable {
        // @unchecked: both counts change only under `lock`.
        private let lock = NSLock()
        private var enteredValue = 0
        private var timedOutValue = 0
        var entered: Int { lock.withLock { enteredValue } }
        var timedOut: Int { lock.withLock { timedOutValue } }
        func enter() { lock.withLock { enteredValue += 1 } }
        func timeOut() { lock.withLock { timedOutValue += 1 } }
    }

    /// One coordinator: the gated store holds the `Notes` configuration, a SQLite store `Main`.
    final class TwoStores {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: ConformanceModel.shared)
        let gated: GatedStore
        let gatedURL = DictionaryStore.newURL()
        let sqliteURL = FileManager.default.temporaryDirectory.appendingPathComponent(
            "StoreSerialization-\(UUID().uuidString).sqlite")

        init() throws {
            GatedStore.register()
            gated = try #require(
                try coordinator.addPersistentStore(
                    ofType: GatedStore.storeType, configurationName: "Notes", at: gatedURL, options: nil)
                    as? GatedStore)
            try coordinator.addPersistentStore(
                ofType: NSSQLiteStoreType, configurationName: "Main", at: sqliteURL, options: nil)
            let context = NSManagedObjectContext.conformance(coordinator)
            try context.run {
                context.make("Note", ["text": "slow"])
                context.make("Project", ["title": "fast"])
                try context.save()
            }
        }

        deinit {
            DictionaryStore.destroyDatabase(at: gatedURL)
            StoreFixture.sqlite.destroyStore(at: sqliteURL)
        }

        /// Starts a fetch of notes on its own queue; it stops at the gate. Returns a semaphore signalled when it ends.
        func startSlowFetch() -> DispatchSemaphore {
            let done = DispatchSemaphore(value: 0)
            let context = NSManagedObjectContext.conformance(coordinator)
            context.perform {
                _ = try? context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Note"))
                done.signal()
            }
            return done
        }
    }

    @Test func aSlowStoreHoldsUpNoOtherStore() throws {
        let stores = try TwoStores()
        stores.gated.isGated = true
        let slowFetch = stores.startSlowFetch()
        try Self.wait(stores.gated.entered, "the slow fetch entering the gated store")
        // A context is now inside the gated store. Another context saves to, fetches from and counts in the SQLite
        // store meanwhile: it must be done before the gate opens (with one coordinator-wide lock it would wait at
        // the gate's timeout, and the store would report the timeout).
        let fast = NSManagedObjectContext.conformance(stores.coordinator)
        let clock = ContinuousClock()
        let started = clock.now
        try fast.run {
            for index in 0..<20 { fast.make("Project", ["title": "project \(index)"]) }
            try fast.save()
            let titles = try fast.values("Project", "title")
            #expect(titles.count == 21)
        }
        let elapsed = clock.now - started
        #expect(stores.gated.timedOutCount == 0, "the fast store's work waited for the slow store")
        stores.gated.gate.signal()
        try Self.wait(slowFetch, "the slow fetch ending")
        #expect(stores.gated.timedOutCount == 0, "the fast store's work waited for the slow store")
        print("Saving and fetching through the SQLite store took \(elapsed) while a fetch waited in the gated store")
    }

    @Test func callsIntoOneStoreDoNotOverlap() throws {
        let stores = try TwoStores()
        stores.gated.isGated = true
        let first = stores.startSlowFetch()
        try Self.wait(stores.gated.entered, "the first fetch entering the store")
        let second = stores.startSlowFetch()
        // The second fetch waits for the store, not at the gate: while the first is inside, it does not enter.
        #expect(stores.gated.entered.wait(timeout: .now() + .milliseconds(200)) == .timedOut)
        #expect(stores.gated.enteredCount == 1)
        stores.gated.gate.signal()
        try Self.wait(first, "the first fetch ending")
        try Self.wait(stores.gated.entered, "the second fetch entering the store")
        #expect(stores.gated.enteredCount == 2)
        stores.gated.gate.signal()
        try Self.wait(second, "the second fetch ending")
        #expect(stores.gated.timedOutCount == 0)
    }

    // MARK: Reading the SQLite store beside its save

    /// A value transformer that stops each value it turns into data at a gate: a save of a transformable value then
    /// waits inside the SQLite store, in its write transaction, until the test opens the gate.
    final class GatedTransformer: ValueTransformer, @unchecked Sendable {
        // @unchecked: the semaphores and the counts are thread-safe; nothing else changes.
        let name = NSValueTransformerName("StoreSerializationTests.Gated.\(UUID().uuidString)")
        let entered = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        let counts = LockedCounts()

        override func transformedValue(_ value: Any?) -> Any? {
            counts.enter()
            entered.signal()
            if gate.wait(timeout: .now() + .seconds(180)) == .timedOut { counts.timeOut() }
            return (value as? String).map { Data($0.utf8) }
        }

        override func reverseTransformedValue(_ value: Any?) -> Any? {
            (value as? Data).map { String(decoding: $0, as: UTF8.self) }
        }
    }

    /// One entity, `Parcel`, whose `contents` go through `transformer`.
    static func parcelModel(_ transformer: GatedTransformer) -> NSManagedObjectModel {
        let label = NSAttributeDescription()
        label.name = "label"
        label.attributeType = .stringAttributeType
        let contents = NSAttributeDescription()
        contents.name = "contents"
        contents.attributeType = .transformableAttributeType
        contents.valueTransformerName = transformer.name.rawValue
        let parcel = NSEntityDescription()
        parcel.name = "Parcel"
        parcel.properties = [label, contents]
        let model = NSManagedObjectModel()
        model.entities = [parcel]
        return model
    }

    @Test func fetchesOfTheSQLiteStoreRunBesideItsSave() throws {
        let transformer = GatedTransformer()
        ValueTransformer.setValueTransformer(transformer, forName: transformer.name)
        defer { ValueTransformer.setValueTransformer(nil, forName: transformer.name) }
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "StoreSerialization-\(UUID().uuidString).sqlite")
        defer { StoreFixture.sqlite.destroyStore(at: url) }
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.parcelModel(transformer))
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
        let writer = NSManagedObjectContext.conformance(coordinator)
        try writer.run {
            writer.make("Parcel", ["label": "delivered"])
            try writer.save()
        }

        // The writer saves a parcel with contents: the save stops inside the store, at the transformer's gate.
        let saved = DispatchSemaphore(value: 0)
        writer.perform {
            writer.make("Parcel", ["label": "in transit", "contents": "books"])
            do { try writer.save() } catch { Issue.record(error) }
            saved.signal()
        }
        try Self.wait(transformer.entered, "the save reaching the transformer")

        // Another context fetches and counts meanwhile: it sees what was committed before the save, and is done
        // while the save still waits (with the store to one call at a time it would wait for the save, and the
        // transformer would report the timeout).
        let reader = NSManagedObjectContext.conformance(coordinator)
        let (labels, count) = try reader.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Parcel")
            request.returnsObjectsAsFaults = false
            let labels = try reader.fetch(request).compactMap { $0.value(forKey: "label") as? String }
            let count = try reader.count(for: NSFetchRequest<NSManagedObject>(entityName: "Parcel"))
            return (labels, count)
        }
        #expect(saved.wait(timeout: .now()) == .timedOut, "the save ended before the fetch")
        #expect(transformer.counts.timedOut == 0, "the fetch waited for the save")
        #expect(labels == ["delivered"])
        #expect(count == 1)

        transformer.gate.signal()
        try Self.wait(saved, "the save ending")
        #expect(transformer.counts.timedOut == 0)
        let after = try reader.performAndWait {
            try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Parcel"))
                .compactMap { $0.value(forKey: "label") as? String }.sorted()
        }
        #expect(after == ["delivered", "in transit"])
    }
}
