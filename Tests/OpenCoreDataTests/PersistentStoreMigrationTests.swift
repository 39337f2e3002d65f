import Foundation
import OpenCoreDataShim
import Testing

/// `migratePersistentStore(_:to:options:withType:)`: a store copied to another location and type, taking the old
/// store's place in the coordinator.
@Suite struct PersistentStoreMigrationTests {
    /// The titles of the books and, for each author, the titles of their books, tags included.
    static func library(_ coordinator: NSPersistentStoreCoordinator) throws -> [String: [String]] {
        let context = SQLiteStack.context(coordinator)
        return try context.performAndWait {
            var summary: [String: [String]] = [:]
            for author in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Author")) {
                let books = author.value(forKey: "books") as? Set<NSManagedObject> ?? []
                summary[author.value(forKey: "name") as? String ?? ""] = books.map { book in
                    let tags = (book.value(forKey: "tags") as? Set<NSManagedObject> ?? []).compactMap {
                        $0.value(forKey: "label") as? String
                    }
                    return "\(book.value(forKey: "title") as? String ?? "-") \(tags.sorted())"
                }.sorted()
            }
            return summary
        }
    }

    @Test func aStoreMovesFromSQLiteToMemoryAndBackToANewFile() throws {
        let directory = SQLiteTestDirectory()
        let original = directory.store("Library.sqlite")
        try LightweightMigrationTests.writeLibrary(to: original)
        try NSPersistentStoreCoordinator.setMetadata(
            try NSPersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: original).merging([
                "shelf": "B3"
            ]) { $1 }, type: .sqlite, at: original)
        let model = LightweightMigrationTests.library(version: 1)
        let coordinator = try SQLiteStack.coordinator(model, at: original)
        let expected = try Self.library(coordinator)
        #expect(expected["Ada"] == ["Notes [\"maths\"]", "Verses [\"maths\", \"poetry\"]"])

        let memory = try coordinator.migratePersistentStore(
            coordinator.persistentStores[0], to: URL(fileURLWithPath: "/dev/null"), options: nil,
            withType: NSInMemoryStoreType)
        #expect(coordinator.persistentStores.count == 1 && coordinator.persistentStores[0] === memory)
        #expect(memory.type == NSInMemoryStoreType)
        #expect(try Self.library(coordinator) == expected)

        let copy = directory.store("Copy.sqlite")
        let onDisk = try coordinator.migratePersistentStore(memory, to: copy, type: .sqlite)
        #expect(coordinator.persistentStores.map(\.type) == [NSSQLiteStoreType])
        #expect(onDisk.metadata["shelf"] as? String == "B3")
        try SQLiteStack.close(coordinator)
        let reopened = try SQLiteStack.coordinator(model, at: copy)
        #expect(try Self.library(reopened) == expected)
        try SQLiteStack.close(reopened)
    }

    @Test func aStoreCannotMigrateOntoItselfOrFromAnotherCoordinator() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store("Library.sqlite")
        try LightweightMigrationTests.writeLibrary(to: url)
        let coordinator = try SQLiteStack.coordinator(LightweightMigrationTests.library(version: 1), at: url)
        defer { try? SQLiteStack.close(coordinator) }
        let store = coordinator.persistentStores[0]
        #expect(throws: (any Error).self) {
            try coordinator.migratePersistentStore(store, to: url, withType: NSSQLiteStoreType)
        }
        let other = NSPersistentStoreCoordinator(managedObjectModel: LightweightMigrationTests.library(version: 1))
        #expect(throws: (any Error).self) {
            try other.migratePersistentStore(store, to: directory.store("Other.sqlite"), withType: NSSQLiteStoreType)
        }
        #expect(coordinator.persistentStores.count == 1)
        #expect(!FileManager.default.fileExists(atPath: directory.store("Other.sqlite").path))
    }
}
