import Foundation
import OpenCoreDataShim
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A process killed with SIGKILL in the middle of saving leaves a store that opens with every completed save and
/// no part of an interrupted one, in every journal mode: SQLite's recovery (rolling back a hot journal, reading the
/// write-ahead log) runs before the store judges the file.
@Suite struct SQLiteCrashTests {
    static let itemsPerSave = 60

    // MARK: Killed at random moments

    @Test(arguments: SQLiteJournalSetting.all, [40, 300])
    func killNineDuringSavesLosesNoCompletedSaveAndKeepsNoPartialOne(
        _ setting: SQLiteJournalSetting, _ delay: Int
    ) async throws {
        let problems = try await Self.killWhileSaving(setting, afterMilliseconds: delay)
        #expect(problems.isEmpty, "\(problems)")
    }

    /// Runs a child process that saves batches in a loop and kills itself with SIGKILL `delay` ms after its first
    /// save returned, then opens the store as the app would after the crash and returns what is wrong with it:
    /// nothing when every save that returned is there, at most the interrupted one besides, and no part of one.
    /// (Also the kill loop of the hostile-input harness, FuzzHarnessTests.kills.)
    static func killWhileSaving(_ setting: SQLiteJournalSetting, afterMilliseconds delay: Int) async throws
        -> [String]
    {
        let directory = SQLiteTestDirectory()
        let path = directory.store().path
        let logPath = directory.url.appendingPathComponent("completed.log").path

        await #expect(processExitsWith: .signal(SIGKILL)) {
            [
                path = path as String, logPath = logPath as String, delay = delay as Int,
                setting = setting as SQLiteJournalSetting
            ] in
            // The child: save batches in a loop, logging each save once it has returned, until killed.
            let coordinator = try SQLiteStack.coordinator(
                SQLiteSampleModel.make(), at: URL(fileURLWithPath: path), options: setting.options)
            let context = SQLiteStack.context(coordinator)
            _ = FileManager.default.createFile(atPath: logPath, contents: nil)
            let log = try #require(FileHandle(forWritingAtPath: logPath))
            // Killed `delay` ms after the first save returned, so that every kill has committed saves to keep.
            let killer = Thread {
                usleep(useconds_t(delay * 1000))
                kill(getpid(), SIGKILL)
            }
            var counter: NSManagedObject?
            for batch in 1... {
                try context.performAndWait {
                    let owner = NSEntityDescription.insertNewObject(forEntityName: "Owner", into: context)
                    owner.setValue("batch \(batch)", forKey: "name")
                    for index in 0..<SQLiteCrashTests.itemsPerSave {
                        let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
                        item.setValue("batch \(batch) item \(index)", forKey: "name")
                        item.setValue(Int64(batch), forKey: "int64")
                        item.setValue(owner, forKey: "owner")
                    }
                    if counter == nil {
                        counter = NSEntityDescription.insertNewObject(forEntityName: "Profile", into: context)
                    }
                    counter?.setValue("\(batch)", forKey: "bio")
                    try context.save()
                    context.reset()
                    counter = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Profile")).first
                }
                log.write(Data("\(batch)\n".utf8))
                if batch == 1 { killer.start() }
            }
        }

