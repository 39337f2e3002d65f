import Foundation
import OpenCoreDataShim
import Testing

/// Fetch result types and unsaved changes over a SQLite store.
@Suite struct SQLiteFetchResultTests {
    func populated(_ directory: SQLiteTestDirectory) throws -> NSManagedObjectContext {
        let coordinator = try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: directory.store())
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            for (index, name) in ["Ada", "Bob", "Cy", "Dee"].enumerated() {
                let owner = NSEntityDescription.insertNewObject(forEntityName: "Owner", into: context)
                owner.setValue(name, forKey: "name")
                let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
                item.setValue(Int16(index), forKey: "int16")
                item.setValue(owner, forKey: "owner")
            }
            try context.save()
        }
        return context
    }

    @Test func objectIDCountAndDictionaryResults() throws {
        let directory = SQLiteTestDirectory()
        let context = try populated(directory)
        try context.performAndWait {
            let ids = NSFetchRequest<NSManagedObjectID>(entityName: "Owner")
            ids.resultType = .managedObjectIDResultType
            ids.sortDescriptors = [NSSortDescriptor(key: "name", ascending: false)]
            let found = try context.fetch(ids)
            #expect(found.count == 4)
            #expect(found.allSatisfy { !$0.isTemporaryID && $0.entity.name == "Owner" })
            #expect((try context.existingObject(with: found[0])).value(forKey: "name") as? String == "Dee")

            let count = NSFetchRequest<NSNumber>(entityName: "Item")
            count.resultType = .countResultType
            count.predicate = NSPredicate(format: "int16 >= 2")
            #expect(try context.fetch(count).first?.intValue == 2)

            let dictionaries = NSFetchRequest<NSDictionary>(entityName: "Owner")
            dictionaries.resultType = .dictionaryResultType
            dictionaries.propertiesToFetch = ["name"]
            dictionaries.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            #expect(
                try context.fetch(dictionaries).compactMap { $0["name"] as? String } == ["Ada", "Bob", "Cy", "Dee"])
        }
    }

    @Test func unsavedChangesAreFoldedIntoResults() throws {
        let directory = SQLiteTestDirectory()
        let context = try populated(directory)
        try context.performAndWait {
            let owners = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Owner"))
            let bob = try #require(owners.first { $0.value(forKey: "name") as? String == "Bob" })
            let cy = try #require(owners.first { $0.value(forKey: "name") as? String == "Cy" })
            context.delete(bob)
            cy.setValue("Zed", forKey: "name")
            let new = NSEntityDescription.insertNewObject(forEntityName: "Owner", into: context)
            new.setValue("Abe", forKey: "name")

            let request = NSFetchRequest<NSManagedObject>(entityName: "Owner")
            request.predicate = NSPredicate(format: "name < %@", "D")
            request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            #expect(try context.fetch(request).compactMap { $0.value(forKey: "name") as? String } == ["Abe", "Ada"])
            #expect(try context.count(for: request) == 2)
            request.includesPendingChanges = false
            #expect(
                try context.fetch(request).compactMap { $0.value(forKey: "name") as? String }.sorted() == [
                    "Ada", "Bob", "Zed",
                ])
        }
    }
}
