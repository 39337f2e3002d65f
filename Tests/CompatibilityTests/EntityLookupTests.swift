// `entity()` and `fetchRequest()` of a subclass when a process has loaded its model more than once, as test suites
// do when every test makes a fresh stack: the request works in whichever of those models' contexts it runs.
import Foundation
import Testing

#if canImport(CoreData)
import CoreData
#else
import OpenCoreData
#endif

@Suite struct EntityLookupTests {
    @Test func aClassFetchRequestWorksInAContextOfAnotherCopyOfTheModel() throws {
        let first = LibraryModel.make()
        let second = LibraryModel.make()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: first)
        try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        _ = second

        try context.performAndWait {
            let author = Author(context: context)
            author.name = "Matthew Lewis"
            #expect(author.entity === first.entitiesByName["Author"])
            try context.save()

            let request = Author.fetchRequest()
            #expect(request.entityName == "Author")
            let found = try context.fetch(request).compactMap { $0 as? Author }
            #expect(found.map(\.name) == ["Matthew Lewis"])
            #expect(try context.count(for: request) == 1)
        }
    }

    /// A context moved to a coordinator of another copy of the model fetches by entity name from that model: what it
    /// resolved the name to before must not be kept.
    @Test func aFetchByNameAfterTheCoordinatorChangesUsesTheNewModel() throws {
        func stack(_ model: NSManagedObjectModel, author name: String) throws -> NSPersistentStoreCoordinator {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil)
            let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            try context.performAndWait {
                Author(context: context).name = name
                try context.save()
            }
            return coordinator
        }
        let first = LibraryModel.make()
        let second = LibraryModel.make()
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = try stack(first, author: "Matthew Lewis")
        try context.performAndWait {
            let found = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Author"))
            #expect(found.map { $0.value(forKey: "name") as? String } == ["Matthew Lewis"])
            #expect(found.first?.entity === first.entitiesByName["Author"])
        }
        context.persistentStoreCoordinator = try stack(second, author: "Ann Radcliffe")
        try context.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Author")
            let found = try context.fetch(request)
            #expect(found.map { $0.value(forKey: "name") as? String } == ["Ann Radcliffe"])
            #expect(found.first?.entity === second.entitiesByName["Author"])
            #expect(request.entity == nil || request.entity === second.entitiesByName["Author"])
        }
    }
}
