// The sets of inserted, updated and deleted objects as objects move between them one by one, many at a time: what
// `insertedObjects`, `updatedObjects` and `deletedObjects` report after each step, and what a save then writes.
import Foundation
import Testing

#if canImport(CoreData)
import CoreData
#else
import OpenCoreData
#endif

@Suite struct ChangeTrackingTests {
    /// A save's deleted objects leave the context's registry, however many, and the objects left stay registered:
    /// looked up by ID, each is the same object as before.
    @Test func deletedObjectsLeaveTheRegistryWhenSavedAndTheOthersStay() throws {
        let container = try LibraryModel.container(url: URL(fileURLWithPath: "/dev/null"))
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for (deletedCount, keptCount) in [(10, 300), (300, 40), (500, 0)] {
                let authors = (0..<deletedCount + keptCount).map { index in
                    let author = Author(context: context)
                    author.name = "Author \(index)"
                    return author
                }
                try context.save()
                let (deleted, kept) = (Array(authors[..<deletedCount]), Array(authors[deletedCount...]))
                let deletedIDs = deleted.map(\.objectID)
                for author in deleted { context.delete(author) }
                try context.save()

                let registered = context.registeredObjects
                #expect(registered.isDisjoint(with: deleted))
                #expect(registered.isSuperset(of: kept))
                let unregistered = deletedIDs.filter { context.registeredObject(for: $0) == nil }
                #expect(unregistered.count == deletedCount)
                let found = kept.filter { context.registeredObject(for: $0.objectID) === $0 }
                #expect(found.count == keptCount)
                for author in kept { context.delete(author) }
                try context.save()
            }
        }
    }

    @Test func objectsMovingBetweenTheChangeSetsAreReportedWhereTheyAre() throws {
        let container = try LibraryModel.container(url: URL(fileURLWithPath: "/dev/null"))
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let authors = (0..<200).map { index in
                let author = Author(context: context)
                author.name = "Author \(index)"
                return author
            }
            try context.save()

            for author in authors { author.name = (author.name ?? "") + " (revised)" }
            #expect(context.updatedObjects == Set(authors))
            // Most of the changes discarded, one by one.
            for author in authors[..<150] { context.refresh(author, mergeChanges: false) }
            #expect(context.updatedObjects == Set(authors[150...]))
            // Some of the rest deleted: they leave the updated objects for the deleted ones.
            for author in authors[150..<175] { context.delete(author) }
            #expect(context.updatedObjects == Set(authors[175...]))
            #expect(context.deletedObjects == Set(authors[150..<175]))
            // New objects, and some of them deleted before they were ever saved.
            let newcomers = (0..<100).map { index in
                let author = Author(context: context)
                author.name = "Newcomer \(index)"
                return author
            }
            for author in newcomers[..<80] { context.delete(author) }
            context.processPendingChanges()
            #expect(context.insertedObjects == Set(newcomers[80...]))
            #expect(context.deletedObjects == Set(authors[150..<175]))
            // One deletion taken back.
            context.insert(authors[150])
            #expect(context.deletedObjects == Set(authors[151..<175]))
            #expect(context.updatedObjects == Set(authors[175...]).union([authors[150]]))

            let kept = authors[..<150] + authors[150...].filter { !$0.isDeleted } + newcomers[80...]
            let expected = Set(kept.map(\.name))
            try context.save()
            #expect(!context.hasChanges)
            #expect(context.insertedObjects.isEmpty && context.updatedObjects.isEmpty && context.deletedObjects.isEmpty)
            let request = NSFetchRequest<Author>(entityName: "Author")
            let names = Set(try context.fetch(request).map(\.name))
            #expect(names.count == 200 - 24 + 20)
            #expect(names == expected)
            #expect(names.contains("Author 150 (revised)"))
            #expect(names.contains("Author 0"))
        }
    }

    /// Each save moves the object's version on as the store's row moves on, so that the next save of the object,
    /// which names the version it read, finds the row where it left it.
    @Test func anObjectSavedAgainAndAgainNeverConflictsWithItself() throws {
        let directory = try TemporaryDirectory()
        let container = try LibraryModel.container(url: directory.file("Library.sqlite"))
        let context = container.newBackgroundContext()
        let reader = container.newBackgroundContext()
        try context.performAndWait {
            let author = Author(context: context)
            author.name = "Draft 0"
            try context.save()
            for draft in 1...3 {
                author.name = "Draft \(draft)"
                try context.save()
            }
            // A second context changes it too; this one, refreshed, changes it once more.
            try reader.performAndWait {
                let copy = try #require(try reader.existingObject(with: author.objectID) as? Author)
                copy.name = "Edited elsewhere"
                try reader.save()
            }
            context.refresh(author, mergeChanges: false)
            #expect(author.name == "Edited elsewhere")
            author.name = "Final"
            try context.save()
        }
        let fresh = container.newBackgroundContext()
        let saved = try fresh.performAndWait {
            try fresh.fetch(NSFetchRequest<Author>(entityName: "Author")).map(\.name)
        }
        #expect(saved == ["Final"])
    }
}
