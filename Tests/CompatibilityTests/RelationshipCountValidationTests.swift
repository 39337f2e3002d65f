// Apple's rule for the counts of to-many relationships: optionality is about nil, and a to-many value is never
// nil, so a non-optional relationship with no minimum may be empty (Xcode's default for a to-many that is not
// marked optional); a minimum applies to a non-optional relationship always, to an optional one when it holds
// something.
import Foundation
import Testing

#if canImport(CoreData)
import CoreData
#else
import OpenCoreData
#endif

@Suite struct RelationshipCountValidationTests {
    /// A model of shelves holding books, with the shelf's `books` as given.
    private func context(optional: Bool, minCount: Int) throws -> NSManagedObjectContext {
        let shelf = NSEntityDescription()
        shelf.name = "Shelf"
        let book = NSEntityDescription()
        book.name = "Volume"
        let books = NSRelationshipDescription()
        books.name = "books"
        books.destinationEntity = book
        books.maxCount = 0
        books.minCount = minCount
        books.isOptional = optional
        let onShelf = NSRelationshipDescription()
        onShelf.name = "shelf"
        onShelf.destinationEntity = shelf
        onShelf.maxCount = 1
        books.inverseRelationship = onShelf
        onShelf.inverseRelationship = books
        shelf.properties = [books]
        book.properties = [onShelf]
        let model = NSManagedObjectModel()
        model.entities = [shelf, book]
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
        let context = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    private func saveShelf(holding count: Int, in context: NSManagedObjectContext) -> Int? {
        let shelf = NSEntityDescription.insertNewObject(forEntityName: "Shelf", into: context)
        for _ in 0..<count {
            NSEntityDescription.insertNewObject(forEntityName: "Volume", into: context).setValue(shelf, forKey: "shelf")
        }
        do {
            try context.save()
            return nil
        } catch {
            context.rollback()
            return (error as NSError).code
        }
    }

    @Test func anEmptyNonOptionalRelationshipWithNoMinimumIsValid() throws {
        #expect(saveShelf(holding: 0, in: try context(optional: false, minCount: 0)) == nil)
    }

    @Test func aNonOptionalRelationshipHoldsItsMinimum() throws {
        let context = try context(optional: false, minCount: 2)
        #expect(saveShelf(holding: 0, in: context) == NSValidationRelationshipLacksMinimumCountError)
        #expect(saveShelf(holding: 1, in: context) == NSValidationRelationshipLacksMinimumCountError)
        #expect(saveShelf(holding: 2, in: context) == nil)
    }

    @Test func anOptionalRelationshipHoldsItsMinimumOnlyWhenNotEmpty() throws {
        let context = try context(optional: true, minCount: 2)
        #expect(saveShelf(holding: 0, in: context) == nil)
        #expect(saveShelf(holding: 1, in: context) == NSValidationRelationshipLacksMinimumCountError)
    }
}
