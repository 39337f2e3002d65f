import Foundation
import OpenCoreData
import Testing

/// A store that keeps persistent history keeps it through lightweight migration: every transaction stays, and
/// every change still names its object — under the object's new entity, whose number may have changed.
@Suite struct PersistentHistoryMigrationTests {
    static var history: [AnyHashable: Any] { [NSPersistentHistoryTrackingKey: true] }

    static func options(_ extra: [AnyHashable: Any]) -> [AnyHashable: Any] {
        history.merging(extra) { $1 }
    }

    static func allHistory(_ context: NSManagedObjectContext) throws -> [NSPersistentHistoryTransaction] {
        let result = try context.execute(
            NSPersistentHistoryChangeRequest.fetchHistory(after: nil as NSPersistentHistoryToken?))
        return try #require((result as? NSPersistentHistoryResult)?.result as? [NSPersistentHistoryTransaction])
    }

    @Test func historyKeepsEveryTransactionAndNamesObjectsByTheirNewEntities() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store("Library.sqlite")
        // Version 1, with history: the library, then Ada renamed, then a tag and an author deleted. An author's
        // name is kept in history when it is deleted; the writers of version 2 keep their country too.
        let version1 = LightweightMigrationTests.library(version: 1)
        version1.entitiesByName["Author"]?.attributesByName["name"]?.preservesValueInHistoryOnDeletion = true
        let version2 = LightweightMigrationTests.library(version: 2)
        for name in ["name", "country"] {
            version2.entitiesByName["Writer"]?.attributesByName[name]?.preservesValueInHistoryOnDeletion = true
        }
        let old = try SQLiteStack.coordinator(version1, at: url, options: Self.history)
        let oldContext = SQLiteStack.context(old)
        let before = try oldContext.performAndWait {
            let objects: [(String, [String: Any])] = [
                ("Author", ["name": "Ada", "born": 1815]), ("Author", ["name": "Bob"]), ("Book", ["title": "Notes"]),
            ]
            for (entity, values) in objects {
                let object = NSEntityDescription.insertNewObject(forEntityName: entity, into: oldContext)
                for (key, value) in values { object.setValue(value, forKey: key) }
            }
            let tag = NSEntityDescription.insertNewObject(forEntityName: "Tag", into: oldContext)
            tag.setValue("maths", forKey: "label")
            try oldContext.save()
            let authors = try oldContext.fetch(NSFetchRequest<NSManagedObject>(entityName: "Author"))
            let ada = try #require(authors.first { $0.value(forKey: "name") as? String == "Ada" })
            let bob = try #require(authors.first { $0.value(forKey: "name") as? String == "Bob" })
            ada.setValue("Ada Lovelace", forKey: "name")
            try oldContext.save()
            oldContext.delete(tag)
            oldContext.delete(bob)
            try oldContext.save()
            return try Self.allHistory(oldContext)
        }
        #expect(before.count == 3)
        try SQLiteStack.close(old)

        let new = try SQLiteStack.coordinator(
            version2, at: url,
            options: Self.options(LightweightMigrationTests.automatic))
        defer { try? SQLiteStack.close(new) }
        let context = SQLiteStack.context(new)
        try context.performAndWait {
            let after = try Self.allHistory(context)
            #expect(after.map(\.transactionNumber) == before.map(\.transactionNumber))
            // The changes of entities that remain name their objects under the new entities.
            let inserted = (after.first?.changes ?? []).filter { $0.changeType == .insert }
            let names = inserted.map { $0.changedObjectID.entity.name ?? "" }
            #expect(names.sorted() == ["Book", "Writer", "Writer"])
            let book = try #require(inserted.first { $0.changedObjectID.entity.name == "Book" })
            #expect(try context.existingObject(with: book.changedObjectID).value(forKey: "name") as? String == "Notes")
            let update = try #require(after.dropFirst().first?.changes?.first)
            #expect(update.changeType == .update)
            #expect(update.changedObjectID.entity.name == "Writer")
            #expect(update.updatedProperties?.map(\.name) == ["name"])
            let writer = try context.existingObject(with: update.changedObjectID)
            #expect(writer.value(forKey: "name") as? String == "Ada Lovelace")
            // The tag's deletion went with its entity; the author's stays, with the name it had, now in the
            // tombstone column of a writer's name.
            let deletions = after.last?.changes ?? []
            #expect(deletions.map(\.changeType) == [.delete])
            #expect(deletions.first?.changedObjectID.entity.name == "Writer")
            #expect(deletions.first?.tombstone?["name"] as? String == "Bob")
            #expect(deletions.first?.tombstone?["country"] == nil)
            // History goes on after the migration, in the same tables.
            let sketches = NSEntityDescription.insertNewObject(forEntityName: "Book", into: context)
            sketches.setValue("Sketches", forKey: "name")
            try context.save()
            let latest = try Self.allHistory(context)
            #expect(latest.count == after.count + 1)
            #expect(latest.last?.changes?.map(\.changedObjectID) == [sketches.objectID])
        }
    }
}
