import Foundation
import OpenCoreData
import StoreConformance
import Testing

/// Persistent history (`NSPersistentHistoryTrackingKey`) of the SQLite store: Apple's tables (ATRANSACTION, ACHANGE,
/// ATRANSACTIONSTRING) in the store's file, and the stores Apple wrote. What every store that records history does
/// (transactions, tokens, requests, batch requests) is `StoreConformanceCase.persistentHistory`, which
/// `StoreConformanceTests` runs against this store.
@Suite struct PersistentHistoryTests {
    // The model, the tracking option and the history helpers are the conformance suite's (`HistoryStack`), so that
    // these SQLite-only tests and the shared cases describe the same store.

    @Test func aContainerTurnsHistoryOnThroughItsStoreDescription() throws {
        let directory = SQLiteTestDirectory()
        let container = NSPersistentContainer(name: "History", managedObjectModel: HistoryStack.model)
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
            _ = HistoryStack.insertItem("contained", priority: 1, into: context)
            try context.save()
        }
        #expect(try HistoryStack.transactions(context).map(\.author) == ["container"])
        try SQLiteStack.close(container.persistentStoreCoordinator)
    }

    @Test func theTablesAreApplesAndCountTheirKeysInZPrimaryKey() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let coordinator = try SQLiteStack.coordinator(HistoryStack.model, at: url, options: HistoryStack.tracking)
        let context = SQLiteStack.context(coordinator)
        context.transactionAuthor = "importer"
        try context.performAndWait {
            let item = HistoryStack.insertItem("first", priority: 1, into: context)
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

    @Test func aStoreWithoutHistoryRefusesHistoryRequests() throws {
        let directory = SQLiteTestDirectory()
        for (type, url) in [(NSSQLiteStoreType, directory.store()), (NSInMemoryStoreType, nil)] {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: HistoryStack.model)
            try coordinator.addPersistentStore(ofType: type, configurationName: nil, at: url, options: nil)
            let context = SQLiteStack.context(coordinator)
            #expect(coordinator.currentPersistentHistoryToken(fromStores: nil) == nil)
            #expect {
                _ = try HistoryStack.history(context, .fetchHistory(after: nil as NSPersistentHistoryToken?))
            } throws: { error in
                let error = error as NSError
                return error.domain == NSCocoaErrorDomain && error.code == NSPersistentStoreUnsupportedRequestTypeError
                    && error.localizedDescription.contains("NSPersistentHistoryTrackingKey")
            }
        }
    }

    @Test func anAppleStoresHistoryIsReadAndKept() throws {
        let path = "stores/alemar11__CoreDataPlus/SampleModel2/Fixtures/SampleModel2_V2.sqlite"
        let directory = SQLiteTestDirectory()
        let url = try directory.copyCorpusStore(path)
        let before = try RawSQLite.query(url, "SELECT * FROM ACHANGE ORDER BY Z_PK")
        let model = try SQLiteCorpusModels.storeModel(for: path)
        let coordinator = try SQLiteStack.coordinator(model, at: url, options: HistoryStack.tracking)
        let context = SQLiteStack.context(coordinator)
        let apple = try HistoryStack.transactions(context)
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
        #expect(try HistoryStack.transactions(context, after: transaction.token).count == 1)
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
            let coordinator = try SQLiteStack.coordinator(HistoryStack.model, at: url, options: HistoryStack.tracking)
            let context = SQLiteStack.context(coordinator)
            try context.performAndWait {
                _ = HistoryStack.insertItem("tracked", priority: 1, into: context)
                try context.save()
            }
            try SQLiteStack.close(coordinator)
        }
        do {
            // History left: read-only.
            let coordinator = try SQLiteStack.coordinator(HistoryStack.model, at: url)
            #expect(coordinator.persistentStores.first?.isReadOnly == true)
            try SQLiteStack.close(coordinator)
        }
        do {
            let coordinator = try SQLiteStack.coordinator(HistoryStack.model, at: url, options: HistoryStack.tracking)
            _ = try HistoryStack.history(SQLiteStack.context(coordinator), .deleteHistory(before: .distantFuture))
            try SQLiteStack.close(coordinator)
        }
        let coordinator = try SQLiteStack.coordinator(HistoryStack.model, at: url)
        #expect(coordinator.persistentStores.first?.isReadOnly == false)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            _ = HistoryStack.insertItem("untracked", priority: 2, into: context)
            try context.save()
        }
        #expect(try RawSQLite.query(url, "SELECT COUNT(*) FROM ZITEM") == [[.integer(2)]])
    }

    @Test func historyTablesOfANewerFormatStayReadableAndIntact() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        do {
            let coordinator = try SQLiteStack.coordinator(HistoryStack.model, at: url, options: HistoryStack.tracking)
            let context = SQLiteStack.context(coordinator)
            try context.performAndWait {
                _ = HistoryStack.insertItem("old", priority: 1, into: context)
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
        let coordinator = try SQLiteStack.coordinator(HistoryStack.model, at: url, options: HistoryStack.tracking)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            _ = HistoryStack.insertItem("new", priority: 2, into: context)
            try context.save()
        }
        let transactions = try HistoryStack.transactions(context)
        #expect(transactions.map { $0.changes?.map(\.changeType) ?? [] } == [[.insert], [.insert]])
        #expect(
            try RawSQLite.query(url, "SELECT ZFUTURE FROM ATRANSACTION ORDER BY Z_PK") == [[.text("kept")], [.null]])
        #expect(
            try RawSQLite.query(url, "SELECT Z_PK, ZCHANGETYPE FROM ACHANGE WHERE ZFUTURE = 5") == [
                [.integer(2), .integer(9)]
            ])
    }
}
