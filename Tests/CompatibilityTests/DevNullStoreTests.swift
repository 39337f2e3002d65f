// `/dev/null` as a SQLite store's URL gives a store that lives in memory (Apple's recommendation for tests), and no
// store operation ever touches the device or anything else that is not a store file.
import Foundation
import Testing

#if canImport(CoreData)
import CoreData
#else
import OpenCoreData
#endif

@Suite struct DevNullStoreTests {
    /// The device's identity, to show that nothing replaced or changed it.
    private func deviceIdentity() throws -> [FileAttributeKey: AnyHashable] {
        let attributes = try FileManager.default.attributesOfItem(atPath: "/dev/null")
        var identity: [FileAttributeKey: AnyHashable] = [:]
        for key in [FileAttributeKey.type, .posixPermissions, .systemFileNumber, .ownerAccountID] {
            identity[key] = attributes[key] as? AnyHashable
        }
        return identity
    }

    private func companionFilesOfDevNull() -> [String] {
        ["-wal", "-shm", "-journal"].filter { FileManager.default.fileExists(atPath: "/dev/null" + $0) }
    }

    @Test func aSQLiteStoreAtDevNullKeepsItsObjectsInMemory() throws {
        let before = try deviceIdentity()
        let container = try LibraryModel.container(url: URL(fileURLWithPath: "/dev/null"))
        let context = container.viewContext
        let author = Author(context: context)
        author.name = "Ursula"
        let book = Book(context: context)
        book.title = "The Dispossessed"
        book.author = author
        try context.save()

        let other = container.newBackgroundContext()
        let titles = try other.performAndWait {
            try other.fetch(NSFetchRequest<Book>(entityName: "Book")).map { $0.title }
        }
        #expect(titles == ["The Dispossessed"])
        #expect(container.persistentStoreCoordinator.persistentStores.first?.type == NSSQLiteStoreType)
        #expect(try deviceIdentity() == before)
        #expect(companionFilesOfDevNull().isEmpty)
    }

    @Test func eachDevNullStoreIsItsOwn() throws {
        let first = try LibraryModel.container(url: URL(fileURLWithPath: "/dev/null"))
        let second = try LibraryModel.container(url: URL(fileURLWithPath: "/dev/null"))
        Author(context: first.viewContext).name = "Octavia"
        try first.viewContext.save()
        #expect(try second.viewContext.count(for: NSFetchRequest<Author>(entityName: "Author")) == 0)
        #expect(try first.viewContext.count(for: NSFetchRequest<Author>(entityName: "Author")) == 1)
    }

    @Test func destroyingAndReaddingADevNullStoreStartsEmptyAndLeavesTheDevice() throws {
        let before = try deviceIdentity()
        let devNull = URL(fileURLWithPath: "/dev/null")
        let container = try LibraryModel.container(url: devNull)
        Author(context: container.viewContext).name = "Iain"
        try container.viewContext.save()
        let coordinator = container.persistentStoreCoordinator
        try coordinator.destroyPersistentStore(at: devNull, type: .sqlite)
        #expect(coordinator.persistentStores.isEmpty)
        try coordinator.addPersistentStore(type: .sqlite, at: devNull)
        container.viewContext.reset()
        #expect(try container.viewContext.count(for: NSFetchRequest<Author>(entityName: "Author")) == 0)
        #expect(try deviceIdentity() == before)
        #expect(companionFilesOfDevNull().isEmpty)
    }

    @Test func aDirectoryIsNotOpenedAsAStoreAndStaysAsItIs() throws {
        let directory = try TemporaryDirectory()
        let inside = directory.file("keep.txt")
        try Data("kept".utf8).write(to: inside)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: LibraryModel.shared)
        #expect(throws: NSError.self) {
            try coordinator.addPersistentStore(
                ofType: NSSQLiteStoreType, configurationName: nil, at: directory.url, options: nil)
        }
        #expect(throws: NSError.self) {
            try coordinator.destroyPersistentStore(at: directory.url, ofType: NSSQLiteStoreType, options: nil)
        }
        #expect(try Data(contentsOf: inside) == Data("kept".utf8))
        #expect(coordinator.persistentStores.isEmpty)
    }

    @Test func aPipeIsRefusedWithoutBeingOpened() throws {
        let directory = try TemporaryDirectory()
        let pipe = directory.file("Store.sqlite")
        #expect(mkfifo(pipe.path, 0o600) == 0)
        // Opening a pipe for reading would block until a writer comes; the store must not even try.
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: LibraryModel.shared)
        #expect(throws: NSError.self) {
            try coordinator.addPersistentStore(
                ofType: NSSQLiteStoreType, configurationName: nil, at: pipe, options: nil)
        }
        let attributes = try FileManager.default.attributesOfItem(atPath: pipe.path)
        #expect(attributes[.type] as? FileAttributeType != .typeRegular)
        #expect(!FileManager.default.fileExists(atPath: pipe.path + "-wal"))
    }
}
