// Primitive accessors: `@NSManaged var primitiveTitle` beside `@NSManaged var title` reads and writes the stored
// value of `title` without access or change notifications, as the accessors Core Data generates for every modeled
// property do. Custom accessors are built from them.
import Foundation
import Testing

#if canImport(CoreData)
import CoreData
#else
import OpenCoreData
#endif

@Suite struct PrimitiveAccessorTests {
    @Test func aPrimitiveAccessorReadsAndWritesThePropertysValue() throws {
        let container = try LibraryModel.container(url: URL(fileURLWithPath: "/dev/null"))
        let context = container.viewContext
        let book = Book(context: context)
        book.title = "Persuasion"
        book.pages = 249
        #expect(book.primitiveTitle == "Persuasion")
        #expect(book.primitivePages == NSNumber(value: 249))

        book.primitiveTitle = "Emma"
        book.primitivePages = NSNumber(value: 474)
        #expect(book.title == "Emma")
        #expect(book.pages == 474)
        #expect(book.value(forKey: "primitiveTitle") as? String == "Emma")

        book.setValue("Mansfield Park", forKey: "primitiveTitle")
        #expect(book.title == "Mansfield Park")
        #expect(book.primitiveValue(forKey: "title") as? String == "Mansfield Park")
    }

    @Test func aCustomAccessorBuiltOnPrimitivesIsSavedAndObserved() throws {
        let directory = try TemporaryDirectory()
        let container = try LibraryModel.container(url: directory.file("Library.sqlite"))
        let context = container.viewContext
        let book = Book(context: context)
        try context.save()

        final class Changes: @unchecked Sendable { var updated: Set<NSManagedObject> = [] }
        let changes = Changes()
        let token = NotificationCenter.default.addObserver(
            forName: .NSManagedObjectContextObjectsDidChange, object: context, queue: nil
        ) { note in
            changes.updated.formUnion(note.userInfo?[NSUpdatedObjectsKey] as? Set<NSManagedObject> ?? [])
        }
        defer { NotificationCenter.default.removeObserver(token) }

        book.shelfTitle = "  Northanger Abbey "
        #expect(book.isUpdated)
        #expect(book.changedValues()["title"] as? String == "Northanger Abbey")
        context.processPendingChanges()
        #expect(changes.updated.contains(book))
        try context.save()

        let other = container.newBackgroundContext()
        let title = try other.performAndWait {
            let request = NSFetchRequest<Book>(entityName: "Book")
            return try other.fetch(request).first?.shelfTitle
        }
        #expect(title == "Northanger Abbey")
    }

    @Test func aPrimitiveAccessorReadsAFaultsValue() throws {
        let directory = try TemporaryDirectory()
        let container = try LibraryModel.container(url: directory.file("Library.sqlite"))
        let writer = container.newBackgroundContext()
        let id = try writer.performAndWait {
            let book = Book(context: writer)
            book.title = "Sanditon"
            try writer.save()
            return book.objectID
        }
        let reader = container.newBackgroundContext()
        try reader.performAndWait {
            let book = try #require(reader.object(with: id) as? Book)
            #expect(book.isFault)
            #expect(book.primitiveTitle == "Sanditon")
        }
    }
}
