import Foundation
import OpenCoreData
import StoreConformance
import Testing

@testable import OpenCoreDataPostgreSQL

/// Persistent history on the PostgreSQL store (`NSPersistentHistoryTrackingKey`): every save and batch request
/// records a transaction in Apple's tables in the store's schema, read back with `NSPersistentHistoryChangeRequest`;
/// coordinators stand for processes sharing the database.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, Comment(rawValue: PostgreSQLTestServer.skipMessage)))
struct PostgreSQLHistoryTests {
    static var tracking: [AnyHashable: Any] { [NSPersistentHistoryTrackingKey: true] }

    /// Item (name, kept in tombstones; priority; note), its subentity SpecialItem (level, kept too) and Person (name)
    /// who owns items.
    static let model: NSManagedObjectModel = {
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

    /// A coordinator (standing for a process) with the store at `url`.
    static func coordinator(_ url: URL, options: [AnyHashable: Any]? = tracking) throws -> NSPersistentStoreCoordinator
    {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(
            ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: options)
        return coordinator
    }

    static func history(_ context: NSManagedObjectContext, _ request: NSPersistentHistoryChangeRequest) throws
        -> NSPersistentHistoryResult
    {
        try context.performAndWait { try #require(try context.execute(request) as? NSPersistentHistoryResult) }
    }

    static func transactions(_ context: NSManagedObjectContext, after token: NSPersistentHistoryToken? = nil) throws
        -> [NSPersistentHistoryTransaction]
    {
        try #require(try history(context, .fetchHistory(after: token)).result as? [NSPersistentHistoryTransaction])
    }

    static func insertItem(_ name: String, priority: Int64, into context: NSManagedObjectContext) {
        context.make("Item", ["name": name, "priority": priority])
    }

    static func schemaName(_ url: URL) throws -> String {
        try #require(
            URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "schema" }?.value)
    }

