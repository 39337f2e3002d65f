// The model the compatibility tests share, built in code the way apps and their tests do it: authors and their
// books, with typed subclasses.
import Foundation

#if canImport(CoreData)
import CoreData
import OpenCoreDataShim
#else
import OpenCoreData
#endif

final class Author: NSManagedObject {
    @Managed var name: String?
    @Managed var born: Date?
    @Managed var books: Set<Book>
    /// Transient: held by each object in memory only, starting from the model's default value.
    @Managed var mood: String?
}

final class Book: NSManagedObject {
    enum Format: Int16 {
        case paperback, hardcover, ebook
    }

    @Managed var title: String?
    @Managed var pages: Int16
    @Managed var format: Format
    @Managed var tags: [String]
    @Managed var author: Author?

    /// Core Data's primitive accessors for `title` and `pages`, for custom accessors such as `shelfTitle`.
    @Managed var primitiveTitle: String?
    @Managed var primitivePages: NSNumber?

    /// A custom accessor in the style Apple's guide shows: notifications around the primitive value.
    var shelfTitle: String? {
        get {
            willAccessValue(forKey: "title")
            defer { didAccessValue(forKey: "title") }
            return primitiveTitle
        }
        set {
            willChangeValue(forKey: "title")
            primitiveTitle = newValue?.trimmingCharacters(in: .whitespaces)
            didChangeValue(forKey: "title")
        }
    }

    /// Not a model property: a key path through it has no Core Data key.
    var displayTitle: String { "\(title ?? "Untitled") (\(pages) pages)" }
}

/// A class with designated initializers of its own, as JSQCoreDataKit's model classes have. On Apple platforms the
/// override of `init(entity:insertInto:)` may be private; here it is `required`, because the framework makes objects
/// of a class from its metatype (see the porting guide).
final class Note: NSManagedObject {
    @Managed var text: String?

    init(text: String, context: NSManagedObjectContext) {
        super.init(entity: NSEntityDescription.entity(forEntityName: "Note", in: context)!, insertInto: context)
        self.text = text
    }

    // `init(entity:insertInto:)` is required here and not on Apple platforms, where the override needs `override`.
    #if canImport(CoreData)
    required override init(entity: NSEntityDescription, insertInto context: NSManagedObjectContext?) {
        super.init(entity: entity, insertInto: context)
    }
    #else
    required init(entity: NSEntityDescription, insertInto context: NSManagedObjectContext?) {
        super.init(entity: entity, insertInto: context)
    }
    #endif
}

enum LibraryModel {
    /// One model for the whole process, as apps have: entities map to classes by name, and Apple's framework
    /// warns when several models claim the same classes.
    static let shared: NSManagedObjectModel = make()

    static func make() -> NSManagedObjectModel {
        let author = NSEntityDescription()
        author.name = "Author"
        author.managedObjectClassName = NSStringFromClass(Author.self)
        let book = NSEntityDescription()
        book.name = "Book"
        book.managedObjectClassName = NSStringFromClass(Book.self)

        let books = NSRelationshipDescription()
        books.name = "books"
        books.destinationEntity = book
        books.maxCount = 0
        books.deleteRule = .cascadeDeleteRule
        let writtenBy = NSRelationshipDescription()
        writtenBy.name = "author"
        writtenBy.destinationEntity = author
        writtenBy.maxCount = 1
        writtenBy.deleteRule = .nullifyDeleteRule
        books.inverseRelationship = writtenBy
        writtenBy.inverseRelationship = books

        let mood = attribute("mood", .stringAttributeType, default: "curious")
        mood.isTransient = true
        author.properties = [
            attribute("name", .stringAttributeType), attribute("born", .dateAttributeType), mood, books,
        ]
        book.properties = [
            attribute("title", .stringAttributeType), attribute("pages", .integer16AttributeType, default: 0),
            attribute("format", .integer16AttributeType, default: 0), attribute("tags", .transformableAttributeType),
            writtenBy,
        ]
        let note = NSEntityDescription()
        note.name = "Note"
        note.managedObjectClassName = NSStringFromClass(Note.self)
        note.properties = [attribute("text", .stringAttributeType)]
        let model = NSManagedObjectModel()
        model.entities = [author, book, note]
        return model
    }

    private static func attribute(_ name: String, _ type: NSAttributeType, default value: Any? = nil)
        -> NSAttributeDescription
    {
        let attribute = NSAttributeDescription()
        attribute.name = name
        attribute.attributeType = type
        attribute.isOptional = true
        attribute.defaultValue = value
        return attribute
    }

    /// A container whose one store is described by `url` and `type`, loaded.
    static func container(url: URL, type: String = NSSQLiteStoreType) throws -> NSPersistentContainer {
        let container = NSPersistentContainer(name: "Library", managedObjectModel: shared)
        let description = NSPersistentStoreDescription(url: url)
        description.type = type
        container.persistentStoreDescriptions = [description]
        var loadError: Error?
        container.loadPersistentStores { _, error in loadError = error }
        if let loadError { throw loadError }
        return container
    }
}

/// A temporary directory, removed when the test is done with it.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("CompatibilityTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    deinit { try? FileManager.default.removeItem(at: url) }
}
