// Swift key paths of managed properties name Core Data keys, as on Apple platforms, where `@NSManaged` properties
// are `@objc` and the compiler records each key path's key-value coding string.
import Foundation
import Testing

#if canImport(CoreData)
import CoreData
#else
import OpenCoreData
#endif

@Suite struct KeyPathTests {
    @Test func sortDescriptorsAndExpressionsTakeTheKeysOfKeyPaths() {
        #expect(NSSortDescriptor(keyPath: \Book.title, ascending: true).key == "title")
        #expect(NSSortDescriptor(keyPath: \Book.author?.name, ascending: false).key == "author.name")
        #expect(NSSortDescriptor(keyPath: \Author.books, ascending: true).key == "books")
        #expect(NSExpression(forKeyPath: \Book.author?.born).keyPath == "author.born")
        #expect(NSExpression(forKeyPath: \Book.pages).keyPath == "pages")
    }

    @Test func keyPathsCarryTheirKeyValueCodingStrings() {
        #expect((\Book.title as AnyKeyPath)._kvcKeyPathString == "title")
        #expect((\Book.format as AnyKeyPath)._kvcKeyPathString == "format")
        #expect((\Book.author?.name as AnyKeyPath)._kvcKeyPathString == "author.name")
        #expect((\Author.books as AnyKeyPath)._kvcKeyPathString == "books")
        #expect((\Double.self as AnyKeyPath)._kvcKeyPathString == "self")
        #expect((\Book.self as AnyKeyPath)._kvcKeyPathString == "self")
    }

    @Test func keyPathsThroughOtherPropertiesHaveNoKeyString() {
        #expect((\Book.displayTitle as AnyKeyPath)._kvcKeyPathString == nil)
        #expect((\Book.title?.count as AnyKeyPath)._kvcKeyPathString == nil)
        #expect((\Author.books.count as AnyKeyPath)._kvcKeyPathString == nil)
        #expect((\Book.tags as AnyKeyPath)._kvcKeyPathString == "tags")
        #expect((\Book.tags[0].isEmpty as AnyKeyPath)._kvcKeyPathString == nil)
    }

    @Test func fetchesSortAndFilterByKeyPathKeys() throws {
        let container = try LibraryModel.container(url: URL(fileURLWithPath: "/dev/null"))
        let context = container.viewContext
        for (name, title, pages) in [("Le Guin", "Earthsea", 200), ("Banks", "Excession", 450), ("Adams", "Dirk", 300)]
        {
            let author = Author(context: context)
            author.name = name
            let book = Book(context: context)
            book.title = title
            book.pages = Int16(pages)
            book.author = author
        }
        try context.save()

        let request = NSFetchRequest<Book>(entityName: "Book")
        request.sortDescriptors = [NSSortDescriptor(keyPath: \Book.author?.name, ascending: true)]
        let pagesKey = try #require((\Book.pages as AnyKeyPath)._kvcKeyPathString)
        request.predicate = NSPredicate(format: "%K > %d", pagesKey, 250)
        #expect(try context.fetch(request).map(\.title) == ["Dirk", "Excession"])
    }

    @Test func enumerationPropertiesStoreTheirRawValues() throws {
        let container = try LibraryModel.container(url: URL(fileURLWithPath: "/dev/null"))
        let context = container.viewContext
        let book = Book(context: context)
        #expect(book.format == .paperback)
        book.format = .ebook
        #expect(book.value(forKey: "format") as? Int16 == 2)
        try context.save()
        let request = NSFetchRequest<Book>(entityName: "Book")
        request.predicate = NSPredicate(format: "format == %d", Book.Format.ebook.rawValue)
        #expect(try context.fetch(request).first?.format == .ebook)
    }
}
