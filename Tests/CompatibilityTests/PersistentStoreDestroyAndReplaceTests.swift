// destroyPersistentStore and replacePersistentStore on SQLite stores: the file is emptied or overwritten in place,
// as Apple's documentation of the coordinator describes, so that a coordinator elsewhere holding the store open is
// not left with a deleted file.
import Foundation
import Testing

#if canImport(CoreData)
import CoreData
#else
import OpenCoreData
#endif

@Suite struct PersistentStoreDestroyAndReplaceTests {
    private func store(at url: URL, authors names: [String]) throws -> NSPersistentContainer {
        let container = try LibraryModel.container(url: url)
        for name in names { Author(context: container.viewContext).name = name }
        try container.viewContext.save()
        return container
    }

    private func authorNames(in container: NSPersistentContainer) throws -> [String] {
        let request = NSFetchRequest<Author>(entityName: "Author")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        let context = container.newBackgroundContext()
        return try context.performAndWait { try context.fetch(request).compactMap(\.name) }
    }

    @Test func destroyingEmptiesTheStoreAndANewStoreCanBeAddedThere() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("Library.sqlite")
        let container = try store(at: url, authors: ["Ada", "Grace"])
        let coordinator = container.persistentStoreCoordinator
        try coordinator.destroyPersistentStore(at: url, ofType: NSSQLiteStoreType, options: nil)
        #expect(coordinator.persistentStores.isEmpty)

        let reopened = try LibraryModel.container(url: url)
        #expect(try authorNames(in: reopened) == [])
    }

    @Test func destroyingUnderAnotherCoordinatorLeavesItAnErrorNotACrash() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("Library.sqlite")
        let holder = try store(at: url, authors: ["Ada"])
        let destroyer = NSPersistentStoreCoordinator(managedObjectModel: LibraryModel.shared)
        try destroyer.destroyPersistentStore(at: url, type: .sqlite)

        // The holder's connection survives: it reads an emptied database (an error or no rows), never a crash.
        let names = try? authorNames(in: holder)
        #expect(names == nil || names == [])
        let fresh = try LibraryModel.container(url: url)
        #expect(try authorNames(in: fresh) == [])
    }

    @Test func destroyingAStoreThatDoesNotExistSucceeds() throws {
        let directory = try TemporaryDirectory()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: LibraryModel.shared)
        try coordinator.destroyPersistentStore(at: directory.file("None.sqlite"), type: .sqlite)
        #expect(!FileManager.default.fileExists(atPath: directory.file("None.sqlite").path))
    }

    @Test func destroyingAFileThatIsNotAStoreFailsAndKeepsIt() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("notes.sqlite")
        let text = Data(repeating: 0x41, count: 4096)
        try text.write(to: url)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: LibraryModel.shared)
        #expect(throws: NSError.self) { try coordinator.destroyPersistentStore(at: url, type: .sqlite) }
        #expect(try Data(contentsOf: url) == text)
    }

    @Test func replacingCopiesTheSourceStoreOverTheDestination() throws {
        let directory = try TemporaryDirectory()
        let source = directory.file("Source.sqlite")
        let destination = directory.file("Destination.sqlite")
        _ = try store(at: source, authors: ["Ada", "Grace"])
        let holder = try store(at: destination, authors: ["Nobody"])
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: LibraryModel.shared)
        try coordinator.replacePersistentStore(
            at: destination, destinationOptions: nil, withPersistentStoreFrom: source, sourceOptions: nil,
            type: .sqlite)

        let reopened = try LibraryModel.container(url: destination)
        #expect(try authorNames(in: reopened) == ["Ada", "Grace"])
        #expect(try authorNames(in: holder) == ["Ada", "Grace"])
    }
}
