import Foundation
import OpenCoreData
import Testing

/// Migration through model versions (`OpenCoreDataMigrateThroughModelVersionsOption`, OpenCoreData's option beyond
/// Apple's framework): the test bundle's Shelf model has three versions, and mapping models from 1 to 2 (the
/// attribute `pages` becomes `pageCount`) and from 2 to 3 (`pageCount` becomes `length`), but none from 1 to 3. Only a
/// chain of both mapping models keeps the page counts; inference from 1 to 3 cannot see the renames.
@Suite struct MigrationChainTests {
    static func model(_ version: String) throws -> NSManagedObjectModel {
        let url = try #require(
            Bundle.module.url(forResource: version, withExtension: "mom", subdirectory: "Shelf.momd"))
        return try #require(NSManagedObjectModel(contentsOf: url))
    }

    /// A folder holding a store of Shelf version 1 with two books.
    final class Folder {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("Chain-\(UUID().uuidString)")
        var store: URL { directory.appendingPathComponent("Shelf.sqlite") }

        init() throws {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: try MigrationChainTests.model("Shelf"))
            try coordinator.addPersistentStore(
                ofType: NSSQLiteStoreType, configurationName: nil, at: store, options: nil)
            let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            try context.performAndWait {
                for (title, pages) in [("Emma", 474), ("Persuasion", 249)] {
                    let book = NSEntityDescription.insertNewObject(forEntityName: "ShelfBook", into: context)
                    book.setValue(title, forKey: "title")
                    book.setValue(pages, forKey: "pages")
                }
                try context.save()
            }
            for store in coordinator.persistentStores { try coordinator.remove(store) }
        }

        deinit { try? FileManager.default.removeItem(at: directory) }

        /// Opens the store with version 3 and `options`; returns each book's title and length.
        func open(options: [AnyHashable: Any]) throws -> [String: Int] {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: try MigrationChainTests.model("Shelf 3"))
            try coordinator.addPersistentStore(
                ofType: NSSQLiteStoreType, configurationName: nil, at: store, options: options)
            let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            return try context.performAndWait {
                var lengths: [String: Int] = [:]
                for book in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "ShelfBook")) {
                    lengths[book.value(forKey: "title") as! String] =
                        (book.value(forKey: "length") as! NSNumber).intValue
                    #expect(book.value(forKey: "note") == nil)
                }
                return lengths
            }
        }

        var files: [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
        }
    }

    @Test func theStoreMigratesThroughBothMappingModelsAndKeepsEveryValue() throws {
        let folder = try Folder()
        let lengths = try folder.open(options: [
            NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true,
            OpenCoreDataMigrateThroughModelVersionsOption: true,
        ])
        #expect(lengths == ["Emma": 474, "Persuasion": 249])
        // The intermediate stores are gone; only the store's own files remain.
        #expect(folder.files.allSatisfy { $0.hasPrefix("Shelf.sqlite") }, "\(folder.files)")
    }

    @Test func withoutTheOptionInferenceGoesStraightToTheLastVersion() throws {
        // Apple's behaviour: the inferred mapping sees `pages` removed and `length` added with its default.
        let folder = try Folder()
        let lengths = try folder.open(options: [
            NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true,
        ])
        #expect(lengths == ["Emma": 0, "Persuasion": 0])
    }

    @Test func withoutAMappingModelTheStoreFailsToOpenAndStaysAsItWas() throws {
        let folder = try Folder()
        let before = try Data(contentsOf: folder.store)
        let filesBefore = folder.files
        #expect {
            _ = try folder.open(options: [NSMigratePersistentStoresAutomaticallyOption: true])
        } throws: { error in
            let error = error as NSError
            return error.domain == NSCocoaErrorDomain && error.code == NSMigrationMissingMappingModelError
        }
        #expect(try Data(contentsOf: folder.store) == before)
        #expect(folder.files == filesBefore)
    }

    @Test func aChainIsTakenOnlyWhenEveryStepHasAMappingModelOrInferenceIsAllowed() throws {
        // Without inference the chain must reach version 3 through mapping models alone, which it does here.
        let folder = try Folder()
        let lengths = try folder.open(options: [
            NSMigratePersistentStoresAutomaticallyOption: true, OpenCoreDataMigrateThroughModelVersionsOption: true,
        ])
        #expect(lengths == ["Emma": 474, "Persuasion": 249])
    }
}
