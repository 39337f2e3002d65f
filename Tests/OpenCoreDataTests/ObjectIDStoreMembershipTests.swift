import Foundation
import Testing

@testable import OpenCoreDataCore

/// Which store an object ID belongs to, as the coordinator asks it for every object that goes away: IDs made before
/// and after the store's identifier changes belong to it, IDs of another store do not.
@Suite struct ObjectIDStoreMembershipTests {
    private static func model() -> NSManagedObjectModel {
        let name = CompanyModel.attribute("name", .stringAttributeType)
        let note = NSEntityDescription()
        note.name = "Note"
        note.properties = [name]
        let model = NSManagedObjectModel()
        model.entities = [note]
        model.setEntities([note], forConfigurationName: "First")
        model.setEntities([note], forConfigurationName: "Second")
        return model
    }

    @Test func idsBelongToTheirStoreAcrossIdentifierChangesAndToNoOther() throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.model())
        let first = try coordinator.addPersistentStore(
            ofType: NSInMemoryStoreType, configurationName: "First", at: nil)
        let second = try coordinator.addPersistentStore(
            ofType: NSInMemoryStoreType, configurationName: "Second", at: nil)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator

        func savedNote(in store: NSPersistentStore) throws -> NSManagedObjectID {
            try context.performAndWait {
                let note = NSEntityDescription.insertNewObject(forEntityName: "Note", into: context)
                context.assign(note, to: store)
                try context.save()
                return note.objectID
            }
        }

        let before = try savedNote(in: first)
        let other = try savedNote(in: second)
        first.identifier = "renamed-" + UUID().uuidString
        let after = try savedNote(in: first)

        for id in [before, after] {
            #expect(id._isInStore(first))
            #expect(!id._isInStore(second))
        }
        #expect(other._isInStore(second))
        #expect(!other._isInStore(first))
        #expect(after.uriRepresentation().host == first.identifier)
        #expect(before.uriRepresentation().host != first.identifier)
    }
}