    /// A connection of the test's own, for looking at the tables.
    static func administration() throws -> PostgreSQLConnection {
        try PostgreSQLConnection(PostgreSQLConfiguration(url: try #require(PostgreSQLTestServer.url)))
    }

    @Test func savesRecordTheirTransactionsWithAuthorContextAndChanges() throws {
        let url = try #require(PostgreSQLTestServer.newURL())
        defer { PostgreSQLTestServer.drop(url) }
        let coordinator = try Self.coordinator(url)
        let context = NSManagedObjectContext.conformance(coordinator)
        context.transactionAuthor = "importer"
        context.name = "background"
        let (first, second, special) = try context.performAndWait {
            let first = context.make("Item", ["name": "first", "priority": Int64(1)])
            let second = context.make("Item", ["name": "second", "priority": Int64(2)])
            let special = context.make("SpecialItem", ["name": "special", "level": Int16(7)])
            try context.save()
            first.setValue(Int64(10), forKey: "priority")
            try context.save()
            context.delete(second)
            context.delete(special)
            try context.save()
            return (first.objectID, second.objectID, special.objectID)
        }
        let transactions = try Self.transactions(context)
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
        #expect(transactions.map(\.timestamp) == transactions.map(\.timestamp).sorted())
        guard transactions.count == 3 else { return }
        let inserted = try #require(transactions[0].changes)
        #expect(Set(inserted.map(\.changedObjectID)) == [first, second, special])
        #expect(inserted.allSatisfy { $0.changeType == .insert && $0.updatedProperties == nil })
        #expect(inserted.allSatisfy { $0.transaction === transactions[0] })

        let updated = try #require(transactions[1].changes)
        #expect(updated.map(\.changeType) == [.update])
        #expect(updated.first?.changedObjectID == first)
        #expect(updated.first?.updatedProperties?.map(\.name) == ["priority"])

        let deleted = try #require(transactions[2].changes)
        #expect(deleted.map(\.changeType) == [.delete, .delete])
        let tombstones = Dictionary(
            uniqueKeysWithValues: deleted.map { ($0.changedObjectID, $0.tombstone as? [String: Any] ?? [:]) })
        #expect(tombstones[second]?["name"] as? String == "second")
        #expect(tombstones[second]?["priority"] == nil)
        #expect(tombstones[special]?["name"] as? String == "special")
        #expect(tombstones[special]?["level"] as? Int16 == 7)
    }

    @Test func theTablesAreApplesInTheStoresSchema() throws {
        let url = try #require(PostgreSQLTestServer.newURL())
        defer { PostgreSQLTestServer.drop(url) }
        let coordinator = try Self.coordinator(url)
        let context = NSManagedObjectContext.conformance(coordinator)
        context.transactionAuthor = "importer"
        try context.run {
            let item = context.make("Item", ["name": "first", "priority": Int64(1)])
            try context.save()
            item.setValue("renamed", forKey: "name")
            item.setValue("a note", forKey: "note")
            try context.save()
        }
        let schema = try Self.schemaName(url)
        let admin = try Self.administration()
        let tables = try admin.query(
            """
            SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_name LIKE 'A%' \
            ORDER BY table_name
            """, [schema])
        #expect((0..<tables.rowCount).map { tables.text($0, 0) } == ["ACHANGE", "ATRANSACTION", "ATRANSACTIONSTRING"])
        let columns = try admin.query(
            """
            SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = $1 \
            AND table_name = 'ACHANGE' ORDER BY ordinal_position
            """, [schema])
        #expect(
            (0..<columns.rowCount).map { "\(columns.text($0, 0) ?? "") \(columns.text($0, 1) ?? "")" } == [
                "Z_PK bigint", "Z_ENT integer", "Z_OPT integer", "ZCHANGETYPE integer", "ZENTITY integer",
                "ZENTITYPK bigint", "ZTRANSACTIONID bigint", "ZCOLUMNS bytea", "ZTOMBSTONE0 text", "ZTOMBSTONE1 text",
            ])
        let keys = try admin.query(
            """
            SELECT "Z_ENT", "Z_NAME", "Z_MAX" FROM "\(schema)"."Z_PRIMARYKEY" WHERE "Z_ENT" > 16000 ORDER BY "Z_ENT"
            """)
        let strings = Bundle.main.bundleIdentifier == nil ? "2" : "3"
        #expect(
            (0..<keys.rowCount).map { [keys.text($0, 0), keys.text($0, 1), keys.text($0, 2)] } == [
                ["16001", "CHANGE", "2"], ["16002", "TRANSACTION", "2"], ["16003", "TRANSACTIONSTRING", strings],
            ])
        // Strings are interned; the plain columns stay NULL, as Apple leaves them.
        let first = try admin.query(
            """
            SELECT a."ZNAME", t."ZAUTHOR", t."ZCONTEXTNAMETS", p."ZNAME", t."Z_ENT" FROM "\(schema)"."ATRANSACTION" t \
            JOIN "\(schema)"."ATRANSACTIONSTRING" a ON a."Z_PK" = t."ZAUTHORTS" \
            JOIN "\(schema)"."ATRANSACTIONSTRING" p ON p."Z_PK" = t."ZPROCESSIDTS" WHERE t."Z_PK" = 1
            """)
        #expect(
            (0..<5).map { first.text(0, $0) } == [
                "importer", nil, nil, ProcessInfo.processInfo.processName, "16002",
            ])
        // The update wrote name and note: of Item's properties by name (name, note, owner, priority), bits 0 and 1.
        let changes = try admin.query(
            """
            SELECT "ZCHANGETYPE", "ZENTITY", "ZENTITYPK", "ZTRANSACTIONID", "ZCOLUMNS" \
            FROM "\(schema)"."ACHANGE" ORDER BY "Z_PK"
            """)
        #expect(
            (0..<changes.rowCount).map { row in (0..<5).map { changes.text(row, $0) } } == [
                ["0", "1", "1", "1", nil], ["1", "1", "1", "2", "\\xc0"],
            ])
    }

    @Test func aTokenSurvivesArchivingAndReopeningTheStore() throws {
        let url = try #require(PostgreSQLTestServer.newURL())
        defer { PostgreSQLTestServer.drop(url) }
        var archive = Data()
        do {
            let coordinator = try Self.coordinator(url)
            let context = NSManagedObjectContext.conformance(coordinator)
            try context.run {
                Self.insertItem("before", priority: 1, into: context)
                try context.save()
            }
            let token = try #require(coordinator.currentPersistentHistoryToken(fromStores: nil))
            #expect(token == (try Self.transactions(context).last?.token))
            archive = try NSKeyedArchiver.archivedData(withRootObject: token, requiringSecureCoding: true)
            try coordinator.remove(coordinator.persistentStores[0])
        }
        let coordinator = try Self.coordinator(url)
        let context = NSManagedObjectContext.conformance(coordinator)
        try context.run {
            Self.insertItem("after", priority: 2, into: context)
            try context.save()
        }
        let token = try #require(
            try NSKeyedUnarchiver.unarchivedObject(ofClass: NSPersistentHistoryToken.self, from: archive))
        let after = try Self.transactions(context, after: token)
        #expect(after.map(\.transactionNumber) == [2])
        let names = try context.performAndWait {
            try (after.first?.changes ?? []).map {
                try context.existingObject(with: $0.changedObjectID).value(forKey: "name") as? String
            }
        }
        #expect(names == ["after"])
        #expect(try Self.transactions(context).count == 2)
    }

    @Test func historyIsReadAfterADateATokenOrATransactionAndDeletedBeforeThem() throws {
        let url = try #require(PostgreSQLTestServer.newURL())
        defer { PostgreSQLTestServer.drop(url) }
        let coordinator = try Self.coordinator(url)
        let context = NSManagedObjectContext.conformance(coordinator)
        var middle = Date()
        for name in ["a", "b", "c"] {
            try context.run {
                Self.insertItem(name, priority: 1, into: context)
                try context.save()
            }
            if name == "a" {
                Thread.sleep(forTimeInterval: 0.05)
                middle = Date()
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        let all = try Self.transactions(context)
        #expect(all.map(\.transactionNumber) == [1, 2, 3])
        guard all.count == 3 else { return }
        let afterDate = try #require(
            try Self.history(context, .fetchHistory(after: middle)).result as? [NSPersistentHistoryTransaction])
        #expect(afterDate.map(\.transactionNumber) == [2, 3])
        let afterTransaction = try #require(
            try Self.history(context, .fetchHistory(after: all[0])).result as? [NSPersistentHistoryTransaction])
        #expect(afterTransaction.map(\.transactionNumber) == [2, 3])
        #expect(try Self.transactions(context, after: all[1].token).map(\.transactionNumber) == [3])

        let count = NSPersistentHistoryChangeRequest.fetchHistory(after: nil as NSPersistentHistoryToken?)
        count.resultType = .count
        #expect((try Self.history(context, count).result as? NSNumber)?.intValue == 3)

        let byAuthor = try #require(NSPersistentHistoryTransaction.fetchRequest)
        byAuthor.sortDescriptors = [NSSortDescriptor(key: "transactionNumber", ascending: false)]
        let newestFirst = try #require(
            try Self.history(context, .fetchHistory(withFetch: byAuthor)).result as? [NSPersistentHistoryTransaction])
        #expect(newestFirst.map(\.transactionNumber) == [3, 2, 1])

        // Deleting up to the second transaction expires the first one's token.
        let delete = NSPersistentHistoryChangeRequest.deleteHistory(before: all[1].token)
        delete.resultType = .count
        #expect((try Self.history(context, delete).result as? NSNumber)?.intValue == 2)
        #expect(try Self.transactions(context).map(\.transactionNumber) == [3])
        #expect {
            _ = try Self.transactions(context, after: all[0].token)
        } throws: { error in
            let error = error as NSError
            return error.domain == NSCocoaErrorDomain && error.code == NSPersistentHistoryTokenExpiredError
        }
        _ = try Self.history(context, .deleteHistory(before: Date.distantFuture))
        #expect(try Self.transactions(context).isEmpty)
        // Numbers keep growing after everything was deleted.
        try context.run {
            Self.insertItem("d", priority: 1, into: context)
            try context.save()
        }
        #expect(try Self.transactions(context).map(\.transactionNumber) == [4])
    }

    @Test func batchRequestsRecordHistory() throws {
        let url = try #require(PostgreSQLTestServer.newURL())
        defer { PostgreSQLTestServer.drop(url) }
        let coordinator = try Self.coordinator(url)
        let context = NSManagedObjectContext.conformance(coordinator)
        context.transactionAuthor = "batch"
        try context.run {
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
        #expect(transactions.first?.changes?.allSatisfy { $0.changeType == .insert } == true)
        #expect(
            transactions.dropFirst().first?.changes?.allSatisfy { $0.updatedProperties?.map(\.name) == ["note"] }
                == true)
        let deletion = try #require(transactions.last?.changes?.first)
        #expect(deletion.changeType == .delete)
        #expect(deletion.tombstone?["name"] as? String == "z")
    }

    @Test func twoProcessesSeeEachOthersTransactionsInTheOrderTheyCommitted() throws {
        let url = try #require(PostgreSQLTestServer.newURL())
        defer { PostgreSQLTestServer.drop(url) }
        // Two coordinators stand for two processes: they share nothing but the server.
        let coordinators = [try Self.coordinator(url), try Self.coordinator(url)]
        let rounds = 20
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            let context = NSManagedObjectContext.conformance(coordinators[index])
            context.transactionAuthor = "writer \(index)"
            for round in 0..<rounds {
                do {
                    try context.run {
                        Self.insertItem("\(index)-\(round)", priority: Int64(round), into: context)
                        try context.save()
                    }
                } catch {
                    Issue.record("writer \(index) failed: \(error)")
                }
            }
        }
        for coordinator in coordinators {
            let transactions = try Self.transactions(NSManagedObjectContext.conformance(coordinator))
            // Every number once, none skipped, timestamps growing with the numbers.
            #expect(transactions.map(\.transactionNumber) == Array(1...Int64(2 * rounds)))
            #expect(transactions.map(\.timestamp) == transactions.map(\.timestamp).sorted())
            let context = NSManagedObjectContext.conformance(coordinator)
            for index in 0..<2 {
                // Each writer's saves in the order it made them.
                let names = try context.performAndWait {
                    try transactions.filter { $0.author == "writer \(index)" }.map { transaction in
                        let change = try #require(transaction.changes?.first)
                        return try context.existingObject(with: change.changedObjectID).value(forKey: "name") as? String
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
            Self.insertItem("later", priority: 0, into: writer)
            try writer.save()
        }
        #expect(try Self.transactions(reader, after: token).map(\.author) == ["later"])
        #expect(try Self.transactions(reader, after: token).map(\.transactionNumber) == [Int64(2 * rounds + 1)])
    }

    @Test func aSaveTheServerRefusesRecordsNoTransaction() throws {
        let url = try #require(PostgreSQLTestServer.newURL())
        defer { PostgreSQLTestServer.drop(url) }
        let coordinator = try Self.coordinator(url)
        let context = NSManagedObjectContext.conformance(coordinator)
        try context.run {
            Self.insertItem("kept", priority: 1, into: context)
            try context.save()
        }
        let before = try #require(coordinator.currentPersistentHistoryToken(fromStores: nil))
        // A table taken away behind the store's back: the save's insert into it fails on the server.
        try Self.administration().execute("DROP TABLE \"\(try Self.schemaName(url))\".\"ZPERSON\"")
        var person: NSManagedObject?
        try context.run {
            Self.insertItem("refused", priority: 2, into: context)
            person = context.make("Person", ["name": "refused"])
            #expect(throws: (any Error).self) { try context.save() }
        }
        #expect(coordinator.currentPersistentHistoryToken(fromStores: nil) == before)
        #expect(try Self.transactions(context, after: before).isEmpty)
        // The next save that the server takes is the next number: the refused one left no gap.
        try context.run {
            context.delete(try #require(person))
            try context.save()
        }
        let after = try Self.transactions(context, after: before)
        #expect(after.map(\.transactionNumber) == [2])
        #expect(after.first?.changes?.map(\.changeType) == [.insert])
    }

    @Test func aRemoteChangeNotificationCarriesTheHistoryToken() throws {
        let url = try #require(PostgreSQLTestServer.newURL())
        defer { PostgreSQLTestServer.drop(url) }
        let writer = try Self.coordinator(url)
        let watcher = NSPersistentStoreCoordinator(managedObjectModel: Self.model)
        let store = try watcher.addPersistentStore(
            ofType: PostgreSQLStoreType, configurationName: nil, at: url,
            options: [
                NSPersistentHistoryTrackingKey: true, NSPersistentStoreRemoteChangeNotificationPostOptionKey: true,
            ])
        defer { try? watcher.remove(store) }
        let posted = DispatchSemaphore(value: 0)
        let tokens = LockedValue<[NSPersistentHistoryToken]>([])
        let observer = NotificationCenter.default.addObserver(
            forName: .NSPersistentStoreRemoteChange, object: watcher, queue: nil
        ) { note in
            if let token = note.userInfo?[NSPersistentHistoryTokenKey] as? NSPersistentHistoryToken {
                tokens.withLock { $0.append(token) }
            }
            posted.signal()
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        let context = NSManagedObjectContext.conformance(writer)
        for name in ["one", "two"] {
            try context.run {
                Self.insertItem(name, priority: 1, into: context)
                try context.save()
            }
            #expect(posted.wait(timeout: .now() + 10) == .success)
        }
        let seen = tokens.withLock { $0 }
        let reader = NSManagedObjectContext.conformance(watcher)
        #expect(seen.count == 2)
        guard seen.count == 2 else { return }
        #expect(seen[1] == watcher.currentPersistentHistoryToken(fromStores: nil))
        // The first notification's token reads exactly the second transaction.
        #expect(try Self.transactions(reader, after: seen[0]).map(\.transactionNumber) == [2])
    }

    @Test func historyIsAddedToASchemaMadeWithoutItAndKeptFromWritersWithoutTheOption() throws {
        let url = try #require(PostgreSQLTestServer.newURL())
        defer { PostgreSQLTestServer.drop(url) }
        do {
            let plain = try Self.coordinator(url, options: nil)
            let context = NSManagedObjectContext.conformance(plain)
            try context.run {
                Self.insertItem("untracked", priority: 1, into: context)
                try context.save()
            }
            #expect(plain.currentPersistentHistoryToken(fromStores: nil) == nil)
            try plain.remove(plain.persistentStores[0])
        }
        // With the option, the tables are added; what was saved before has no history.
        let tracked = try Self.coordinator(url)
        let context = NSManagedObjectContext.conformance(tracked)
        #expect(try Self.transactions(context).isEmpty)
        try context.run {
            Self.insertItem("tracked", priority: 2, into: context)
            try context.save()
        }
        #expect(try Self.transactions(context).map(\.transactionNumber) == [1])
        // Without it, a store whose history holds transactions opens read-only, so that no save escapes the history.
        let plain = try Self.coordinator(url, options: nil)
        #expect(plain.persistentStores.first?.isReadOnly == true)
        let refused = NSManagedObjectContext.conformance(plain)
        let error = refused.performAndWait { () -> NSError? in
            Self.insertItem("escaped", priority: 3, into: refused)
            do {
                try refused.save()
                return nil
            } catch {
                return error as NSError
            }
        }
        #expect(error?.domain == NSCocoaErrorDomain)
        #expect(error?.code == NSPersistentStoreSaveError)
        #expect(try context.performAndWait { try context.values("Item", "name") } == ["tracked", "untracked"])
    }

    @Test func aStoreWithoutHistoryRefusesHistoryRequests() throws {
        let url = try #require(PostgreSQLTestServer.newURL())
        defer { PostgreSQLTestServer.drop(url) }
        let coordinator = try Self.coordinator(url, options: nil)
        #expect(coordinator.currentPersistentHistoryToken(fromStores: nil) == nil)
        #expect {
            _ = try Self.transactions(NSManagedObjectContext.conformance(coordinator))
        } throws: { error in
            let error = error as NSError
            return error.domain == NSCocoaErrorDomain && error.code == NSPersistentStoreUnsupportedRequestTypeError
        }
    }
}
