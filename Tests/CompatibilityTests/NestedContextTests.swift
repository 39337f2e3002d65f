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

    /// A repository pattern: objects made in a scratch child context and saved into the parent; the child is asked
    /// for permanent IDs to hand out, after the parent saved or before (inside a transaction, the parent saves
    /// later). The IDs must name the rows the parent's save writes, not new ones.
    @Test(arguments: [true, false])
    func aChildsPermanentIDsNameTheRowsItsParentSaves(parentSavesFirst: Bool) throws {
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
            if parentSavesFirst { try parent.performAndWait { try parent.save() } }
            try child.obtainPermanentIDs(for: books)
            #expect(books.allSatisfy { !$0.objectID.isTemporaryID })
            return books.map(\.objectID)
        }
        if !parentSavesFirst { try parent.performAndWait { try parent.save() } }
        let reader = container.newBackgroundContext()
        try reader.performAndWait {
            let titles = try ids.map { id in (try reader.existingObject(with: id) as? Book)?.title }
            #expect(titles == ["One", "Two"])
            #expect(try reader.count(for: NSFetchRequest<Book>(entityName: "Book")) == 2)
        }
    }
}
