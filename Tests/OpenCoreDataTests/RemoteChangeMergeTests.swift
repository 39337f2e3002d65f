import Foundation
import OpenCoreData
import Testing

/// Changes saved through another coordinator on the same file (as another process saves them) reach the file behind
/// this coordinator's row cache: merging them must show the new values, not the cached ones.
@Suite struct RemoteChangeMergeTests {
    func ownerNamed(_ name: String, in context: NSManagedObjectContext) throws -> NSManagedObject {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Owner")
        request.predicate = NSPredicate(format: "name == %@", name)
        return try #require(try context.fetch(request).first)
    }

    /// A context on one coordinator holding Ada with her values loaded, and a context on another coordinator of the
    /// same file.
    func setUp(_ directory: SQLiteTestDirectory) throws -> (
        NSManagedObjectContext, NSManagedObject, NSManagedObjectContext
    ) {
        let url = directory.store()
        let model = SQLiteSampleModel.make()
        let view = SQLiteStack.context(try SQLiteStack.coordinator(model, at: url))
        let ada = try view.performAndWait {
            let ada = NSEntityDescription.insertNewObject(forEntityName: "Owner", into: view)
            ada.setValue("Ada", forKey: "name")
            try view.save()
            return ada
        }
        return (view, ada, SQLiteStack.context(try SQLiteStack.coordinator(model, at: url)))
    }

    @Test func mergingARemoteSaveReadsTheNewValues() throws {
        let directory = SQLiteTestDirectory()
        let (view, ada, other) = try setUp(directory)
        try other.performAndWait {
            try ownerNamed("Ada", in: other).setValue("Ada Lovelace", forKey: "name")
            try other.save()
        }
        NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSUpdatedObjectsKey: [ada.objectID]], into: [view])
        view.performAndWait { #expect(ada.value(forKey: "name") as? String == "Ada Lovelace") }
    }

    @Test func mergingAnotherCoordinatorsDidSaveNotificationReadsTheNewValues() throws {
        let directory = SQLiteTestDirectory()
        let (view, ada, other) = try setUp(directory)
        let saved = Locked<Notification?>(nil)
        let observer = NotificationCenter.default.addObserver(
            forName: NSManagedObjectContext.didSaveObjectsNotification, object: other, queue: nil
        ) { note in saved.withLock { $0 = note } }
        defer { NotificationCenter.default.removeObserver(observer) }
        try other.performAndWait {
            try ownerNamed("Ada", in: other).setValue("Countess", forKey: "name")
            try other.save()
        }
        let note = try #require(saved.withLock { $0 })
        view.performAndWait {
            view.mergeChanges(fromContextDidSave: note)
            #expect(ada.value(forKey: "name") as? String == "Countess")
        }
    }
}
