// When a context tells observers about changes: a main-queue context used on the main thread ends its event (and
// posts the objects-did-change notification) when the main queue next runs, as Apple's does at the end of the run
// loop's iteration; what each event's notification lists; and the objects a did-save notification lists still read
// their values.
import Foundation
import Testing

#if canImport(CoreData)
import CoreData
#else
import OpenCoreData
#endif

/// Collects notifications on the thread that posts them.
private final class NotificationLog: @unchecked Sendable {
    private let lock = NSLock()
    private var notes: [Notification] = []
    private var tokens: [NSObjectProtocol] = []

    init(_ name: Notification.Name, object: AnyObject) {
        tokens.append(
            NotificationCenter.default.addObserver(forName: name, object: object, queue: nil) { [weak self] note in
                self?.append(note)
            })
    }

    private func append(_ note: Notification) { lock.withLock { notes.append(note) } }
    var received: [Notification] { lock.withLock { notes } }

    deinit { tokens.forEach(NotificationCenter.default.removeObserver) }
}

@Suite struct ContextEventTests {
    @MainActor
    @Test func aMainQueueContextPostsItsChangesWhenTheMainQueueRunsNext() async throws {
        let container = try LibraryModel.container(url: URL(fileURLWithPath: "/dev/null"))
        let context = container.viewContext
        let log = NotificationLog(.NSManagedObjectContextObjectsDidChange, object: context)
        let author = Author(context: context)
        author.name = "Tove"
        #expect(log.received.isEmpty)
        for _ in 0..<100 where log.received.isEmpty {
            try await Task.sleep(for: .milliseconds(10))
        }
        let inserted = log.received.first?.userInfo?[NSInsertedObjectsKey] as? Set<NSManagedObject>
        #expect(log.received.count == 1)
        #expect(inserted == [author])
    }

