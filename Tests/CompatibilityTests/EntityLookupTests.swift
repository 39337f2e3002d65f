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
}
