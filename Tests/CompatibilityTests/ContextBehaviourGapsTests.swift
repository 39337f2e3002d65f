// Behaviour that ported test suites rely on, each found by running public projects' tests unchanged.
import Foundation
import Testing

#if canImport(CoreData)
import CoreData
#else
import OpenCoreData
#endif

@Suite struct ContextBehaviourGapsTests {
    private func savedAuthor(named name: String, in container: NSPersistentContainer) throws -> NSManagedObjectID {
        let writer = container.newBackgroundContext()
        return try writer.performAndWait {
            let author = Author(context: writer)
            author.name = name
            try writer.save()
            return author.objectID
        }
    }

    @Test func fetchingWithoutFaultsFillsObjectsThatWereRegisteredAsFaults() throws {
        let directory = try TemporaryDirectory()
        let container = try LibraryModel.container(url: directory.file("Library.sqlite"))
        let id = try savedAuthor(named: "Mary Shelley", in: container)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let registered = context.object(with: id)
            #expect(registered.isFault)
            let request = NSFetchRequest<Author>(entityName: "Author")
            request.returnsObjectsAsFaults = false
            let fetched = try context.fetch(request)
            #expect(fetched.first === registered)
            #expect(!registered.isFault)
        }
    }

    @Test func aNullConstantPrintsAsNullInAPredicateFormat() {
        let predicate = NSPredicate(format: "name == %@", NSNull())
        #expect(predicate.predicateFormat == "name == <null>")
        let expression = NSExpression(forConstantValue: NSNull())
        #expect(expression.description == "<null>")
        #expect(expression.constantValue is NSNull)
        #expect(NSPredicate(format: "name == nil").predicateFormat == "name == nil")

        let author = Author(entity: LibraryModel.shared.entitiesByName["Author"]!, insertInto: nil)
        #expect(predicate.evaluate(with: author))
        author.name = "William Beckford"
        #expect(!predicate.evaluate(with: author))
    }

    @Test func metadataSetOnAStoreIsWrittenByTheNextSaveWithoutChanges() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("Library.sqlite")
        let container = try LibraryModel.container(url: url)
        let coordinator = container.persistentStoreCoordinator
        let store = try #require(coordinator.persistentStores.first)
        var metadata = coordinator.metadata(for: store)
        metadata["ImportedThrough"] = "2026-11-25"
        coordinator.setMetadata(metadata, for: store)
        let context = container.viewContext
        #expect(!context.hasChanges)
        try context.save()

        let onDisk = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            ofType: NSSQLiteStoreType, at: url, options: nil)
        #expect(onDisk["ImportedThrough"] as? String == "2026-11-25")
    }

    @Test func aChildThatMergesAutomaticallySeesItsParentsSaves() throws {
        let container = try LibraryModel.container(url: URL(fileURLWithPath: "/dev/null"))
        let parent = container.newBackgroundContext()
        let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        child.parent = parent
        child.automaticallyMergesChangesFromParent = true

        let (authorID, childCopyID): (NSManagedObjectID, NSManagedObjectID) = try parent.performAndWait {
            let author = Author(context: parent)
            author.name = "Ann Radcliffe"
            try parent.save()
            return (author.objectID, author.objectID)
        }
        let childAuthor = child.performAndWait { child.object(with: childCopyID) as! Author }
        #expect(child.performAndWait { childAuthor.name } == "Ann Radcliffe")

        try parent.performAndWait {
            let author = try #require(parent.existingObject(with: authorID) as? Author)
            author.name = "Ann Ward Radcliffe"
            try parent.save()
        }
        #expect(child.performAndWait { childAuthor.name } == "Ann Ward Radcliffe")
    }

    @Test func transientValuesStayInTheirContext() throws {
        let directory = try TemporaryDirectory()
        let container = try LibraryModel.container(url: directory.file("Library.sqlite"))
        let writer = container.newBackgroundContext()
        let id = try writer.performAndWait {
            let author = Author(context: writer)
            author.name = "Horace Walpole"
            #expect(author.mood == "curious")
            author.mood = "gloomy"
            try writer.save()
            #expect(author.mood == "gloomy")
            return author.objectID
        }
        let reader = container.newBackgroundContext()
        let moods = try reader.performAndWait {
            let byID = try #require(reader.existingObject(with: id) as? Author)
            let request = NSFetchRequest<Author>(entityName: "Author")
            let fetched = try reader.fetch(request)
            return [byID.mood] + fetched.map(\.mood)
        }
        #expect(moods == ["curious", "curious"])
    }

    @Test func refreshingAnInsertedObjectKeepsItsChanges() throws {
        let container = try LibraryModel.container(url: URL(fileURLWithPath: "/dev/null"))
        let context = container.viewContext
        let author = Author(context: context)
        author.name = "Clara Reeve"
        context.refresh(author, mergeChanges: false)
        #expect(author.isInserted)
        #expect(!author.isFault)
        #expect(author.name == "Clara Reeve")
        context.refresh(author, mergeChanges: true)
        #expect(author.name == "Clara Reeve")
        try context.save()
        #expect(try context.count(for: NSFetchRequest<Author>(entityName: "Author")) == 1)
    }
}
