// The ways real code makes managed objects: generically from a metatype (`T(context:)`), through `Self` in class
// methods and protocol extensions, and through a subclass's own designated initializer.
import Foundation
import Testing

#if canImport(CoreData)
import CoreData
#else
import OpenCoreData
#endif

private protocol Creatable: NSManagedObject {}

extension Creatable {
    static func create(in context: NSManagedObjectContext) -> Self {
        Self(context: context)
    }
}

extension Author: Creatable {}

extension NSManagedObject {
    fileprivate class func insertWithEntityName(_ name: String, into context: NSManagedObjectContext) -> Self {
        self.init(entity: NSEntityDescription.entity(forEntityName: name, in: context)!, insertInto: context)
    }
}

private func make<T: NSManagedObject>(_ type: T.Type, in context: NSManagedObjectContext) -> T {
    T(context: context)
}

@Suite struct ManagedObjectInitializerTests {
    @Test func objectsAreMadeFromMetatypes() throws {
        let container = try LibraryModel.container(url: URL(fileURLWithPath: "/dev/null"))
        let context = container.viewContext
        let book = make(Book.self, in: context)
        let author = Author.create(in: context)
        let other = Book.insertWithEntityName("Book", into: context)
        #expect(book.entity.name == "Book" && other.entity.name == "Book" && author.entity.name == "Author")
        #expect(context.insertedObjects.count == 3)
    }

    @Test func aSubclassesOwnDesignatedInitializerMakesItsObjects() throws {
        let container = try LibraryModel.container(url: URL(fileURLWithPath: "/dev/null"))
        let context = container.viewContext
        let note = Note(text: "Remember the milk", context: context)
        let inherited = Note(context: context)
        try context.save()
        context.reset()
        let request = NSFetchRequest<Note>(entityName: "Note")
        request.sortDescriptors = [NSSortDescriptor(key: "text", ascending: true)]
        let fetched = try context.fetch(request)
        #expect(fetched.map(\.text) == [nil, "Remember the milk"])
        #expect(note.objectID.isTemporaryID == false && inherited.objectID != note.objectID)
    }
}

@Suite struct EntitylessManagedObjectTests {
    /// Apple's framework lets code make an object with `init()` (complaining that the designated initializer was not
    /// called); code uses such objects as stand-ins, for example as arguments of a sort descriptor's comparator.
    @Test func anObjectMadeWithInitIsAStandIn() {
        let first = Book()
        let second = Book()
        #expect(first !== second)
        #expect(first.managedObjectContext == nil)
        let descriptor = NSSortDescriptor(key: "title", ascending: true) { _, _ in .orderedAscending }
        #expect(descriptor.comparator(first, second) == .orderedAscending)
    }
}