    @Test func objectsListedAsDeletedInADidSaveNotificationStillReadTheirValues() throws {
        let container = try LibraryModel.container(url: URL(fileURLWithPath: "/dev/null"))
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let book = Book(context: context)
            book.title = "The Big Nerd Ranch Guide"
            try context.save()

            final class Titles: @unchecked Sendable { var deleted: [String?] = [] }
            let titles = Titles()
            let token = NotificationCenter.default.addObserver(
                forName: .NSManagedObjectContextDidSave, object: context, queue: nil
            ) { note in
                let deleted = note.userInfo?[NSDeletedObjectsKey] as? Set<NSManagedObject> ?? []
                titles.deleted += deleted.map { $0.value(forKey: "title") as? String }
            }
            defer { NotificationCenter.default.removeObserver(token) }
            context.delete(book)
            try context.save()
            #expect(titles.deleted == ["The Big Nerd Ranch Guide"])
        }
    }

    @Test func anObjectInsertedAndDeletedInOneEventIsAnnouncedAsDeleted() throws {
        let container = try LibraryModel.container(url: URL(fileURLWithPath: "/dev/null"))
        let context = container.newBackgroundContext()
        let log = NotificationLog(.NSManagedObjectContextObjectsDidChange, object: context)
        let deletedIDs = context.performAndWait {
            let author = Author(context: context)
            context.delete(author)
            return [author.objectID]
        }
        let note = try #require(log.received.last)
        let deleted = note.userInfo?[NSDeletedObjectsKey] as? Set<NSManagedObject> ?? []
        let inserted = note.userInfo?[NSInsertedObjectsKey] as? Set<NSManagedObject> ?? []
        #expect(deleted.map(\.objectID) == deletedIDs)
        #expect(inserted.isEmpty)
        #expect(context.performAndWait { context.insertedObjects.isEmpty && context.deletedObjects.isEmpty })
    }

    @Test func eachEventAnnouncesTheObjectsChangedInIt() throws {
        let container = try LibraryModel.container(url: URL(fileURLWithPath: "/dev/null"))
        let context = container.newBackgroundContext()
        let (author, book) = try context.performAndWait {
            let author = Author(context: context)
            author.name = "Tove"
            try context.save()
            return (author, Book(context: context))
        }
        let log = NotificationLog(.NSManagedObjectContextObjectsDidChange, object: context)
        context.performAndWait { author.name = "Tove Jansson" }
        context.performAndWait { author.name = "T. Jansson" }
        context.performAndWait { book.title = "Moominsummer Madness" }
        let notes = log.received
        func objects(_ key: String, _ index: Int) -> Set<NSManagedObject> {
            notes.indices.contains(index) ? notes[index].userInfo?[key] as? Set<NSManagedObject> ?? [] : []
        }
        #expect(notes.count == 3)
        #expect(objects(NSUpdatedObjectsKey, 0) == [author])
        #expect(objects(NSUpdatedObjectsKey, 1) == [author])
        #expect(objects(NSUpdatedObjectsKey, 2) == [book])
        #expect(objects(NSInsertedObjectsKey, 2).isEmpty)
    }

    @Test func anObjectChangedAndDeletedInOneEventIsAnnouncedAsDeletedOnly() throws {
        let container = try LibraryModel.container(url: URL(fileURLWithPath: "/dev/null"))
        let context = container.newBackgroundContext()
        let author = try context.performAndWait {
            let author = Author(context: context)
            author.name = "Tove"
            try context.save()
            return author
        }
        let log = NotificationLog(.NSManagedObjectContextObjectsDidChange, object: context)
        context.performAndWait {
            author.name = "Tove Jansson"
            context.delete(author)
        }
        let note = try #require(log.received.last)
        let deleted = note.userInfo?[NSDeletedObjectsKey] as? Set<NSManagedObject>
        let updated = note.userInfo?[NSUpdatedObjectsKey] as? Set<NSManagedObject>
        #expect(deleted == [author])
        #expect(updated == nil)
    }

    /// An object whose context went away before its event ended, inserted into another context, is that context's
    /// insertion like any other: announced, saved, and its later changes announced too.
    @Test func anObjectLeftInAnUnfinishedEventIsAnnouncedByTheContextItMovesTo() throws {
        let container = try LibraryModel.container(url: URL(fileURLWithPath: "/dev/null"))
        let entity = try #require(container.managedObjectModel.entitiesByName["Author"])
        let author = Author(entity: entity, insertInto: nil)
        var first: NSManagedObjectContext? = container.newBackgroundContext()
        // Used directly, off its queue (as code without concurrency debugging may): the event stays open.
        first?.insert(author)
        author.name = "Tove"
        first = nil
        let second = container.newBackgroundContext()
        let log = NotificationLog(.NSManagedObjectContextObjectsDidChange, object: second)
        second.performAndWait {
            second.insert(author)
            #expect(second.insertedObjects == [author])
        }
        let inserted = log.received.last?.userInfo?[NSInsertedObjectsKey] as? Set<NSManagedObject>
        #expect(inserted == [author])
        try second.performAndWait {
            try second.save()
            author.name = "Tove Jansson"
        }
        let updated = log.received.last?.userInfo?[NSUpdatedObjectsKey] as? Set<NSManagedObject>
        #expect(updated == [author])
    }

    /// The did-save notification lists the insertions the save wrote, also when events since the last announced
    /// insertions took one back and brought a deleted insertion back.
    @Test func aSaveAnnouncesTheInsertionsItWroteAfterEventsChangedThem() throws {
        let container = try LibraryModel.container(url: URL(fileURLWithPath: "/dev/null"))
        let context = container.newBackgroundContext()
        let log = NotificationLog(.NSManagedObjectContextDidSave, object: context)
        let (kept, returned) = try context.performAndWait {
            let returned = Author(context: context)
            returned.name = "Returned"
            context.delete(returned)
            context.processPendingChanges()
            let dropped = Author(context: context)
            dropped.name = "Dropped"
            let kept = Author(context: context)
            kept.name = "Kept"
            context.processPendingChanges()
            context.delete(dropped)
            context.insert(returned)
            context.processPendingChanges()
            try context.save()
            return (kept, returned)
        }
        let inserted = log.received.last?.userInfo?[NSInsertedObjectsKey] as? Set<NSManagedObject>
        #expect(inserted == [kept, returned])
    }

    /// The did-save notification lists the deletions the save wrote, also when, after an event announced every
    /// deletion, one was taken back (`insert(_:)` of a deleted object) and another made: as many deletions as were
    /// announced, not the same ones.
    @Test func aSaveAnnouncesTheDeletionsItWroteAfterEventsChangedThem() throws {
        let container = try LibraryModel.container(url: URL(fileURLWithPath: "/dev/null"))
        let context = container.newBackgroundContext()
        let log = NotificationLog(.NSManagedObjectContextDidSave, object: context)
        let (deleted, restored, deletedLater) = try context.performAndWait {
            let authors = ["Deleted", "Restored", "Deleted later"].map { name in
                let author = Author(context: context)
                author.name = name
                return author
            }
            try context.save()
            context.delete(authors[0])
            context.delete(authors[1])
            context.processPendingChanges()
            context.insert(authors[1])
            context.delete(authors[2])
            try context.save()
            return (authors[0], authors[1], authors[2])
        }
        let deletions = log.received.last?.userInfo?[NSDeletedObjectsKey] as? Set<NSManagedObject>
        #expect(deletions == [deleted, deletedLater])
        let restoredIsDeleted = context.performAndWait { restored.isDeleted }
        #expect(!restoredIsDeleted)
    }
}
