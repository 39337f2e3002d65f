import Foundation
import OpenCoreDataShim
import Testing

/// A coordinator with one store per configuration: each object is saved to the store whose configuration holds its
/// entity.
@Suite struct SQLiteConfigurationTests {
    @Test func eachObjectIsSavedToTheStoreWhoseConfigurationHoldsItsEntity() throws {
        let directory = SQLiteTestDirectory()
        let model = SQLiteSampleModel.make()
        let pets = model.entities.filter { ["Animal", "Dog", "Cat"].contains($0.name) }
        model.setEntities(pets, forConfigurationName: "Pets")
        model.setEntities(model.entities.filter { !pets.contains($0) }, forConfigurationName: "People")
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let (peopleURL, petsURL) = (directory.store("People.sqlite"), directory.store("Pets.sqlite"))
        let peopleStore = try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: "People", at: peopleURL, options: nil)
        let petStore = try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: "Pets", at: petsURL, options: nil)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            // Entities and stores alternate, in runs of different lengths.
            var made: [(object: NSManagedObject, store: NSPersistentStore)] = []
            for (entityName, name, store) in [
                ("Owner", "Ada", peopleStore), ("Dog", "Rex", petStore), ("Dog", "Fido", petStore),
                ("Owner", "Bob", peopleStore), ("Owner", "Cy", peopleStore), ("Cat", "Tom", petStore),
                ("Dog", "Max", petStore), ("Owner", "Di", peopleStore),
            ] {
                let object = NSEntityDescription.insertNewObject(forEntityName: entityName, into: context)
                object.setValue(name, forKey: "name")
                made.append((object, store))
            }
            try context.save()
            for (object, store) in made {
                #expect(!object.objectID.isTemporaryID)
                #expect(object.objectID.persistentStore === store)
            }
        }
        let owners = try RawSQLite.query(peopleURL, "SELECT ZNAME FROM ZOWNER ORDER BY ZNAME")
        #expect(owners == [[.text("Ada")], [.text("Bob")], [.text("Cy")], [.text("Di")]])
        let animals = try RawSQLite.query(petsURL, "SELECT ZNAME FROM ZANIMAL ORDER BY ZNAME")
        #expect(animals == [[.text("Fido")], [.text("Max")], [.text("Rex")], [.text("Tom")]])
    }
}
