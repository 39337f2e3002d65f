import Foundation
import OpenCoreDataShim
import Testing

#if canImport(CoreData)
import SQLite3
#else
import CSQLite
#endif

/// The SQLite store's file: its metadata, its options, destroying and replacing it, and refusing files that are
/// not stores this release can use — cleanly, without writing to them.
@Suite struct SQLiteStoreFileTests {
    static func addOwner(_ name: String, to coordinator: NSPersistentStoreCoordinator) throws {
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            let owner = NSEntityDescription.insertNewObject(forEntityName: "Owner", into: context)
            owner.setValue(name, forKey: "name")
            try context.save()
        }
    }

    static func owners(in coordinator: NSPersistentStoreCoordinator) throws -> [String] {
        let context = SQLiteStack.context(coordinator)
        return try context.performAndWait {
            try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Owner")).compactMap {
                $0.value(forKey: "name") as? String
            }.sorted()
        }
    }

    // MARK: A new store

    @Test func aNewStoreIsInWALModeWithApplesMetadata() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let model = SQLiteSampleModel.make()
        let coordinator = try SQLiteStack.coordinator(model, at: url)
        try Self.addOwner("Ada", to: coordinator)
        #expect(try RawSQLite.query(url, "PRAGMA journal_mode") == [[.text("wal")]])
        #expect(try RawSQLite.query(url, "PRAGMA auto_vacuum") == [[.integer(2)]])
        let row = try #require(try RawSQLite.query(url, "SELECT Z_VERSION, Z_UUID, Z_PLIST FROM Z_METADATA").first)
        #expect(row[0] == .integer(1))
        let store = try #require(coordinator.persistentStores.first)
        #expect(row[1] == .text(store.identifier))
        guard case .blob(let bytes) = row[2] else {
            Issue.record("Z_PLIST is not a blob")
            return
        }
        var format = PropertyListSerialization.PropertyListFormat.xml
        let plist = try #require(
            try PropertyListSerialization.propertyList(from: Data(bytes), options: [], format: &format)
                as? [String: Any])
        #expect(format == .binary)
        #expect(plist[NSStoreTypeKey] as? String == NSSQLiteStoreType)
        #expect(plist[NSStoreUUIDKey] == nil, "the UUID is in Z_UUID, not in the property list")
        #expect(plist[NSStoreModelVersionHashesVersionKey] as? Int == 3)
        #expect((plist[NSStoreModelVersionHashesKey] as? [String: Data])?.count == model.entities.count)
        #expect(plist[NSPersistenceFrameworkVersionKey] is Int)
        #expect(plist["_NSAutoVacuumLevel"] as? String == "2")
        #expect(
            try RawSQLite.query(url, "SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY ORDER BY Z_ENT").map {
                $0[1].text ?? ""
            } == ["Animal", "Cat", "Dog", "Item", "List", "Owner", "Profile", "Tag"])
        #expect(store.url == url)
        #expect(store.type == NSSQLiteStoreType)
    }

    @Test func metadataIsReadAndWrittenWithoutACoordinatorAndSavedWithTheStore() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let coordinator = try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: url)
        let store = try #require(coordinator.persistentStores.first)
        var metadata = coordinator.metadata(for: store)
        metadata["Sync"] = "token-1"
        coordinator.setMetadata(metadata, for: store)
        try Self.addOwner("Ada", to: coordinator)
        try SQLiteStack.close(coordinator)

        var read = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        #expect(read["Sync"] as? String == "token-1")
        #expect(read[NSStoreUUIDKey] as? String == store.identifier)
        read["Sync"] = "token-2"
        try NSPersistentStoreCoordinator.setMetadata(read, forPersistentStoreOfType: NSSQLiteStoreType, at: url)
        let reopened = try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: url)
        let again = try #require(reopened.persistentStores.first)
        #expect(again.metadata["Sync"] as? String == "token-2")
        #expect(again.identifier == store.identifier)
        #expect(try Self.owners(in: reopened) == ["Ada"])
    }

    // MARK: Options

    @Test func pragmasChooseTheJournalMode() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let coordinator = try SQLiteStack.coordinator(
            SQLiteSampleModel.make(), at: url,
            options: [NSSQLitePragmasOption: ["journal_mode": "DELETE", "synchronous": "FULL"]])
        try Self.addOwner("Ada", to: coordinator)
        #expect(try RawSQLite.query(url, "PRAGMA journal_mode") == [[.text("delete")]])
        #expect(!FileManager.default.fileExists(atPath: url.path + "-wal"))

        let refused = NSPersistentStoreCoordinator(managedObjectModel: SQLiteSampleModel.make())
        #expect(throws: NSError.self) {
            try refused.addPersistentStore(
                ofType: NSSQLiteStoreType, configurationName: nil, at: directory.store("Other.sqlite"),
                options: [NSSQLitePragmasOption: ["synchronous": "FULL; DROP TABLE ZOWNER"]])
        }
    }

    @Test func aReadOnlyStoreReadsAndRefusesToSave() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        try SQLiteStack.close(
            try {
                let coordinator = try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: url)
                try Self.addOwner("Ada", to: coordinator)
                return coordinator
            }())
        let before = try Data(contentsOf: url)
        let coordinator = try SQLiteStack.coordinator(
            SQLiteSampleModel.make(), at: url, options: [NSReadOnlyPersistentStoreOption: true])
        #expect(coordinator.persistentStores.first?.isReadOnly == true)
        #expect(try Self.owners(in: coordinator) == ["Ada"])
        #expect {
            try Self.addOwner("Bob", to: coordinator)
        } throws: { error in
            (error as NSError).domain == NSCocoaErrorDomain
        }
        #expect(try Data(contentsOf: url) == before)
        #expect(try Self.owners(in: coordinator) == ["Ada"])

        let missing = NSPersistentStoreCoordinator(managedObjectModel: SQLiteSampleModel.make())
        #expect(throws: NSError.self) {
            try missing.addPersistentStore(
                ofType: NSSQLiteStoreType, configurationName: nil, at: directory.store("None.sqlite"),
                options: [NSReadOnlyPersistentStoreOption: true])
        }
        #expect(!FileManager.default.fileExists(atPath: directory.store("None.sqlite").path))
    }

    @Test func analyzeAndVacuumRunWhenTheStoreIsAdded() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let coordinator = try SQLiteStack.coordinator(
            SQLiteSampleModel.make(), at: url, options: [NSSQLitePragmasOption: ["journal_mode": "DELETE"]])
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            for index in 0..<400 {
                let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
                item.setValue(String(repeating: "x", count: 2000) + "\(index)", forKey: "name")
            }
            try context.save()
            for item in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item")) { context.delete(item) }
            try context.save()
        }
        try SQLiteStack.close(coordinator)
        let size = { (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0 }
        let before = size()
        let reopened = try SQLiteStack.coordinator(
            SQLiteSampleModel.make(), at: url,
            options: [
                NSSQLiteManualVacuumOption: true, NSSQLiteAnalyzeOption: true,
                NSSQLitePragmasOption: ["journal_mode": "DELETE"],
            ])
        try SQLiteStack.close(reopened)
        #expect(size() < before / 4)
        let tables = try RawSQLite.query(url, "SELECT name FROM sqlite_master WHERE type = 'table'").compactMap {
            $0[0].text
        }
        #expect(tables.contains("sqlite_stat1"))
    }

    @Test func aLockedStoreTimesOutWithACoreDataError() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let coordinator = try SQLiteStack.coordinator(
            SQLiteSampleModel.make(), at: url, options: [NSPersistentStoreTimeoutOption: 0.2])
        try Self.addOwner("Ada", to: coordinator)
        var handle: OpaquePointer?
        #expect(sqlite3_open_v2(url.path, &handle, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK)
        defer { sqlite3_close_v2(handle) }
        #expect(sqlite3_exec(handle, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK)
        let started = Date()
        #expect {
            try Self.addOwner("Bob", to: coordinator)
        } throws: { error in
            (error as NSError).code == NSPersistentStoreTimeoutError
        }
        #expect(Date().timeIntervalSince(started) < 5)
        sqlite3_exec(handle, "ROLLBACK", nil, nil, nil)
        try Self.addOwner("Bob", to: coordinator)
        #expect(try Self.owners(in: coordinator) == ["Ada", "Bob"])
    }

    // MARK: Destroying and replacing

    /// Apple's SQLite store empties the database in place rather than unlinking it (connections elsewhere would keep
    /// a deleted file): the file stays, with no store in it, and SQLite removes the WAL with the last connection.
    @Test func destroyingEmptiesTheStoreInPlace() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let coordinator = try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: url)
        try Self.addOwner("Ada", to: coordinator)
        #expect(FileManager.default.fileExists(atPath: url.path + "-wal"))
        try coordinator.destroyPersistentStore(at: url, type: .sqlite)
        #expect(coordinator.persistentStores.isEmpty)
        #expect(FileManager.default.fileExists(atPath: url.path))
        for suffix in ["-wal", "-shm"] {
            #expect(!FileManager.default.fileExists(atPath: url.path + suffix), "\(suffix)")
        }
        #expect(throws: NSError.self) {
            try NSPersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: url)
        }
        let reopened = try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: url)
        #expect(try Self.owners(in: reopened) == [])
    }

    @Test func replacingCopiesCommittedDataStillInTheWAL() throws {
        let directory = SQLiteTestDirectory()
        let source = directory.store("Source.sqlite")
        let destination = directory.store("Destination.sqlite")
        let writer = try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: source)
        try Self.addOwner("Ada", to: writer)
        let old = try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: destination)
        try Self.addOwner("Old", to: old)
        try SQLiteStack.close(old)
        // The source is still open, so Ada is in its -wal file, not yet in the main file.
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: SQLiteSampleModel.make())
        try coordinator.replacePersistentStore(
            at: destination, destinationOptions: nil, withPersistentStoreFrom: source, sourceOptions: nil,
            type: .sqlite)
        let reopened = try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: destination)
        #expect(try Self.owners(in: reopened) == ["Ada"])
        #expect(reopened.persistentStores.first?.identifier == writer.persistentStores.first?.identifier)
    }

    // MARK: Files that are not usable stores

    /// Adding the store at `url` fails with `code` and leaves the file as it was.
    func expectRefusal(_ url: URL, code: Int, _ comment: Comment) throws {
        let before = try Data(contentsOf: url)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: SQLiteSampleModel.make())
        #expect(comment) {
            try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
        } throws: { error in
            let error = error as NSError
            return error.domain == NSCocoaErrorDomain && error.code == code
                && (error.userInfo[NSLocalizedDescriptionKey] as? String)?.contains(url.path) == true
        }
        #expect(throws: NSError.self, comment) {
            try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        }
        #expect(try Data(contentsOf: url) == before, comment)
        #expect(coordinator.persistentStores.isEmpty)
    }

    @Test func filesThatAreNotStoresAreRefusedWithoutBeingWritten() throws {
        let directory = SQLiteTestDirectory()
        let text = directory.store("Text.sqlite")
        try Data("This is not a database, just a text file that happens to end in .sqlite.\n".utf8).write(to: text)
        try expectRefusal(text, code: CocoaError.Code.fileReadCorruptFile.rawValue, "a text file")

        let noise = directory.store("Noise.sqlite")
        var generator = SystemRandomNumberGenerator()
        try Data((0..<16384).map { _ in UInt8.random(in: 0...255, using: &generator) }).write(to: noise)
        try expectRefusal(noise, code: CocoaError.Code.fileReadCorruptFile.rawValue, "random bytes")

        let foreign = directory.store("Foreign.sqlite")
        try RawSQLite.execute(foreign, "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        try expectRefusal(foreign, code: NSPersistentStoreIncompatibleSchemaError, "a SQLite file of another program")
    }

    @Test func aStoreOfANewerFormatIsRefused() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        try SQLiteStack.close(try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: url))
        try RawSQLite.execute(url, "PRAGMA journal_mode = DELETE; UPDATE Z_METADATA SET Z_VERSION = 2")
        try expectRefusal(url, code: NSPersistentStoreIncompatibleSchemaError, "Z_METADATA version 2")
    }

    /// Metadata that is not Core Data's binary property list, or nests 200,000 arrays deep, is damage.
    @Test func metadataThatIsNotABinaryPropertyListIsRefused() throws {
        let directory = SQLiteTestDirectory()
        let deep = RawSQLite.Value.blob(Array(ModelLoadingErrorTests.nestedPropertyList(depth: 200_000)))
        let xml = RawSQLite.Value.blob(Array(#"<?xml version="1.0"?><plist><dict/></plist>"#.utf8))
        for (name, value) in [("deep", deep), ("xml", xml)] {
            let url = directory.store("\(name).sqlite")
            try SQLiteStack.close(try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: url))
            try RawSQLite.execute(url, "PRAGMA journal_mode = DELETE; UPDATE Z_METADATA SET Z_PLIST = \(value)")
            try expectRefusal(url, code: CocoaError.Code.fileReadCorruptFile.rawValue, "\(name) metadata")
        }
    }

    @Test func truncatedAndDamagedStoresFailCleanly() throws {
        let directory = SQLiteTestDirectory()
        let original = directory.store("Original.sqlite")
        let writer = try SQLiteStack.coordinator(
            SQLiteSampleModel.make(), at: original, options: [NSSQLitePragmasOption: ["journal_mode": "DELETE"]])
        let context = SQLiteStack.context(writer)
        try context.performAndWait {
            for index in 0..<2000 {
                let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
                item.setValue("item \(index) " + String(repeating: "•", count: index % 50), forKey: "name")
                item.setValue(Int64(index), forKey: "int64")
            }
            try context.save()
        }
        try SQLiteStack.close(writer)
        let data = try Data(contentsOf: original)
        let model = SQLiteSampleModel.make()
        // Cut at several places, and overwrite pages in the middle: every attempt either fails with a Core Data
        // error or reads what is left; it never crashes and never writes.
        var damaged: [(String, Data)] = []
        for cut in [100, 4096, 8192, 65_536, data.count / 2] {
            damaged.append(("truncated at \(cut)", data.prefix(cut)))
        }
        var garbled = data
        for offset in stride(from: 4096 * 3, to: min(garbled.count, 4096 * 40), by: 4096) {
            garbled.replaceSubrange(offset..<(offset + 512), with: Data(repeating: 0xA5, count: 512))
        }
        damaged.append(("pages overwritten", garbled))
        for (name, bytes) in damaged {
            let url = directory.store("\(name).sqlite")
            try bytes.write(to: url)
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            do {
                // Truncation is caught before SQLite opens the file; damage inside pages only when they are read,
                // so that store is opened read-only.
                try coordinator.addPersistentStore(
                    ofType: NSSQLiteStoreType, configurationName: nil, at: url,
                    options: name.hasPrefix("truncated") ? nil : [NSReadOnlyPersistentStoreOption: true])
                #expect(!name.hasPrefix("truncated"), "\(name) was opened")
                let context = SQLiteStack.context(coordinator)
                context.performAndWait {
                    do {
                        let items = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item"))
                        for item in items { _ = item.value(forKey: "name") }
                    } catch {
                        #expect((error as NSError).domain == NSCocoaErrorDomain, "\(name)")
                    }
                }
            } catch {
                #expect((error as NSError).domain == NSCocoaErrorDomain, "\(name)")
            }
            #expect(try Data(contentsOf: url) == bytes, "\(name)")
        }
    }

    /// A row whose `Z_ENT` names no entity, or an entity stored in another table, makes the fetch fail with the row
    /// named: it is neither dropped from the results nor read with another entity's columns.
    @Test(arguments: ["99", "(SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Item')"])
    func rowsOfEntitiesTheTableDoesNotHoldAreReported(_ number: String) throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let writer = try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: url)
        try Self.addOwner("Ada", to: writer)
        try Self.addOwner("Bob", to: writer)
        try SQLiteStack.close(writer)
        try RawSQLite.execute(url, "UPDATE ZOWNER SET Z_ENT = \(number) WHERE ZNAME = 'Bob'")
        let coordinator = try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: url)
        let error = try #require(throws: NSError.self) { try Self.owners(in: coordinator) }
        #expect(error.domain == NSCocoaErrorDomain)
        #expect(error.code == CocoaError.Code.fileReadCorruptFile.rawValue)
        #expect(error.localizedDescription.contains("table ZOWNER"), "\(error.localizedDescription)")
        #expect(
            error.localizedDescription.contains(number == "99" ? "no entity of the model" : "entity Item"),
            "\(error.localizedDescription)")
        #expect(error.userInfo[NSURLErrorKey] as? URL == url)
    }

    @Test func anEmptyFileBecomesANewStore() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        #expect(FileManager.default.createFile(atPath: url.path, contents: Data()))
        let coordinator = try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: url)
        try Self.addOwner("Ada", to: coordinator)
        #expect(try Self.owners(in: coordinator) == ["Ada"])
    }
}
