import Foundation
import OpenCoreData
import Testing

/// A store of a fixture's kind added with `NSPersistentHistoryTrackingKey`, on the history cases' model; its stores
/// are removed and its place destroyed with it.
public final class HistoryStack {
    public static var tracking: [AnyHashable: Any] { [NSPersistentHistoryTrackingKey: true] }

    public let fixture: StoreFixture
    public let url: URL?
    public let coordinator: NSPersistentStoreCoordinator
    private var coordinators: [NSPersistentStoreCoordinator] = []

    public init(_ fixture: StoreFixture) throws {
        self.fixture = fixture
        url = fixture.newURL()
        coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.model)
        coordinators.append(coordinator)
        try coordinator.addPersistentStore(
            ofType: fixture.storeType, configurationName: nil, at: url, options: Self.tracking)
    }

    deinit {
        for coordinator in coordinators {
            for store in coordinator.persistentStores { try? coordinator.remove(store) }
        }
        fixture.destroyStore(at: url)
    }

    /// Another coordinator with the store, as another launch or process adds it.
    public func reopen() throws -> NSPersistentStoreCoordinator {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.model)
        coordinators.append(coordinator)
        try coordinator.addPersistentStore(
            ofType: fixture.storeType, configurationName: nil, at: url, options: Self.tracking)
        return coordinator
    }

    /// Removes `coordinator`'s stores, as a process that ends lets go of them.
    public func close(_ coordinator: NSPersistentStoreCoordinator) throws {
        for store in coordinator.persistentStores { try coordinator.remove(store) }
    }

    /// Item (name, kept in tombstones; priority; note), its subentity SpecialItem (level, kept too) and Person (name)
    /// who owns items.
    public static let model: NSManagedObjectModel = {
        func attribute(_ name: String, _ type: NSAttributeType, preserved: Bool = false) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.isOptional = true
            attribute.preservesValueInHistoryOnDeletion = preserved
            return attribute
        }
        let item = NSEntityDescription()
        item.name = "Item"
        let special = NSEntityDescription()
        special.name = "SpecialItem"
        let person = NSEntityDescription()
        person.name = "Person"
        let owner = NSRelationshipDescription()
        owner.name = "owner"
        owner.destinationEntity = person
        owner.maxCount = 1
        owner.deleteRule = .nullifyDeleteRule
        let items = NSRelationshipDescription()
        items.name = "items"
        items.destinationEntity = item
        items.maxCount = 0
        items.deleteRule = .nullifyDeleteRule
        owner.inverseRelationship = items
        items.inverseRelationship = owner
        item.properties = [
            attribute("name", .stringAttributeType, preserved: true), attribute("priority", .integer64AttributeType),
            attribute("note", .stringAttributeType), owner,
        ]
        special.properties = [attribute("level", .integer16AttributeType, preserved: true)]
        item.subentities = [special]
        person.properties = [attribute("name", .stringAttributeType), items]
        let model = NSManagedObjectModel()
        model.entities = [item, special, person]
        return model
    }()

    public static func history(_ context: NSManagedObjectContext, _ request: NSPersistentHistoryChangeRequest) throws
        -> NSPersistentHistoryResult
    {
        try context.performAndWait { try #require(try context.execute(request) as? NSPersistentHistoryResult) }
    }

    public static func transactions(_ context: NSManagedObjectContext, after token: NSPersistentHistoryToken? = nil)
        throws
        -> [NSPersistentHistoryTransaction]
    {
        try #require(try history(context, .fetchHistory(after: token)).result as? [NSPersistentHistoryTransaction])
    }

    @discardableResult
    public static func insertItem(_ name: String, priority: Int64, into context: NSManagedObjectContext)
        -> NSManagedObject
    {
        context.make("Item", ["name": name, "priority": priority])
    }

    public static func item(_ name: String, in context: NSManagedObjectContext) throws -> NSManagedObject {
        try #require(try context.objects("Item", "name == %@", [name]).first)
    }
}

