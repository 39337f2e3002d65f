import Foundation
import Testing

@testable import OpenCoreDataCore

/// The model's back references to entities (a property's entity, a relationship's destination, a superentity, an
/// index's entity) neither keep the entity alive nor form weak references to it.
@Suite struct EntityReferenceTests {
    /// A model with an inheritance hierarchy, relationships both ways and an index: every kind of back reference.
    private static func libraryModel() -> NSManagedObjectModel {
        let shelf = NSEntityDescription()
        shelf.name = "Shelf"
        let item = NSEntityDescription()
        item.name = "Item"
        item.isAbstract = true
        let book = NSEntityDescription()
        book.name = "Book"
        item.subentities = [book]

        let title = CompanyModel.attribute("title", .stringAttributeType)
        let items = ValidationTests.relationship("items", to: item, maxCount: 0)
        let place = ValidationTests.relationship("shelf", to: shelf, maxCount: 1)
        items.inverseRelationship = place
        place.inverseRelationship = items
        shelf.properties = [items]
        item.properties = [title, place]
        let byTitle = NSFetchIndexElementDescription(property: title, collationType: .binary)
        item.indexes = [NSFetchIndexDescription(name: "byTitle", elements: [byTitle])]

        let model = NSManagedObjectModel()
        model.entities = [shelf, item, book]
        return model
    }

    @Test func objectsOfAModelInUseRetainTheirEntitiesWithoutTheRuntimesSlowPath() throws {
        let model = Self.libraryModel()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            let shelf = NSEntityDescription.insertNewObject(forEntityName: "Shelf", into: context)
            let book = NSEntityDescription.insertNewObject(forEntityName: "Book", into: context)
            book.setValue("Emma", forKey: "title")
            book.setValue(shelf, forKey: "shelf")
            try context.save()
            let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
            request.predicate = NSPredicate(format: "title == %@", "Emma")
            #expect(try context.fetch(request).count == 1)
        }
        // Each weak reference adds to the weak count; a new entity, referenced by nothing, gives the base.
        let base = _getWeakRetainCount(NSEntityDescription())
        for entity in model.entities {
            #expect(_getWeakRetainCount(entity) == base, "\(entity.name ?? "") is referenced weakly")
        }
    }

    @Test func backReferencesReadNilOnceTheEntityHasGone() {
        let title = CompanyModel.attribute("title", .stringAttributeType)
        let items: NSRelationshipDescription
        let index: NSFetchIndexDescription
        let book = NSEntityDescription()
        book.name = "Book"
        do {
            let item = NSEntityDescription()
            item.name = "Item"
            item.subentities = [book]
            item.properties = [title]
            items = ValidationTests.relationship("items", to: item, maxCount: 0)
            let byTitle = NSFetchIndexElementDescription(property: title, collationType: .binary)
            index = NSFetchIndexDescription(name: "byTitle", elements: [byTitle])
            item.indexes = [index]
            #expect(title._entity === item)
            #expect(items.destinationEntity === item)
            #expect(book.superentity === item)
            #expect(index.entity === item)
        }
        #expect(title._entity == nil)
        #expect(items.destinationEntity == nil)
        #expect(book.superentity == nil)
        #expect(index._entity == nil)
    }
}