        let logged =
            (try? String(contentsOfFile: logPath, encoding: .utf8))?.split(separator: "\n")
            .compactMap { Int($0) } ?? []
        let lastLogged = logged.last ?? 0
        let url = URL(fileURLWithPath: path)
        var problems: [String] = []
        func check(_ condition: Bool, _ problem: @autoclosure () -> String) {
            if !condition { problems.append("\(setting), \(delay) ms: " + problem()) }
        }
        guard FileManager.default.fileExists(atPath: url.path) else {
            // Killed before the store was created: nothing was saved.
            check(lastLogged == 0, "no store, but \(lastLogged) saves returned")
            return problems
        }
        // Opened as the app would open it after the crash; SQLite recovers first, and only then is the file checked.
        let coordinator = try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: url, options: setting.options)
        check(try RawSQLite.query(url, "PRAGMA integrity_check") == [[.text("ok")]], "integrity check failed")
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            let owners = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Owner"))
            let batches = owners.compactMap { ($0.value(forKey: "name") as? String)?.split(separator: " ").last }
                .compactMap { Int($0) }.sorted()
            let saved = batches.last ?? 0
            // Every save that returned is there; at most the one being saved when killed is there as well.
            check(batches == Array(1..<(saved + 1)), "batches \(batches)")
            check(saved >= lastLogged, "\(lastLogged) saves returned, \(saved) kept")
            check(saved <= lastLogged + 1, "\(lastLogged) saves returned, \(saved) kept")
            // No partial save: each batch has all its items, and the counter updated with it.
            let items = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item"))
            check(items.count == saved * Self.itemsPerSave, "\(items.count) items for \(saved) saves")
            for owner in owners {
                let count = (owner.value(forKey: "items") as? Set<NSManagedObject>)?.count
                check(count == Self.itemsPerSave, "an owner with \(count ?? 0) items")
            }
            let counter = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Profile"))
            check(counter.count == (saved > 0 ? 1 : 0), "\(counter.count) counters")
            let bio = counter.first.map { $0.value(forKey: "bio") as? String } ?? "0"
            check(bio == "\(saved)", "the counter says \(bio ?? "nil"), \(saved) saves kept")
        }
        check(lastLogged > 0, "the child should complete a few saves before it is killed")
        return problems
    }

    // MARK: Crash images

    /// Saves owners named "owner <n>" for `owners`, each with `items` items, through `coordinator`.
    static func save(owners: Range<Int>, items: Int = 20, to coordinator: NSPersistentStoreCoordinator) throws {
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            for number in owners {
                let owner = NSEntityDescription.insertNewObject(forEntityName: "Owner", into: context)
                owner.setValue("owner \(number)", forKey: "name")
                for index in 0..<items {
                    let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
                    item.setValue("owner \(number) item \(index)", forKey: "name")
                    item.setValue(owner, forKey: "owner")
                }
            }
            try context.save()
        }
    }

    /// Opens the store at `url` as an app would after a crash and checks that it holds exactly what was committed:
    /// the owners `owners` with `items` items each, nothing of an unfinished transaction; then that it takes a save.
    static func expectCommitted(
        at url: URL, options: [AnyHashable: Any]?, owners: Range<Int>, items: Int = 20,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let coordinator = try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: url, options: options)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            let found = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Owner"))
            let names = found.compactMap { $0.value(forKey: "name") as? String }.sorted()
            #expect(names == owners.map { "owner \($0)" }.sorted(), sourceLocation: sourceLocation)
            for owner in found {
                let name = owner.value(forKey: "name") as? String ?? ""
                let itemNames = (owner.value(forKey: "items") as? Set<NSManagedObject> ?? []).compactMap {
                    $0.value(forKey: "name") as? String
                }
                #expect(Set(itemNames) == Set((0..<items).map { "\(name) item \($0)" }), sourceLocation: sourceLocation)
            }
            let count = try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Item"))
            #expect(count == owners.count * items, sourceLocation: sourceLocation)
            let after = NSEntityDescription.insertNewObject(forEntityName: "Owner", into: context)
            after.setValue("after the crash", forKey: "name")
            try context.save()
        }
        try SQLiteStack.close(coordinator)
        #expect(try RawSQLite.query(url, "PRAGMA integrity_check") == [[.text("ok")]], sourceLocation: sourceLocation)
        #expect(
            try RawSQLite.query(url, "SELECT COUNT(*) FROM ZOWNER WHERE ZNAME = 'after the crash'") == [[.integer(1)]],
            sourceLocation: sourceLocation)
    }

    /// Killed in the middle of a transaction whose pages no longer fit SQLite's cache: with a rollback journal the
    /// main file holds some of the new pages and the journal their originals (a hot journal, which a read-only
    /// connection cannot roll back); in WAL mode the log holds frames without a commit.
    @Test(arguments: SQLiteJournalSetting.all)
    func aTransactionLeftUnfinishedIsUndoneWhenTheStoreOpens(_ setting: SQLiteJournalSetting) throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let coordinator = try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: url, options: setting.options)
        try Self.save(owners: 0..<5, to: coordinator)
        let identifier = try #require(coordinator.persistentStores.first?.identifier)
        let committed = try Data(contentsOf: url)
        let writer = try RawSQLiteConnection(url)
        try writer.beginTransactionThatSpills(journalMode: setting.journalMode, synchronous: setting.synchronous)
        let image = try SQLiteCrashImage.copy(url, into: directory.url.appendingPathComponent("killed"))
        try writer.execute("ROLLBACK")
        try SQLiteStack.close(coordinator)

        if setting.isWAL {
            #expect(FileManager.default.fileExists(atPath: image.path + "-wal"))
        } else {
            // What makes the image a crash: changed pages in the main file, their originals in a hot journal.
            let journal = try Data(contentsOf: URL(fileURLWithPath: image.path + "-journal"))
            #expect(journal.prefix(8) == Data([0xD9, 0xD5, 0x05, 0xF9, 0x20, 0xA1, 0x63, 0xD7]))
            #expect(try Data(contentsOf: image) != committed)
        }
        // Each way in recovers its own copy of the image: the metadata alone, a read-only store, a store.
        let forMetadata = try SQLiteCrashImage.copy(image, into: directory.url.appendingPathComponent("metadata"))
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            ofType: NSSQLiteStoreType, at: forMetadata)
        #expect(metadata[NSStoreUUIDKey] as? String == identifier)

        let forReading = try SQLiteCrashImage.copy(image, into: directory.url.appendingPathComponent("read-only"))
        var readOnly = setting.options ?? [:]
        readOnly[NSReadOnlyPersistentStoreOption] = true
        let reader = try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: forReading, options: readOnly)
        #expect(reader.persistentStores.first?.identifier == identifier)
        #expect(try SQLiteStoreFileTests.owners(in: reader) == (0..<5).map { "owner \($0)" })
        try SQLiteStack.close(reader)

        try Self.expectCommitted(at: image, options: setting.options, owners: 0..<5)
    }

    /// Killed after commits that only the WAL holds (no checkpoint yet): the main file alone is an empty store.
    @Test(arguments: SQLiteJournalSetting.all.filter(\.isWAL))
    func commitsThatOnlyTheWALHoldsAreKept(_ setting: SQLiteJournalSetting) throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let options = setting.with(walAutocheckpoint: 0).options
        let coordinator = try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: url, options: options)
        try Self.save(owners: 0..<3, to: coordinator)
        try Self.save(owners: 3..<6, to: coordinator)
        let image = try SQLiteCrashImage.copy(url, into: directory.url.appendingPathComponent("killed"))
        try SQLiteStack.close(coordinator)
        try Self.expectCommitted(at: image, options: setting.options, owners: 0..<6)
    }

    /// Killed in the middle of a checkpoint: page 1, copied first from the WAL, counts pages that the main file does
    /// not have yet. The child makes SQLite stop there by forbidding the file to grow (`RLIMIT_FSIZE`).
    @Test(arguments: SQLiteJournalSetting.all.filter(\.isWAL))
    func aCheckpointStoppedHalfwayIsCompletedFromTheWAL(_ setting: SQLiteJournalSetting) async throws {
        let directory = SQLiteTestDirectory()
        let path = directory.store().path

        await #expect(processExitsWith: .signal(SIGKILL)) {
            [path = path as String, setting = setting as SQLiteJournalSetting] in
            let url = URL(fileURLWithPath: path)
            let coordinator = try SQLiteStack.coordinator(
                SQLiteSampleModel.make(), at: url, options: setting.with(walAutocheckpoint: 0).options)
            try SQLiteCrashTests.save(owners: 0..<8, to: coordinator)
            let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)
            signal(SIGXFSZ, SIG_IGN)
            var limit = rlimit(rlim_cur: rlim_t(size.intValue), rlim_max: rlim_t.max)
            #if canImport(Glibc)
            guard setrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &limit) == 0 else { exit(EXIT_FAILURE) }
            #else
            guard setrlimit(RLIMIT_FSIZE, &limit) == 0 else { exit(EXIT_FAILURE) }
            #endif
            let checkpointer = try RawSQLiteConnection(url)
            // The checkpoint must fail when it first extends the file; one that succeeds makes no crash image.
            if (try? checkpointer.execute("PRAGMA wal_checkpoint(TRUNCATE)")) != nil { exit(EXIT_FAILURE) }
            kill(getpid(), SIGKILL)
        }

        let url = URL(fileURLWithPath: path)
        let header = try SQLiteCrashImage.headerPages(url)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber).intValue
        #expect(header.bytes > size, "the header should count pages the main file does not have")
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
        try Self.expectCommitted(at: url, options: setting.options, owners: 0..<8)
    }

    // MARK: What SQLite itself refuses

    /// The store at `url` is refused with `code`, an error naming `companion` with SQLite's reason, and every file
    /// stays as it was.
    func expectRefusal(_ url: URL, naming companion: URL, code: Int, sqliteReason: String) throws {
        let before = SQLiteCrashImage.contents(url)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: SQLiteSampleModel.make())
        #expect {
            try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
        } throws: { error in
            let error = error as NSError
            let message = error.userInfo[NSLocalizedDescriptionKey] as? String ?? ""
            return error.domain == NSCocoaErrorDomain && error.code == code && message.contains(companion.path)
                && message.contains(sqliteReason) && error.userInfo[NSSQLiteErrorDomain] is Int
        }
        #expect(throws: NSError.self) {
            try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        }
        #expect(coordinator.persistentStores.isEmpty)
        #expect(SQLiteCrashImage.contents(url) == before)
    }

    @Test func aWALOfAnotherFormatVersionIsRefusedWithSQLitesReason() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let options = SQLiteJournalSetting().with(walAutocheckpoint: 0).options
        let coordinator = try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: url, options: options)
        try Self.save(owners: 0..<3, to: coordinator)
        let image = try SQLiteCrashImage.copy(url, into: directory.url.appendingPathComponent("killed"))
        try SQLiteStack.close(coordinator)
        let wal = URL(fileURLWithPath: image.path + "-wal")
        try SQLiteCrashImage.walHeader(try Data(contentsOf: wal), version: 3_007_001).write(to: wal)
        try expectRefusal(
            image, naming: wal, code: CocoaError.Code.fileReadUnknown.rawValue,
            sqliteReason: "unable to open database file")
    }

    @Test func aJournalSQLiteCannotReadIsRefusedWithSQLitesReason() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let options = SQLiteJournalSetting(journalMode: "DELETE").options
        try SQLiteStack.close(try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: url, options: options))
        // A journal SQLite must play back but cannot read.
        let journal = URL(fileURLWithPath: url.path + "-journal")
        try FileManager.default.createDirectory(at: journal, withIntermediateDirectories: false)
        try expectRefusal(
            url, naming: journal, code: CocoaError.Code.fileReadUnknown.rawValue, sqliteReason: "disk I/O error")
        #expect(FileManager.default.fileExists(atPath: journal.path))
    }

    /// A file that is not a store is refused untouched, whatever lies beside it.
    @Test func aFileThatIsNotAStoreStaysUntouchedWithAJournalOrWALBesideIt() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store("Text.sqlite")
        try Data(repeating: 0x41, count: 8192).write(to: url)
        try Data(repeating: 0x42, count: 4096).write(to: URL(fileURLWithPath: url.path + "-journal"))
        try Data(repeating: 0x43, count: 4096).write(to: URL(fileURLWithPath: url.path + "-wal"))
        let before = SQLiteCrashImage.contents(url)
        #expect(before.count == 3)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: SQLiteSampleModel.make())
        #expect {
            try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
        } throws: { error in
            (error as NSError).domain == NSCocoaErrorDomain
                && (error as NSError).code == CocoaError.Code.fileReadCorruptFile.rawValue
        }
        #expect(throws: NSError.self) {
            try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        }
        #expect(SQLiteCrashImage.contents(url) == before)
    }
}
