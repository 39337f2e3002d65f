import Foundation
import OpenCoreData
import Testing

/// Persistent history (`NSPersistentHistoryTrackingKey`): every save and batch request records a transaction in
/// Apple's tables (ATRANSACTION, ACHANGE, ATRANSACTIONSTRING), read back with `NSPersistentHistoryChangeRequest`.
@Suite struct PersistentHistoryTests {
    static var tracking: [AnyHashable: Any] { [NSPersistentHistoryTrackingKey: true] }

    /// Item (name, kept in tombstones; priority; note), its subentity SpecialItem (level, kept too) and Person (name)
    /// who owns items.
    static func model() -> NSManagedObjectModel {
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
    }

    static func history(
        _ context: NSManagedObjectContext, _ request: NSPersistentHistoryChangeRequest
    ) throws -> NSPersistentHistoryResult {
        try context.performAndWait { try #require(try context.execute(request) as? NSPersistentHistoryResult) }
    }

    static func transactions(_ context: NSManagedObjectContext, after token: NSPersistentHistoryToken? = nil) throws
        -> [NSPersistentHistoryTransaction]
    {
        try #require(
            try history(context, .fetchHistory(after: token)).result as? [NSPersistentHistoryTransaction])
    }

    static func insertItem(_ name: String, priority: Int64, into context: NSManagedObjectContext) -> NSManagedObject {
        let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
        item.setValue(name, forKey: "name")
        item.setValue(priority, forKey: "priority")
        return item
    }

    static func item(_ name: String, in context: NSManagedObjectContext) throws -> NSManagedObject {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
        request.predicate = NSPredicate(format: "name == %@", name)
        return try #require(try context.fetch(request).first)
    }

