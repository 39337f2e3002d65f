// Objects a child context saved into its parent are the same objects after the parent saves them to the store:
// uniquing holds within a context, so a fetch in the child that finds their rows returns them.
import Foundation
import Testing

#if canImport(CoreData)
import CoreData
#else
import OpenCoreData
#endif

@Suite struct NestedContextTests {
    @Test func aChildsObjectsStayUniqueAfterItsParentSaves() throws {
        let container = try LibraryModel.container(url: URL(fileURLWithPath: "/dev/null"))
        let parent = container.newBackgroundContext()
        let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        child.parent = parent
        try child.performAndWait {
            let kept = Book(context: child)
            kept.title = "Kept"
            let other = Book(context: child)
            other.title = "Other"
            try child.save()
            try parent.performAndWait { try parent.save() }

            let request = NSFetchRequest<Book>(entityName: "Book")
            request.sortDescriptors = [NSSortDescriptor(key: "title", ascending: true)]
            let fetched = try child.fetch(request)
            #expect(fetched.count == 2)
            #expect(fetched.first === kept)
            #expect(fetched.last === other)

            request.predicate = NSPredicate(format: "NOT (SELF IN %@)", [kept])
            #expect(try child.fetch(request).map(\.title) == ["Other"])
        }
    }

    @Test func obtainingPermanentIDsAfterTheParentSavedGivesTheIDsOfTheSavedRows() throws {
        // A repository pattern: objects made in a scratch child context, saved into the parent, the parent saved,
        // and then the child asked for permanent IDs to hand out. They must name the rows just saved, not new ones.
        let container = try LibraryModel.container(url: URL(fileURLWithPath: "/dev/null"))
        let parent = container.newBackgroundContext()
        let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        child.parent = parent
        let ids = try child.performAndWait {
            let books = ["One", "Two"].map { title in
                let book = Book(context: child)
                book.title = title
                return book
            }
            try child.save()
            try parent.performAndWait { try parent.save() }
            try child.obtainPermanentIDs(for: books)
            #expect(books.allSatisfy { !$0.objectID.isTemporaryID })
            return books.map(\.objectID)
        }
        let reader = container.newBackgroundContext()
        try reader.performAndWait {
            let titles = try ids.map { id in (try reader.existingObject(with: id) as? Book)?.title }
            #expect(titles == ["One", "Two"])
        }
    }

    @Test func obtainingPermanentIDsBeforeTheParentSavesGivesTheIDsItWillSaveUnder() throws {
        // The same inside a transaction: the parent saves only later. The parent's objects take the child's
        // permanent IDs, so that its save writes the rows those IDs name.
        let container = try LibraryModel.container(url: URL(fileURLWithPath: "/dev/null"))
        let parent = container.newBackgroundContext()
        let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        child.parent = parent
        let ids = try child.performAndWait {
            let books = ["Three", "Four"].map { title in
                let book = Book(context: child)
                book.title = title
                return book
            }
            try child.save()
            try child.obtainPermanentIDs(for: books)
            return books.map(\.objectID)
        }
        try parent.performAndWait {
            #expect(try ids.map { (try parent.existingObject(with: $0) as? Book)?.title } == ["Three", "Four"])
            try parent.save()
        }
        let reader = container.newBackgroundContext()
        try reader.performAndWait {
            let titles = try ids.map { id in (try reader.existingObject(with: id) as? Book)?.title }
            #expect(titles == ["Three", "Four"])
            #expect(try reader.count(for: NSFetchRequest<Book>(entityName: "Book")) == 2)
        }
    }
}
