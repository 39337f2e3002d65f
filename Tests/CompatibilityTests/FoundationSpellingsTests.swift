// Spellings from Foundation and Objective-C that Core Data code uses and Linux lacks.
import Foundation
import Testing

#if canImport(CoreData)
import CoreData
#else
import OpenCoreData
#endif

extension NSPersistentStoreCoordinator {
    /// A library's factory, in the style real code writes on Apple platforms.
    static func makeInMemory(for model: NSManagedObjectModel) throws -> Self {
        let coordinator = self.init(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil)
        return coordinator
    }
}

/// A coordinator subclass with a designated initializer of its own, as apps write one to bundle their store
/// options. The coordinator's `init(managedObjectModel:)` is `required` here (see `makeInMemory(for:)`), so the
/// subclass repeats it; the same text compiles against Apple's framework, where it makes the initializer required
/// from this class on.
final class OptionsCoordinator: NSPersistentStoreCoordinator {
    private(set) var label = "plain"

    init(label: String, model: NSManagedObjectModel) {
        self.label = label
        super.init(managedObjectModel: model)
    }

    required override init(managedObjectModel model: NSManagedObjectModel) {
        super.init(managedObjectModel: model)
    }
}

@Suite struct FoundationSpellingsTests {
    @Test func aCoordinatorSubclassWithItsOwnInitializerIsMadeBothWays() throws {
        let labelled = OptionsCoordinator(label: "app", model: LibraryModel.shared)
        #expect(labelled.label == "app")
        let made = try OptionsCoordinator.makeInMemory(for: LibraryModel.shared)
        #expect(made.label == "plain")
        #expect(made.persistentStores.count == 1)
    }

    @Test func anAutoreleasePoolReturnsWhatItsBodyReturns() throws {
        let container = try LibraryModel.container(url: URL(fileURLWithPath: "/dev/null"))
        let context = container.newBackgroundContext()
        let count = try context.performAndWait {
            for batch in 0..<3 {
                try autoreleasepool {
                    for index in 0..<10 {
                        Author(context: context).name = "Author \(batch)-\(index)"
                    }
                    try context.save()
                    context.reset()
                }
            }
            return try context.count(for: NSFetchRequest<Author>(entityName: "Author"))
        }
        #expect(count == 30)
    }

    @Test func aCoordinatorIsMadeFromItsMetatype() throws {
        let coordinator = try NSPersistentStoreCoordinator.makeInMemory(for: LibraryModel.shared)
        #expect(coordinator.persistentStores.count == 1)
        #expect(coordinator.managedObjectModel === LibraryModel.shared)
    }
}

@Suite struct BinaryStoreFileTests {
    @Test func aNewBinaryStoreIsOnDiskOnceAdded() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("Library.binary")
        let container = try LibraryModel.container(url: url, type: NSBinaryStoreType)
        #expect(FileManager.default.fileExists(atPath: url.path))
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            ofType: NSBinaryStoreType, at: url, options: nil)
        #expect(metadata[NSStoreTypeKey] as? String == NSBinaryStoreType)
        #expect(try container.viewContext.count(for: NSFetchRequest<Author>(entityName: "Author")) == 0)
    }
}