    @Test func savesRecordTheirTransactionsWithAuthorContextAndChanges() throws {
        let directory = SQLiteTestDirectory()
        let coordinator = try SQLiteStack.coordinator(Self.model(), at: directory.store(), options: Self.tracking)
        let context = SQLiteStack.context(coordinator)
        context.transactionAuthor = "importer"
        context.name = "background"
        let (first, second, special) = try context.performAndWait {
            let first = Self.insertItem("first", priority: 1, into: context)
            let second = Self.insertItem("second", priority: 2, into: context)
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
        let transactions = try Self.transactions(context)
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
    }

    @Test func aContainerTurnsHistoryOnThroughItsStoreDescription() throws {
        let directory = SQLiteTestDirectory()
        let container = NSPersistentContainer(name: "History", managedObjectModel: Self.model())
        let description = NSPersistentStoreDescription(url: directory.store())
        description.setOption(true as NSNumber, forKey: NSPersistentHistoryTrackingKey)
        description.setOption(true as NSNumber, forKey: NSPersistentStoreRemoteChangeNotificationPostOptionKey)
        container.persistentStoreDescriptions = [description]
        var loadError: Error?
        container.loadPersistentStores { _, error in loadError = error }
        #expect(loadError == nil)
        let context = container.newBackgroundContext()
        context.transactionAuthor = "container"
        try context.performAndWait {
            _ = Self.insertItem("contained", priority: 1, into: context)
            try context.save()
        }
        #expect(try Self.transactions(context).map(\.author) == ["container"])
        try SQLiteStack.close(container.persistentStoreCoordinator)
    }

    @Test func theTablesAreApplesAndCountTheirKeysInZPrimaryKey() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let coordinator = try SQLiteStack.coordinator(Self.model(), at: url, options: Self.tracking)
        let context = SQLiteStack.context(coordinator)
        context.transactionAuthor = "importer"
        try context.performAndWait {
            let item = Self.insertItem("first", priority: 1, into: context)
            try context.save()
            item.setValue("renamed", forKey: "name")
            item.setValue("a note", forKey: "note")
            try context.save()
        }
        try SQLiteStack.close(coordinator)
        // Apple's CREATE statements, as the corpus store written with history on has them (bar the tombstone
        // columns this model's preserved attributes add to ACHANGE).
        let corpus = try RawSQLite.corpusSchema(
            SQLiteCorpus.root.appendingPathComponent(
                "stores/alemar11__CoreDataPlus/SampleModel2/Fixtures/SampleModel2_V1.schema.txt"))
        let written = try RawSQLite.schema(url)
        let history = corpus.filter { $0.contains(" ATRANSACTION") || $0.contains(" ACHANGE") }
        #expect(history.count == 11)
        for statement in history where !statement.hasPrefix("CREATE TABLE ACHANGE") {
            #expect(written.contains(statement))
        }
        #expect(
            written.contains(
                "CREATE TABLE ACHANGE (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCHANGETYPE INTEGER, "
                    + "ZENTITY INTEGER, ZENTITYPK INTEGER, ZTRANSACTIONID INTEGER, ZCOLUMNS BLOB, ZTOMBSTONE0 BLOB, "
                    + "ZTOMBSTONE1 BLOB)"))
        // Author, process name and bundle ID (the process name again when there is no bundle).
        let strings = try #require(try RawSQLite.query(url, "SELECT COUNT(*) FROM ATRANSACTIONSTRING").first?[0])
        #expect(strings == .integer(Bundle.main.bundleIdentifier == nil ? 2 : 3))
        #expect(
            try RawSQLite.query(url, "SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT > 16000")
                == [
                    [.integer(16001), .text("CHANGE"), .integer(0), .integer(2)],
                    [.integer(16002), .text("TRANSACTION"), .integer(0), .integer(2)],
                    [.integer(16003), .text("TRANSACTIONSTRING"), .integer(0), strings],
                ])
        // Strings are interned; the plain columns stay NULL, as Apple leaves them.
        #expect(
            try RawSQLite.query(
                url,
                "SELECT a.ZNAME, t.ZAUTHOR, t.ZCONTEXTNAMETS, p.ZNAME, t.Z_ENT, t.Z_OPT FROM ATRANSACTION t "
                    + "JOIN ATRANSACTIONSTRING a ON a.Z_PK = t.ZAUTHORTS JOIN ATRANSACTIONSTRING p "
                    + "ON p.Z_PK = t.ZPROCESSIDTS WHERE t.Z_PK = 1")
                == [
                    [
                        .text("importer"), .null, .null, .text(ProcessInfo.processInfo.processName),
                        .integer(16002), .null,
                    ]
                ])
        // The update wrote name and note: of Item's properties by name (name, note, owner, priority), bits 0 and 1.
        #expect(
            try RawSQLite.query(
                url,
                "SELECT Z_ENT, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID, ZCOLUMNS FROM ACHANGE ORDER BY Z_PK"
            ) == [
                [.integer(16001), .integer(0), .integer(1), .integer(1), .integer(1), .null],
                [.integer(16001), .integer(1), .integer(1), .integer(1), .integer(2), .blob([0b1100_0000])],
            ])
    }

    @Test func aTokenSurvivesArchivingAndReopeningTheStore() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        var archive = Data()
        do {
            let coordinator = try SQLiteStack.coordinator(Self.model(), at: url, options: Self.tracking)
            let context = SQLiteStack.context(coordinator)
            try context.performAndWait {
                _ = Self.insertItem("before", priority: 1, into: context)
                try context.save()
            }
            let token = try #require(coordinator.currentPersistentHistoryToken(fromStores: nil))
            #expect(token == (try Self.transactions(context).last?.token))
            archive = try NSKeyedArchiver.archivedData(withRootObject: token, requiringSecureCoding: true)
            try SQLiteStack.close(coordinator)
        }
        let coordinator = try SQLiteStack.coordinator(Self.model(), at: url, options: Self.tracking)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            _ = Self.insertItem("after", priority: 2, into: context)
            try context.save()
        }
        let token = try #require(
            try NSKeyedUnarchiver.unarchivedObject(ofClass: NSPersistentHistoryToken.self, from: archive))
        let after = try Self.transactions(context, after: token)
        #expect(after.count == 1)
        let names = try context.performAndWait {
            try after[0].changes!.map { try context.existingObject(with: $0.changedObjectID).value(forKey: "name") }
        }
        #expect(names as? [String] == ["after"])
        #expect(try Self.transactions(context).count == 2)
    }

    @Test func historyIsReadAfterADateATokenOrATransaction() throws {
        let directory = SQLiteTestDirectory()
        let coordinator = try SQLiteStack.coordinator(Self.model(), at: directory.store(), options: Self.tracking)
        let context = SQLiteStack.context(coordinator)
        var middle = Date()
        for (index, name) in ["a", "b", "c"].enumerated() {
            if index == 1 {
                Thread.sleep(forTimeInterval: 0.01)
                middle = Date()
            }
            try context.performAndWait {
                _ = Self.insertItem(name, priority: Int64(index), into: context)
                try context.save()
            }
        }
        let all = try Self.transactions(context)
        #expect(all.count == 3)
        let afterDate = try #require(
            try Self.history(context, .fetchHistory(after: middle)).result as? [NSPersistentHistoryTransaction])
        #expect(afterDate.map(\.transactionNumber) == [2, 3])
        let afterTransaction = try #require(
            try Self.history(context, .fetchHistory(after: all[1])).result as? [NSPersistentHistoryTransaction])
        #expect(afterTransaction.map(\.transactionNumber) == [3])
        #expect(try Self.transactions(context, after: all[2].token).isEmpty)
        #expect(NSPersistentHistoryChangeRequest.fetchHistory(after: all[1]).token == all[1].token)
    }

    @Test func resultTypesShapeTheResult() throws {
        let directory = SQLiteTestDirectory()
        let coordinator = try SQLiteStack.coordinator(Self.model(), at: directory.store(), options: Self.tracking)
        let context = SQLiteStack.context(coordinator)
        let ids = try context.performAndWait {
            let one = Self.insertItem("one", priority: 1, into: context)
            let two = Self.insertItem("two", priority: 2, into: context)
            try context.save()
            one.setValue(Int64(5), forKey: "priority")
            try context.save()
            return [one.objectID, two.objectID]
        }
        func result(_ type: NSPersistentHistoryResultType) throws -> Any? {
            let request = NSPersistentHistoryChangeRequest.fetchHistory(after: nil as NSPersistentHistoryToken?)
            request.resultType = type
            let result = try Self.history(context, request)
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
    }

    @Test func aFetchRequestSelectsTransactionsOrChanges() throws {
        let directory = SQLiteTestDirectory()
        let coordinator = try SQLiteStack.coordinator(Self.model(), at: directory.store(), options: Self.tracking)
        let importer = SQLiteStack.context(coordinator)
        importer.transactionAuthor = "importer"
        let user = SQLiteStack.context(coordinator)
        user.transactionAuthor = "user"
        let imported = try importer.performAndWait {
            let item = Self.insertItem("imported", priority: 1, into: importer)
            _ = Self.insertItem("other", priority: 2, into: importer)
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
            try Self.history(user, .fetchHistory(withFetch: byAuthor)).result as? [NSPersistentHistoryTransaction])
        #expect(fromUser.map(\.author) == ["user"])

        let ofObject = try #require(NSPersistentHistoryChange.fetchRequest)
        ofObject.predicate = NSPredicate(format: "changedObjectID == %@", imported)
        let touching = try #require(
            try Self.history(user, .fetchHistory(withFetch: ofObject)).result as? [NSPersistentHistoryTransaction])
        #expect(touching.map { $0.changes?.map(\.changeType) ?? [] } == [[.insert], [.update]])
        #expect(touching.map(\.author) == ["importer", "user"])

        let sorted = try #require(NSPersistentHistoryTransaction.fetchRequest)
        sorted.sortDescriptors = [NSSortDescriptor(key: "transactionNumber", ascending: false)]
        let newestFirst = try #require(
            try Self.history(user, .fetchHistory(withFetch: sorted)).result as? [NSPersistentHistoryTransaction])
        #expect(newestFirst.map(\.transactionNumber) == [2, 1])
    }

    @Test func deletingHistoryExpiresOlderTokens() throws {
        let directory = SQLiteTestDirectory()
        let coordinator = try SQLiteStack.coordinator(Self.model(), at: directory.store(), options: Self.tracking)
        let context = SQLiteStack.context(coordinator)
        for name in ["a", "b", "c"] {
            try context.performAndWait {
                _ = Self.insertItem(name, priority: 1, into: context)
                try context.save()
            }
        }
        let all = try Self.transactions(context)
        let request = NSPersistentHistoryChangeRequest.deleteHistory(before: all[1].token)
        request.resultType = .count
        #expect((try Self.history(context, request).result as? NSNumber)?.intValue == 2)
        #expect(try Self.transactions(context).map(\.transactionNumber) == [3])
        #expect(try Self.transactions(context, after: all[1].token).map(\.transactionNumber) == [3])
        #expect {
            _ = try Self.transactions(context, after: all[0].token)
        } throws: { error in
            let error = error as NSError
            return error.domain == NSCocoaErrorDomain && error.code == NSPersistentHistoryTokenExpiredError
        }
        _ = try Self.history(context, .deleteHistory(before: nil as NSPersistentHistoryToken?))
        #expect(try Self.transactions(context).count == 1)
        _ = try Self.history(context, .deleteHistory(before: Date()))
        #expect(try Self.transactions(context).isEmpty)
        // Numbers keep growing after everything was deleted.
        try context.performAndWait {
            _ = Self.insertItem("d", priority: 1, into: context)
            try context.save()
        }
        #expect(try Self.transactions(context).map(\.transactionNumber) == [4])
    }

    @Test func aStoreWithoutHistoryRefusesHistoryRequests() throws {
        let directory = SQLiteTestDirectory()
        for (type, url) in [(NSSQLiteStoreType, directory.store()), (NSInMemoryStoreType, nil)] {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.model())
            try coordinator.addPersistentStore(ofType: type, configurationName: nil, at: url, options: nil)
            let context = SQLiteStack.context(coordinator)
            #expect(coordinator.currentPersistentHistoryToken(fromStores: nil) == nil)
            #expect {
                _ = try Self.history(context, .fetchHistory(after: nil as NSPersistentHistoryToken?))
            } throws: { error in
                let error = error as NSError
                return error.domain == NSCocoaErrorDomain && error.code == NSPersistentStoreUnsupportedRequestTypeError
                    && error.localizedDescription.contains("NSPersistentHistoryTrackingKey")
            }
        }
    }

    @Test func aTokenOfAnotherStoreIsRefused() throws {
        let directory = SQLiteTestDirectory()
        let one = try SQLiteStack.coordinator(Self.model(), at: directory.store("One.sqlite"), options: Self.tracking)
        let two = try SQLiteStack.coordinator(Self.model(), at: directory.store("Two.sqlite"), options: Self.tracking)
        for coordinator in [one, two] {
            let context = SQLiteStack.context(coordinator)
            try context.performAndWait {
                _ = Self.insertItem("x", priority: 1, into: context)
                try context.save()
            }
        }
        let foreign = try #require(one.currentPersistentHistoryToken(fromStores: nil))
        #expect {
            _ = try Self.transactions(SQLiteStack.context(two), after: foreign)
        } throws: { error in
            let error = error as NSError
            return error.domain == NSCocoaErrorDomain && error.code == NSPersistentStoreOperationError
                && error.localizedDescription.contains("belongs to another store")
        }
    }

    @Test func aTransactionsNotificationMergesIntoAnotherContext() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let model = Self.model()
        let viewCoordinator = try SQLiteStack.coordinator(model, at: url, options: Self.tracking)
        let view = SQLiteStack.context(viewCoordinator)
        let seen = try view.performAndWait {
            let item = Self.insertItem("shown", priority: 1, into: view)
            try view.save()
            _ = item.value(forKey: "priority")
            return item
        }
        let token = viewCoordinator.currentPersistentHistoryToken(fromStores: nil)
        // Another coordinator (as another process would) changes the item, adds one and deletes nothing else.
        let otherCoordinator = try SQLiteStack.coordinator(model, at: url, options: Self.tracking)
        let other = SQLiteStack.context(otherCoordinator)
        let added = try other.performAndWait {
            try Self.item("shown", in: other).setValue(Int64(42), forKey: "priority")
            let added = Self.insertItem("added", priority: 2, into: other)
            try other.save()
            return added.objectID
        }
        let transactions = try Self.transactions(view, after: token)
        #expect(transactions.count == 1)
        guard transactions.count == 1 else { return }
        let note = transactions[0].objectIDNotification()
        #expect((note.userInfo?[NSInsertedObjectsKey] as? Set<NSManagedObjectID>) == [added])
        #expect((note.userInfo?[NSUpdatedObjectsKey] as? Set<NSManagedObjectID>) == [seen.objectID])
        let merged = Locked<Set<NSManagedObjectID>>([])
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
    }

    @Test func batchRequestsRecordHistory() throws {
        let directory = SQLiteTestDirectory()
        let coordinator = try SQLiteStack.coordinator(Self.model(), at: directory.store(), options: Self.tracking)
        let context = SQLiteStack.context(coordinator)
        context.transactionAuthor = "batch"
        try context.performAndWait {
            let insert = NSBatchInsertRequest(
                entityName: "Item",
                objects: [["name": "x", "priority": 1], ["name": "y", "priority": 2], ["name": "z", "priority": 3]])
            _ = try context.execute(insert)
            let update = NSBatchUpdateRequest(entityName: "Item")
            update.predicate = NSPredicate(format: "priority >= 2")
            update.propertiesToUpdate = ["note": "updated"]
            _ = try context.execute(update)
            let doomed = NSFetchRequest<NSFetchRequestResult>(entityName: "Item")
            doomed.predicate = NSPredicate(format: "priority == 3")
            _ = try context.execute(NSBatchDeleteRequest(fetchRequest: doomed))
        }
        let transactions = try Self.transactions(context)
        #expect(transactions.map(\.author) == ["batch", "batch", "batch"])
        #expect(transactions.map { $0.changes?.count ?? 0 } == [3, 2, 1])
        #expect(transactions[0].changes?.allSatisfy { $0.changeType == .insert } == true)
        #expect(transactions[1].changes?.allSatisfy { $0.updatedProperties?.map(\.name) == ["note"] } == true)
        let deletion = try #require(transactions[2].changes?.first)
        #expect(deletion.changeType == .delete)
        #expect(deletion.tombstone?["name"] as? String == "z")
    }

    @Test func aBatchRequestOfAChildContextIsRecordedUnderTheRootContextsAuthor() throws {
        // Code sets the author on the context that talks to the store and executes batch requests in a scratch
        // child of it, as CoreDataRepository does; an author set on a context in between is not the one recorded
        // (that library's tests expect this of Apple's framework).
        let directory = SQLiteTestDirectory()
        let coordinator = try SQLiteStack.coordinator(Self.model(), at: directory.store(), options: Self.tracking)
        let context = SQLiteStack.context(coordinator)
        context.transactionAuthor = "importer"
        let middle = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        middle.parent = context
        middle.transactionAuthor = "middle"
        let scratch = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        scratch.parent = middle
        try scratch.performAndWait {
            _ = try scratch.execute(NSBatchInsertRequest(entityName: "Item", objects: [["name": "x", "priority": 1]]))
        }
        try middle.performAndWait {
            _ = try middle.execute(NSBatchInsertRequest(entityName: "Item", objects: [["name": "y", "priority": 2]]))
        }
        #expect(try Self.transactions(context).map(\.author) == ["importer", "importer"])
    }

    @Test func anAppleStoresHistoryIsReadAndKept() throws {
        let path = "stores/alemar11__CoreDataPlus/SampleModel2/Fixtures/SampleModel2_V2.sqlite"
        let directory = SQLiteTestDirectory()
        let url = try directory.copyCorpusStore(path)
        let before = try RawSQLite.query(url, "SELECT * FROM ACHANGE ORDER BY Z_PK")
        let model = try SQLiteCorpusModels.storeModel(for: path)
        let coordinator = try SQLiteStack.coordinator(model, at: url, options: Self.tracking)
        let context = SQLiteStack.context(coordinator)
        let apple = try Self.transactions(context)
        #expect(apple.count == 1)
        let transaction = try #require(apple.first)
        #expect(transaction.bundleID == "com.apple.dt.xctest.tool")
        #expect(transaction.processID == "xctest")
        #expect(transaction.author == nil)
        #expect(transaction.timestamp.timeIntervalSinceReferenceDate == 737_057_651.681977)
        #expect(transaction.changes?.count == 126)
        #expect(transaction.changes?.allSatisfy { $0.changeType == .insert } == true)
        let pages = try context.performAndWait {
            try context.count(for: NSFetchRequest<NSFetchRequestResult>(entityName: "Page"))
        }
        #expect(transaction.changes?.filter { $0.changedObjectID.entity.name == "Page" }.count == pages)
        try context.performAndWait {
            let author = NSEntityDescription.insertNewObject(forEntityName: "Author", into: context)
            author.setValue("new author", forKey: "alias")
            author.setValue(Int16(40), forKey: "age")
            try context.save()
        }
        #expect(try Self.transactions(context, after: transaction.token).count == 1)
        #expect(try RawSQLite.query(url, "SELECT * FROM ACHANGE WHERE Z_PK <= 126 ORDER BY Z_PK") == before)
    }

    @Test func anAppleStoreWithHistoryOpenedWithoutTheOptionIsReadOnly() throws {
        let path = "stores/alemar11__CoreDataPlus/SampleModel2/Fixtures/SampleModel2_V2.sqlite"
        let directory = SQLiteTestDirectory()
        let url = try directory.copyCorpusStore(path)
        let coordinator = try SQLiteStack.coordinator(try SQLiteCorpusModels.storeModel(for: path), at: url)
        #expect(coordinator.persistentStores.first?.isReadOnly == true)
        let context = SQLiteStack.context(coordinator)
        let error = context.performAndWait { () -> NSError? in
            let author = NSEntityDescription.insertNewObject(forEntityName: "Author", into: context)
            author.setValue("new author", forKey: "alias")
            author.setValue(Int16(40), forKey: "age")
            do {
                try context.save()
                return nil
            } catch {
                return error as NSError
            }
        }
        #expect(error?.domain == NSCocoaErrorDomain)
        #expect(error?.code == NSPersistentStoreSaveError)
        #expect(error?.localizedDescription.contains("NSPersistentHistoryTrackingKey") == true)
        #expect(try RawSQLite.query(url, "SELECT COUNT(*) FROM ATRANSACTION") == [[.integer(1)]])
    }

    @Test func aStoreWhoseHistoryWasAllDeletedOpensWritableWithoutTheOption() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        do {
            let coordinator = try SQLiteStack.coordinator(Self.model(), at: url, options: Self.tracking)
            let context = SQLiteStack.context(coordinator)
            try context.performAndWait {
                _ = Self.insertItem("tracked", priority: 1, into: context)
                try context.save()
            }
            try SQLiteStack.close(coordinator)
        }
        do {
            // History left: read-only.
            let coordinator = try SQLiteStack.coordinator(Self.model(), at: url)
            #expect(coordinator.persistentStores.first?.isReadOnly == true)
            try SQLiteStack.close(coordinator)
        }
        do {
            let coordinator = try SQLiteStack.coordinator(Self.model(), at: url, options: Self.tracking)
            _ = try Self.history(SQLiteStack.context(coordinator), .deleteHistory(before: .distantFuture))
            try SQLiteStack.close(coordinator)
        }
        let coordinator = try SQLiteStack.coordinator(Self.model(), at: url)
        #expect(coordinator.persistentStores.first?.isReadOnly == false)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            _ = Self.insertItem("untracked", priority: 2, into: context)
            try context.save()
        }
        #expect(try RawSQLite.query(url, "SELECT COUNT(*) FROM ZITEM") == [[.integer(2)]])
    }

    @Test func historyTablesOfANewerFormatStayReadableAndIntact() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        do {
            let coordinator = try SQLiteStack.coordinator(Self.model(), at: url, options: Self.tracking)
            let context = SQLiteStack.context(coordinator)
            try context.performAndWait {
                _ = Self.insertItem("old", priority: 1, into: context)
                try context.save()
            }
            try SQLiteStack.close(coordinator)
        }
        // A newer OS's columns and a change of a kind this release does not know.
        try RawSQLite.execute(url, "ALTER TABLE ATRANSACTION ADD COLUMN ZFUTURE VARCHAR")
        try RawSQLite.execute(url, "ALTER TABLE ACHANGE ADD COLUMN ZFUTURE INTEGER")
        try RawSQLite.execute(url, "UPDATE ATRANSACTION SET ZFUTURE = 'kept'")
        try RawSQLite.execute(
            url,
            "INSERT INTO ACHANGE (Z_PK, Z_ENT, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID, ZFUTURE) "
                + "VALUES (2, 16001, 9, 1, 1, 1, 5)")
        try RawSQLite.execute(url, "UPDATE Z_PRIMARYKEY SET Z_MAX = 2 WHERE Z_ENT = 16001")
        let coordinator = try SQLiteStack.coordinator(Self.model(), at: url, options: Self.tracking)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            _ = Self.insertItem("new", priority: 2, into: context)
            try context.save()
        }
        let transactions = try Self.transactions(context)
        #expect(transactions.map { $0.changes?.map(\.changeType) ?? [] } == [[.insert], [.insert]])
        #expect(
            try RawSQLite.query(url, "SELECT ZFUTURE FROM ATRANSACTION ORDER BY Z_PK") == [[.text("kept")], [.null]])
        #expect(
            try RawSQLite.query(url, "SELECT Z_PK, ZCHANGETYPE FROM ACHANGE WHERE ZFUTURE = 5") == [
                [.integer(2), .integer(9)]
            ])
    }
}
