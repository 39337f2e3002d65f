import Foundation
import OpenCoreData
import StoreConformance
import Testing

@testable import OpenCoreDataPostgreSQL

/// Persistent history on the PostgreSQL store (`NSPersistentHistoryTrackingKey`): the conformance suite's history
/// cases, and what is the PostgreSQL store's own: Apple's tables in the store's schema, a save the server refuses,
/// the token in remote change notifications, tables added to a schema made without them.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, Comment(rawValue: PostgreSQLTestServer.skipMessage)))
struct PostgreSQLHistoryTests {
    /// Every persistent history case of the conformance suite, each in a schema of its own.
    @Test(arguments: StoreConformanceCase.persistentHistory)
    func conformance(_ testCase: StoreConformanceCase) throws {
        try testCase.run(PostgreSQLTestServer.fixture)
    }

    static var tracking: [AnyHashable: Any] { HistoryStack.tracking }

    /// A coordinator (standing for a process) with the store at `url`.
    static func coordinator(_ url: URL, options: [AnyHashable: Any]? = tracking) throws -> NSPersistentStoreCoordinator
    {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: HistoryStack.model)
        try coordinator.addPersistentStore(
            ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: options)
        return coordinator
    }

    static func transactions(_ context: NSManagedObjectContext, after token: NSPersistentHistoryToken? = nil) throws
        -> [NSPersistentHistoryTransaction]
    {
        try HistoryStack.transactions(context, after: token)
    }

    static func insertItem(_ name: String, priority: Int64, into context: NSManagedObjectContext) {
        HistoryStack.insertItem(name, priority: priority, into: context)
    }

    static func schemaName(_ url: URL) throws -> String {
        try #require(
            URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "schema" }?.value)
    }

    /// A connection of the test's own, for looking at the tables.
    static func administration() throws -> PostgreSQLConnection {
        try PostgreSQLConnection(PostgreSQLConfiguration(url: try #require(PostgreSQLTestServer.url)))
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
        let watcher = NSPersistentStoreCoordinator(managedObjectModel: HistoryStack.model)
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

    /// Where the child processes find the shared store: they inherit the test run's environment.
    static let storeVariable = "OPENCOREDATA_POSTGRES_HISTORY_STORE"
    static let savesPerProcess = 25

    @Test func fourProcessesTransactionsAreReadInCommitOrderWhileTheyWrite() async throws {
        let url = try #require(PostgreSQLTestServer.newURL())
        defer { PostgreSQLTestServer.drop(url) }
        let coordinator = try Self.coordinator(url)
        setenv(Self.storeVariable, url.absoluteString, 1)
        // A reader follows the history while the processes write, each time after the last transaction it read: a
        // number committed after a higher one would be skipped for good.
        let reader = NSManagedObjectContext.conformance(coordinator)
        let stop = LockedValue(false)
        let seen = LockedValue<[Int64]>([])
        let finished = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            var token: NSPersistentHistoryToken?
            var last = false
            while !last {
                last = stop.withLock { $0 }
                if let read = try? Self.transactions(reader, after: token), let newest = read.last {
                    seen.withLock { $0 += read.map(\.transactionNumber) }
                    token = newest.token
                }
                Thread.sleep(forTimeInterval: 0.002)
            }
            finished.signal()
        }
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    await #expect(processExitsWith: .success) { try PostgreSQLHistoryTests.saveInAChildProcess() }
                }
            }
        }
        stop.withLock { $0 = true }
        finished.wait()
        #expect(seen.withLock { $0 } == Array(1...Int64(4 * Self.savesPerProcess)))
        // Each process's saves in the order it made them, under its own author.
        let transactions = try Self.transactions(reader)
        let authors = Set(transactions.compactMap(\.author))
        #expect(authors.count == 4)
        try reader.run {
            for author in authors {
                let names = try transactions.filter { $0.author == author }.map { transaction in
                    let change = try #require(transaction.changes?.first)
                    return try reader.existingObject(with: change.changedObjectID).value(forKey: "name") as? String
                }
                #expect(names == (0..<Self.savesPerProcess).map { "\(author) \($0)" })
            }
        }
    }

    /// In a child process: adds the shared store with history and saves one object at a time.
    static func saveInAChildProcess() throws {
        guard let text = ProcessInfo.processInfo.environment[storeVariable], let url = URL(string: text) else {
            exit(2)
        }
        let context = NSManagedObjectContext.conformance(try coordinator(url))
        let author = "process \(ProcessInfo.processInfo.processIdentifier)"
        context.transactionAuthor = author
        for save in 0..<savesPerProcess {
            try context.run {
                insertItem("\(author) \(save)", priority: Int64(save), into: context)
                try context.save()
            }
        }
    }

    @Test func aBatchRequestLeftToMemoryIsRecordedUnderItsAuthor() throws {
        let url = try #require(PostgreSQLTestServer.newURL())
        defer { PostgreSQLTestServer.drop(url) }
        let coordinator = try Self.coordinator(url)
        let context = NSManagedObjectContext.conformance(coordinator)
        try context.run {
            Self.insertItem("apple", priority: 1, into: context)
            Self.insertItem("banana", priority: 2, into: context)
            try context.save()
        }
        context.transactionAuthor = "batch"
        context.name = "batcher"
        try context.run {
            // PostgreSQL's regular expressions are not ICU's: MATCHES is evaluated in memory, through a context.
            let update = NSBatchUpdateRequest(entityName: "Item")
            update.predicate = NSPredicate(format: "name MATCHES %@", "b.*")
            update.propertiesToUpdate = ["note": "matched"]
            _ = try context.execute(update)
        }
        let last = try #require(try Self.transactions(context).last)
        #expect(last.author == "batch")
        #expect(last.contextName == "batcher")
        #expect(last.changes?.map(\.changeType) == [.update])
        #expect(last.changes?.first?.updatedProperties?.map(\.name) == ["note"])
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