extension StoreConformanceCase {
    /// Persistent history (`NSPersistentHistoryTrackingKey`), for the stores that record it (the SQLite store, the
    /// PostgreSQL store): every save and batch request records a transaction, read back and deleted with
    /// `NSPersistentHistoryChangeRequest`. Not part of `all`, since the other stores refuse history requests.
    public static let persistentHistory: [StoreConformanceCase] = [
        StoreConformanceCase("History: saves record their transactions with author, context name and changes") {
            fixture in
            let stack = try HistoryStack(fixture)
            let coordinator = stack.coordinator
            let context = NSManagedObjectContext.conformance(coordinator)
            context.transactionAuthor = "importer"
            context.name = "background"
            let (first, second, special) = try context.performAndWait {
                let first = HistoryStack.insertItem("first", priority: 1, into: context)
                let second = HistoryStack.insertItem("second", priority: 2, into: context)
                let special = NSEntityDescription.insertNewObject(forEntityName: "SpecialItem", into: context)
                special.setValue("special", forKey: "name")
                special.setValue(Int16(7), forKey: "level")
                try context.save()
                first.setValue(Int64(10), forKey: "priority")
                try context.save()
                context.delete(second)
                context.delete(special)
                try context.save()
                return (first.objectID, second.objectID, special.objectID)
            }
            let transactions = try HistoryStack.transactions(context)
            #expect(transactions.count == 3)
            #expect(transactions.map(\.transactionNumber) == [1, 2, 3])
            let storeID = try #require(coordinator.persistentStores.first?.identifier)
            for transaction in transactions {
                #expect(transaction.author == "importer")
                #expect(transaction.contextName == "background")
                #expect(transaction.storeID == storeID)
                #expect(transaction.processID == ProcessInfo.processInfo.processName)
                #expect(!transaction.bundleID.isEmpty)
                #expect(abs(transaction.timestamp.timeIntervalSinceNow) < 60)
            }
            let inserted = try #require(transactions[0].changes)
            #expect(Set(inserted.map(\.changedObjectID)) == [first, second, special])
            #expect(inserted.allSatisfy { $0.changeType == .insert && $0.updatedProperties == nil })
            #expect(inserted.allSatisfy { $0.transaction === transactions[0] })

            let updated = try #require(transactions[1].changes)
            #expect(updated.count == 1)
            #expect(updated[0].changeType == .update)
            #expect(updated[0].changedObjectID == first)
            #expect(updated[0].updatedProperties?.map(\.name) == ["priority"])

            let deleted = try #require(transactions[2].changes)
            #expect(deleted.map(\.changeType) == [.delete, .delete])
            let tombstones = Dictionary(
                uniqueKeysWithValues: deleted.map { ($0.changedObjectID, $0.tombstone as? [String: Any] ?? [:]) })
            #expect(tombstones[second]?["name"] as? String == "second")
            #expect(tombstones[second]?["priority"] == nil)
            #expect(tombstones[special]?["name"] as? String == "special")
            #expect(tombstones[special]?["level"] as? Int16 == 7)
        },
        StoreConformanceCase("History: a token survives archiving and reopening the store") { fixture in
            guard fixture.persists else { return }
            let stack = try HistoryStack(fixture)
            var archive = Data()
            do {
                let coordinator = stack.coordinator
                let context = NSManagedObjectContext.conformance(coordinator)
                try context.performAndWait {
                    HistoryStack.insertItem("before", priority: 1, into: context)
                    try context.save()
                }
                let token = try #require(coordinator.currentPersistentHistoryToken(fromStores: nil))
                #expect(token == (try HistoryStack.transactions(context).last?.token))
                archive = try NSKeyedArchiver.archivedData(withRootObject: token, requiringSecureCoding: true)
                try stack.close(coordinator)
            }
            let coordinator = try stack.reopen()
            let context = NSManagedObjectContext.conformance(coordinator)
            try context.performAndWait {
                HistoryStack.insertItem("after", priority: 2, into: context)
                try context.save()
            }
            let token = try #require(
                try NSKeyedUnarchiver.unarchivedObject(ofClass: NSPersistentHistoryToken.self, from: archive))
            let after = try HistoryStack.transactions(context, after: token)
            #expect(after.count == 1)
            let names = try context.performAndWait {
                try after[0].changes!.map { try context.existingObject(with: $0.changedObjectID).value(forKey: "name") }
            }
            #expect(names as? [String] == ["after"])
            #expect(try HistoryStack.transactions(context).count == 2)
        },
        StoreConformanceCase("History: history is read after a date, a token or a transaction") { fixture in
            let stack = try HistoryStack(fixture)
            let coordinator = stack.coordinator
            let context = NSManagedObjectContext.conformance(coordinator)
            var middle = Date()
            for (index, name) in ["a", "b", "c"].enumerated() {
                if index == 1 {
                    Thread.sleep(forTimeInterval: 0.01)
                    middle = Date()
                }
                try context.performAndWait {
                    HistoryStack.insertItem(name, priority: Int64(index), into: context)
                    try context.save()
                }
            }
            let all = try HistoryStack.transactions(context)
            #expect(all.count == 3)
            let afterDate = try #require(
                try HistoryStack.history(context, .fetchHistory(after: middle)).result
                    as? [NSPersistentHistoryTransaction])
            #expect(afterDate.map(\.transactionNumber) == [2, 3])
            let afterTransaction = try #require(
                try HistoryStack.history(context, .fetchHistory(after: all[1])).result
                    as? [NSPersistentHistoryTransaction])
            #expect(afterTransaction.map(\.transactionNumber) == [3])
            #expect(try HistoryStack.transactions(context, after: all[2].token).isEmpty)
            #expect(NSPersistentHistoryChangeRequest.fetchHistory(after: all[1]).token == all[1].token)
        },
        StoreConformanceCase("History: result types shape the result") { fixture in
            let stack = try HistoryStack(fixture)
            let coordinator = stack.coordinator
            let context = NSManagedObjectContext.conformance(coordinator)
            let ids = try context.performAndWait {
                let one = HistoryStack.insertItem("one", priority: 1, into: context)
                let two = HistoryStack.insertItem("two", priority: 2, into: context)
                try context.save()
                one.setValue(Int64(5), forKey: "priority")
                try context.save()
                return [one.objectID, two.objectID]
            }
            func result(_ type: NSPersistentHistoryResultType) throws -> Any? {
                let request = NSPersistentHistoryChangeRequest.fetchHistory(after: nil as NSPersistentHistoryToken?)
                request.resultType = type
                let result = try HistoryStack.history(context, request)
                #expect(result.resultType == type)
                return result.result
            }
            #expect((try result(.statusOnly) as? NSNumber)?.boolValue == true)
            #expect((try result(.count) as? NSNumber)?.intValue == 3)
            #expect(Set(try #require(try result(.objectIDs) as? [NSManagedObjectID])) == Set(ids))
            let transactions = try #require(try result(.transactionsOnly) as? [NSPersistentHistoryTransaction])
            #expect(transactions.count == 2 && transactions.allSatisfy { $0.changes == nil })
            let changes = try #require(try result(.changesOnly) as? [NSPersistentHistoryChange])
            #expect(changes.map(\.changeType) == [.insert, .insert, .update])
            #expect(changes.allSatisfy { $0.transaction == nil })
            #expect(changes.map(\.changeID) == changes.map(\.changeID).sorted())
        },
        StoreConformanceCase("History: a fetch request selects transactions or changes") { fixture in
            let stack = try HistoryStack(fixture)
            let coordinator = stack.coordinator
            let importer = NSManagedObjectContext.conformance(coordinator)
            importer.transactionAuthor = "importer"
            let user = NSManagedObjectContext.conformance(coordinator)
            user.transactionAuthor = "user"
            let imported = try importer.performAndWait {
                let item = HistoryStack.insertItem("imported", priority: 1, into: importer)
                HistoryStack.insertItem("other", priority: 2, into: importer)
                try importer.save()
                return item.objectID
            }
            try user.performAndWait {
                try user.existingObject(with: imported).setValue(Int64(3), forKey: "priority")
                try user.save()
            }
            let byAuthor = try #require(NSPersistentHistoryTransaction.fetchRequest)
            byAuthor.predicate = NSPredicate(format: "author != %@", "importer")
            let fromUser = try #require(
                try HistoryStack.history(user, .fetchHistory(withFetch: byAuthor)).result
                    as? [NSPersistentHistoryTransaction])
            #expect(fromUser.map(\.author) == ["user"])

            let ofObject = try #require(NSPersistentHistoryChange.fetchRequest)
            ofObject.predicate = NSPredicate(format: "changedObjectID == %@", imported)
            let touching = try #require(
                try HistoryStack.history(user, .fetchHistory(withFetch: ofObject)).result
                    as? [NSPersistentHistoryTransaction])
            #expect(touching.map { $0.changes?.map(\.changeType) ?? [] } == [[.insert], [.update]])
            #expect(touching.map(\.author) == ["importer", "user"])

            let sorted = try #require(NSPersistentHistoryTransaction.fetchRequest)
            sorted.sortDescriptors = [NSSortDescriptor(key: "transactionNumber", ascending: false)]
            let newestFirst = try #require(
                try HistoryStack.history(user, .fetchHistory(withFetch: sorted)).result
                    as? [NSPersistentHistoryTransaction])
            #expect(newestFirst.map(\.transactionNumber) == [2, 1])
        },
        StoreConformanceCase("History: deleting history expires older tokens") { fixture in
            let stack = try HistoryStack(fixture)
            let coordinator = stack.coordinator
            let context = NSManagedObjectContext.conformance(coordinator)
            for name in ["a", "b", "c"] {
                try context.performAndWait {
                    HistoryStack.insertItem(name, priority: 1, into: context)
                    try context.save()
                }
            }
            let all = try HistoryStack.transactions(context)
            let request = NSPersistentHistoryChangeRequest.deleteHistory(before: all[1].token)
            request.resultType = .count
            #expect((try HistoryStack.history(context, request).result as? NSNumber)?.intValue == 2)
            #expect(try HistoryStack.transactions(context).map(\.transactionNumber) == [3])
            #expect(try HistoryStack.transactions(context, after: all[1].token).map(\.transactionNumber) == [3])
            #expect {
                _ = try HistoryStack.transactions(context, after: all[0].token)
            } throws: { error in
                let error = error as NSError
                return error.domain == NSCocoaErrorDomain && error.code == NSPersistentHistoryTokenExpiredError
            }
            _ = try HistoryStack.history(context, .deleteHistory(before: nil as NSPersistentHistoryToken?))
            #expect(try HistoryStack.transactions(context).count == 1)
            _ = try HistoryStack.history(context, .deleteHistory(before: Date()))
            #expect(try HistoryStack.transactions(context).isEmpty)
            // Numbers keep growing after everything was deleted.
            try context.performAndWait {
                HistoryStack.insertItem("d", priority: 1, into: context)
                try context.save()
            }
            #expect(try HistoryStack.transactions(context).map(\.transactionNumber) == [4])
        },
        StoreConformanceCase("History: a token of another store is refused") { fixture in
            let first = try HistoryStack(fixture)
            let second = try HistoryStack(fixture)
            let one = first.coordinator
            let two = second.coordinator
            for coordinator in [one, two] {
                let context = NSManagedObjectContext.conformance(coordinator)
                try context.performAndWait {
                    HistoryStack.insertItem("x", priority: 1, into: context)
                    try context.save()
                }
            }
            let foreign = try #require(one.currentPersistentHistoryToken(fromStores: nil))
            #expect {
                _ = try HistoryStack.transactions(NSManagedObjectContext.conformance(two), after: foreign)
            } throws: { error in
                let error = error as NSError
                return error.domain == NSCocoaErrorDomain && error.code == NSPersistentStoreOperationError
                    && error.localizedDescription.contains("belongs to another store")
            }
        },
        StoreConformanceCase("History: a transaction's notification merges into another context") { fixture in
            guard fixture.sharesLiveChanges else { return }
            let stack = try HistoryStack(fixture)
            let viewCoordinator = stack.coordinator
            let view = NSManagedObjectContext.conformance(viewCoordinator)
            let seen = try view.performAndWait {
                let item = HistoryStack.insertItem("shown", priority: 1, into: view)
                try view.save()
                _ = item.value(forKey: "priority")
                return item
            }
            let token = viewCoordinator.currentPersistentHistoryToken(fromStores: nil)
            // Another coordinator (as another process would) changes the item, adds one and deletes nothing else.
            let otherCoordinator = try stack.reopen()
            let other = NSManagedObjectContext.conformance(otherCoordinator)
            let added = try other.performAndWait {
                try HistoryStack.item("shown", in: other).setValue(Int64(42), forKey: "priority")
                let added = HistoryStack.insertItem("added", priority: 2, into: other)
                try other.save()
                return added.objectID
            }
            let transactions = try HistoryStack.transactions(view, after: token)
            #expect(transactions.count == 1)
            guard transactions.count == 1 else { return }
            let note = transactions[0].objectIDNotification()
            #expect((note.userInfo?[NSInsertedObjectsKey] as? Set<NSManagedObjectID>) == [added])
            #expect((note.userInfo?[NSUpdatedObjectsKey] as? Set<NSManagedObjectID>) == [seen.objectID])
            let merged = LockedValue<Set<NSManagedObjectID>>([])
            let observer = NotificationCenter.default.addObserver(
                forName: NSManagedObjectContext.didChangeObjectsNotification, object: view, queue: nil
            ) { note in
                for key in [NSInsertedObjectsKey, NSRefreshedObjectsKey] {
                    for object in note.userInfo?[key] as? Set<NSManagedObject> ?? [] {
                        merged.withLock { _ = $0.insert(object.objectID) }
                    }
                }
            }
            defer { NotificationCenter.default.removeObserver(observer) }
            view.performAndWait {
                view.mergeChanges(fromContextDidSave: note)
                #expect(seen.value(forKey: "priority") as? Int64 == 42)
            }
            #expect(merged.withLock { $0 } == [added, seen.objectID])
        },
        StoreConformanceCase("History: batch requests record history") { fixture in
            let stack = try HistoryStack(fixture)
            let coordinator = stack.coordinator
            let context = NSManagedObjectContext.conformance(coordinator)
            context.transactionAuthor = "batch"
            try context.performAndWait {
                let insert = NSBatchInsertRequest(
                    entityName: "Item",
                    objects: [
                        ["name": "x", "priority": 1], ["name": "y", "priority": 2], ["name": "z", "priority": 3],
                    ])
                _ = try context.execute(insert)
                let update = NSBatchUpdateRequest(entityName: "Item")
                update.predicate = NSPredicate(format: "priority >= 2")
                update.propertiesToUpdate = ["note": "updated"]
                _ = try context.execute(update)
                let doomed = NSFetchRequest<NSFetchRequestResult>(entityName: "Item")
                doomed.predicate = NSPredicate(format: "priority == 3")
                _ = try context.execute(NSBatchDeleteRequest(fetchRequest: doomed))
            }
            let transactions = try HistoryStack.transactions(context)
            #expect(transactions.map(\.author) == ["batch", "batch", "batch"])
            #expect(transactions.map { $0.changes?.count ?? 0 } == [3, 2, 1])
            #expect(transactions[0].changes?.allSatisfy { $0.changeType == .insert } == true)
            #expect(transactions[1].changes?.allSatisfy { $0.updatedProperties?.map(\.name) == ["note"] } == true)
            let deletion = try #require(transactions[2].changes?.first)
            #expect(deletion.changeType == .delete)
            #expect(deletion.tombstone?["name"] as? String == "z")
        },
        StoreConformanceCase("History: a batch request of a child context is recorded under the root context's author")
        { fixture in
            // Code sets the author on the context that talks to the store and executes batch requests in a scratch
            // child of it, as CoreDataRepository does; an author set on a context in between is not the one recorded
            // (that library's tests expect this of Apple's framework).
            let stack = try HistoryStack(fixture)
            let coordinator = stack.coordinator
            let context = NSManagedObjectContext.conformance(coordinator)
            context.transactionAuthor = "importer"
            let middle = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            middle.parent = context
            middle.transactionAuthor = "middle"
            let scratch = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            scratch.parent = middle
            try scratch.performAndWait {
                _ = try scratch.execute(
                    NSBatchInsertRequest(entityName: "Item", objects: [["name": "x", "priority": 1]]))
            }
            try middle.performAndWait {
                _ = try middle.execute(
                    NSBatchInsertRequest(entityName: "Item", objects: [["name": "y", "priority": 2]]))
            }
            #expect(try HistoryStack.transactions(context).map(\.author) == ["importer", "importer"])
        },
        StoreConformanceCase("History: two coordinators see each other's transactions in the order they committed") {
            fixture in
            guard fixture.sharesLiveChanges else { return }
            // Two coordinators stand for two processes: they share nothing but the store.
            let stack = try HistoryStack(fixture)
            let coordinators = [stack.coordinator, try stack.reopen()]
            let rounds = 20
            DispatchQueue.concurrentPerform(iterations: 2) { index in
                let context = NSManagedObjectContext.conformance(coordinators[index])
                context.transactionAuthor = "writer \(index)"
                for round in 0..<rounds {
                    do {
                        try context.run {
                            HistoryStack.insertItem("\(index)-\(round)", priority: Int64(round), into: context)
                            try context.save()
                        }
                    } catch {
                        Issue.record("writer \(index) failed: \(error)")
                    }
                }
            }
            for coordinator in coordinators {
                let context = NSManagedObjectContext.conformance(coordinator)
                let transactions = try HistoryStack.transactions(context)
                // Every number once, none skipped, timestamps growing with the numbers.
                #expect(transactions.map(\.transactionNumber) == Array(1...Int64(2 * rounds)))
                #expect(transactions.map(\.timestamp) == transactions.map(\.timestamp).sorted())
                for index in 0..<2 {
                    // Each writer's saves in the order it made them.
                    let names = try context.performAndWait {
                        try transactions.filter { $0.author == "writer \(index)" }.map { transaction in
                            let change = try #require(transaction.changes?.first)
                            return try context.existingObject(with: change.changedObjectID).value(forKey: "name")
                                as? String
                        }
                    }
                    #expect(names == (0..<rounds).map { "\(index)-\($0)" })
                }
            }
            // A token of one process reads the other's later transactions.
            let reader = NSManagedObjectContext.conformance(coordinators[0])
            let token = try #require(coordinators[0].currentPersistentHistoryToken(fromStores: nil))
            let writer = NSManagedObjectContext.conformance(coordinators[1])
            writer.transactionAuthor = "later"
            try writer.run {
                HistoryStack.insertItem("later", priority: 0, into: writer)
                try writer.save()
            }
            let later = try HistoryStack.transactions(reader, after: token)
            #expect(later.map(\.author) == ["later"])
            #expect(later.map(\.transactionNumber) == [Int64(2 * rounds + 1)])
        },
    ]
}
