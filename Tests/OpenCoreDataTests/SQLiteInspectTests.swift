// White-box tests of OpenCoreData's SQLite store (the coredata tool): they do not build against Apple's Core Data.
#if !canImport(CoreData)

import Foundation
import OpenCoreData
import Testing

/// `coredata inspect <store.sqlite>`: metadata and per-entity row counts of any store, without its model.
@Suite struct SQLiteInspectTests {
    @Test(.enabled(if: SQLiteCorpus.isAvailable))
    func summarisesAnAppleStoreWithoutItsModelAndWithoutTouchingIt() throws {
        let directory = SQLiteTestDirectory()
        let url = try directory.copyCorpusStore(
            "stores/alemar11__CoreDataPlus/SampleModel2/Fixtures/SampleModel2_V1.sqlite")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        let before = try Data(contentsOf: url)
        let summary = try SQLiteStoreInspector.summary(of: url)
        #expect(summary.metadata[NSStoreUUIDKey] as? String == "C9CB0B35-ED6A-4042-BE5C-1B911AC00B2A")
        #expect(summary.journalMode == "wal")
        let rows = Dictionary(summary.entities.map { ($0.name, $0.rows ?? -1) }, uniquingKeysWith: { a, _ in a })
        #expect(rows["Book"] == 51)
        #expect(rows["GraphicNovel"] == 1)
        #expect(rows["Page"] == 4970)
        #expect(rows["Author"] == 2)
        #expect(rows["CHANGE"] == 5468)
        #expect(summary.entities.first { $0.name == "Book" }?.maxKey == 52)
        #expect(try Data(contentsOf: url) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted() == files.sorted())
    }

    @Test(.enabled(if: CoreDataTool.url != nil))
    func theCommandPrintsMetadataAndRowCounts() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let coordinator = try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: url)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            for name in ["Ada", "Bob", "Cy"] {
                NSEntityDescription.insertNewObject(forEntityName: "Owner", into: context).setValue(
                    name, forKey: "name")
            }
            NSEntityDescription.insertNewObject(forEntityName: "Dog", into: context).setValue("Rex", forKey: "name")
            try context.save()
        }
        let (status, output) = try CoreDataTool.run(["inspect", url.path])
        #expect(status == 0)
        #expect(output.contains("Type: SQLite"))
        #expect(output.contains("UUID: \(coordinator.persistentStores[0].identifier!)"))
        #expect(output.contains("NSStoreModelVersionHashes:"))
        let owner = output.split(separator: "\n").first { $0.contains(" Owner ") }.map(String.init) ?? ""
        #expect(owner.split(separator: " ").map(String.init) == ["6", "Owner", "3", "3"])
        let dog = output.split(separator: "\n").first { $0.contains(" Dog ") }.map(String.init) ?? ""
        #expect(dog.split(separator: " ").map(String.init) == ["3", "Dog", "Animal", "1", "0"])

        let notAStore = directory.store("Notes.txt")
        try Data("hello".utf8).write(to: notAStore)
        let refused = try CoreDataTool.run(["inspect", notAStore.path])
        #expect(refused.status != 0)
        #expect(refused.output.contains("not a SQLite store"))
    }

    /// The inspector writes nothing, so it does not roll back what a crash left: it says what to do instead of
    /// showing half of a transaction.
    @Test func aStoreWithAnUnfinishedTransactionIsRefusedUntouched() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let options = SQLiteJournalSetting(journalMode: "DELETE").options
        let coordinator = try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: url, options: options)
        let writer = try RawSQLiteConnection(url)
        try writer.beginTransactionThatSpills(journalMode: "DELETE", synchronous: nil)
        let image = try SQLiteCrashImage.copy(url, into: directory.url.appendingPathComponent("killed"))
        try writer.execute("ROLLBACK")
        try SQLiteStack.close(coordinator)
        let before = SQLiteCrashImage.contents(image)
        #expect {
            _ = try SQLiteStoreInspector.summary(of: image)
        } throws: { error in
            let message = (error as NSError).userInfo[NSLocalizedDescriptionKey] as? String ?? ""
            return (error as NSError).code == NSPersistentStoreOpenError && message.contains(image.path + "-journal")
        }
        #expect(SQLiteCrashImage.contents(image) == before)
    }
}

#endif
