import OpenCoreDataShim
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct ManagedObjectIDTests {
    @Test func temporaryAndPermanentURIs() throws {
        let context = CompanyModel.context()
        try context.performAndWait {
            let company = Company(context: context)
            company.name = "Acme"
            company.inn = "1"
            let temporary = company.objectID
            #expect(temporary.isTemporaryID)
            #expect(temporary.uriRepresentation().absoluteString.hasPrefix("x-coredata:///Company/t"))
            #expect(temporary.entity.name == "Company")
            #expect(temporary.persistentStore == nil)
            try context.save()
            let permanent = company.objectID
            let store = try #require(context.persistentStoreCoordinator?.persistentStores.first)
            #expect(permanent.persistentStore === store)
            #expect(permanent.uriRepresentation().absoluteString == "x-coredata://\(store.identifier!)/Company/p1")
            let coordinator = try #require(context.persistentStoreCoordinator)
            #expect(coordinator.managedObjectID(forURIRepresentation: permanent.uriRepresentation()) == permanent)
            #expect(coordinator.managedObjectID(forURIRepresentation: temporary.uriRepresentation()) == nil)
            #expect(coordinator.managedObjectID(forURIRepresentation: URL(string: "https://example.com/x")!) == nil)
        }
    }

    @Test func idsAreHashableAndSendable() throws {
        let context = CompanyModel.context()
        let ids: [NSManagedObjectID] = try context.performAndWait {
            let companies = (0..<3).map { index -> Company in
                let company = Company(context: context)
                company.name = "C\(index)"
                company.inn = "\(index)"
                return company
            }
            try context.save()
            return companies.map(\.objectID)
        }
        #expect(Set(ids).count == 3)
        let again = try context.performAndWait {
            try context.fetch(NSFetchRequest<Company>(entityName: "Company")).map(\.objectID)
        }
        #expect(Set(again) == Set(ids))
        let description = ids[0].description
        #expect(description.contains("<x-coredata://"))
    }

    /// Every entity hierarchy numbers its rows from 1: the first rows of many entities have IDs with the same key,
    /// which must still hash apart (or a save of objects of many entities compares each with all the others), and
    /// an equal ID made by another coordinator hashes the same.
    @Test func idsOfEqualKeysInDifferentEntitiesHashApart() throws {
        let model = NSManagedObjectModel()
        model.entities = (0..<50).map { index in
            let entity = NSEntityDescription()
            entity.name = "Entity\(index)"
            let name = NSAttributeDescription()
            name.name = "name"
            name.attributeType = .stringAttributeType
            entity.properties = [name]
            return entity
        }
        let directory = SQLiteTestDirectory()
        let coordinator = try SQLiteStack.coordinator(model, at: directory.store())
        let context = SQLiteStack.context(coordinator)
        let ids: [NSManagedObjectID] = try context.performAndWait {
            let objects = model.entities.map {
                NSEntityDescription.insertNewObject(forEntityName: $0.name!, into: context)
            }
            try context.save()
            return objects.map(\.objectID)
        }
        #expect(ids.allSatisfy { $0.uriRepresentation().lastPathComponent == "p1" })
        #expect(Set(ids).count == ids.count)
        #expect(Set(ids.map(\.hash)).count == ids.count)
        let other = try SQLiteStack.coordinator(model, at: directory.store())
        for id in ids {
            let again = try #require(other.managedObjectID(forURIRepresentation: id.uriRepresentation()))
            #expect(again == id)
            #expect(again.hash == id.hash)
        }
    }
}

@Suite struct UndoTests {
    @Test func undoAndRedoAttributeChanges() throws {
        let context = CompanyModel.context()
        try context.performAndWait {
            let company = try ManagedObjectContextTests.seed(context, employees: [])
            context.undoManager = UndoManager()
            company.name = "First"
            context.processPendingChanges()
            company.name = "Second"
            context.undo()
            #expect(company.name == "First")
            context.undo()
            #expect(company.name == "Acme")
            context.redo()
            #expect(company.name == "First")
            #expect(context.undoManager?.canRedo == true)
        }
    }

    @Test func undoInsertionAndDeletion() throws {
        let context = CompanyModel.context()
        try context.performAndWait {
            let acme = try ManagedObjectContextTests.seed(context, employees: ["Ada"])
            context.undoManager = UndoManager()
            let newcomer = Company(context: context)
            context.undo()
            #expect(!context.insertedObjects.contains(newcomer))
            let ada = try #require(acme.employees.first)
            context.delete(ada)
            context.processPendingChanges()
            #expect(acme.employees.isEmpty)
            context.undo()
            #expect(!ada.isDeleted)
            #expect(acme.employees == [ada], "undoing a deletion restores its relationships")
            #expect(ada.company === acme)
        }
    }

    @Test func undoRelationshipChange() throws {
        let context = CompanyModel.context()
        try context.performAndWait {
            let acme = try ManagedObjectContextTests.seed(context, employees: ["Ada"])
            let globex = try ManagedObjectContextTests.seed(context, company: "Globex", employees: [])
            let ada = try #require(acme.employees.first)
            context.undoManager = UndoManager()
            ada.company = globex
            #expect(acme.employees.isEmpty && globex.employees == [ada])
            context.undo()
            #expect(ada.company === acme)
            #expect(acme.employees == [ada] && globex.employees.isEmpty)
        }
    }

    @Test func standaloneUndoManagerGroups() {
        final class Counter { var value = 0 }
        let counter = Counter()
        let manager = UndoManager()
        manager.groupsByEvent = false
        manager.beginUndoGrouping()
        manager.registerUndo(withTarget: counter) { $0.value -= 1 }
        manager.registerUndo(withTarget: counter) { $0.value -= 10 }
        manager.setActionName("Add")
        manager.endUndoGrouping()
        counter.value = 11
        #expect(manager.undoActionName == "Add")
        #expect(manager.undoMenuItemTitle == "Undo Add")
        manager.undo()
        #expect(counter.value == 0)
        #expect(!manager.canUndo)
    }
}

@Suite struct ChildContextTests {
    @Test func childSavesIntoParentAndParentIntoStore() throws {
        let container = CompanyModel.container()
        let parent = container.newBackgroundContext()
        let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        child.parent = parent
        let id = try child.performAndWait {
            let company = Company(context: child)
            company.name = "Child Co"
            company.inn = "9"
            let ada = Employee(context: child)
            ada.company = company
            try child.save()
            return company.objectID
        }
        try parent.performAndWait {
            let company = try #require(parent.registeredObject(for: id) as? Company)
            #expect(company.isInserted, "the child's save is the parent's unsaved change")
            #expect(company.name == "Child Co")
            #expect(company.employees.count == 1)
            #expect(
                try container.newBackgroundContext().performAndWait {
                    try NSFetchRequest<Company>(entityName: "Company").execute()
                }.isEmpty)
            try parent.save()
        }
        let fresh = container.newBackgroundContext()
        try fresh.performAndWait {
            let companies = try fresh.fetch(NSFetchRequest<Company>(entityName: "Company"))
            #expect(companies.map(\.name) == ["Child Co"])
            #expect(companies.first?.employees.count == 1)
        }
    }

    @Test func childSeesParentsUnsavedChanges() throws {
        let container = CompanyModel.container()
        let parent = container.newBackgroundContext()
        let id = try parent.performAndWait {
            let company = try ManagedObjectContextTests.seed(parent, employees: [])
            company.name = "Unsaved name"
            return company.objectID
        }
        let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        child.parent = parent
        try child.performAndWait {
            let company = try #require(try child.existingObject(with: id) as? Company)
            #expect(company.name == "Unsaved name")
            let request = NSFetchRequest<Company>(entityName: "Company")
            request.predicate = NSPredicate(format: "name == 'Unsaved name'")
            #expect(try child.fetch(request).count == 1)
            company.name = "Child edit"
            try child.save()
        }
        parent.performAndWait {
            #expect((parent.object(with: id) as? Company)?.name == "Child edit")
        }
    }

    @Test func mainQueueParentWithPrivateChildFromTheMainThread() throws {
        // A main-queue parent used through a private child, while the calling thread waits: must not deadlock.
        let container = CompanyModel.container()
        let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        child.parent = container.viewContext
        try child.performAndWait {
            let company = Company(context: child)
            company.name = "Hand-off"
            company.inn = "1"
            try child.save()
            #expect(try child.count(for: NSFetchRequest<Company>(entityName: "Company")) == 1)
        }
    }
}

@Suite struct ConcurrencyTests {
    @Test func performRunsOnTheContextsQueue() async throws {
        let container = CompanyModel.container()
        let context = container.newBackgroundContext()
        let count = try await context.perform {
            _ = try ManagedObjectContextTests.seed(context, employees: ["Ada", "Bea"])
            return try context.count(for: NSFetchRequest<Employee>(entityName: "Employee"))
        }
        #expect(count == 2)
        let name = try await container.performBackgroundTask { background in
            try background.fetch(NSFetchRequest<Company>(entityName: "Company")).first?.name
        }
        #expect(name == "Acme")
    }

    @Test func performAndWaitIsReentrant() {
        let context = CompanyModel.context()
        let depth = context.performAndWait {
            context.performAndWait { 2 }
        }
        #expect(depth == 2)
    }

    @Test func asynchronousPerformEventuallyRuns() async {
        let context = CompanyModel.context()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            context.perform {
                _ = Company(context: context)
                continuation.resume()
            }
        }
        let inserted = await context.perform { context.insertedObjects.count }
        #expect(inserted == 1)
    }

    @Test func concurrencyDebugStopsUseOffTheQueue() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            // As launching with the environment variable set does; the switch is read once, on first use.
            setenv("com.apple.CoreData.ConcurrencyDebug", "1", 1)
            let context = CompanyModel.context()
            context.name = "checked"
            _ = context.insertedObjects
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("CoreData concurrency violation"))
        #expect(message.contains("'checked'"))
    }
}

@Suite struct SnapshotEventTests {
    @Test func undoTellsTheObject() throws {
        let context = CompanyModel.context(model: SnapshotModel.make())
        try context.performAndWait {
            let note = SnapshotNote(context: context)
            note.setValue("a", forKey: "text")
            try context.save()
            context.undoManager = UndoManager()
            note.setValue("b", forKey: "text")
            context.undo()
            #expect(note.events.contains(.undoUpdate))
            context.delete(note)
            context.undo()
            #expect(note.events.contains(.undoDeletion))
            note.setValue("c", forKey: "text")
            context.rollback()
            #expect(note.events.contains(.rollback))
        }
    }

    @Test func registeredObjectsAreWeakUnlessRetained() throws {
        let context = CompanyModel.context()
        try context.performAndWait {
            _ = try ManagedObjectContextTests.seed(context, company: "Solo", employees: [])
            context.refreshAllObjects()
            #expect(context.registeredObjects.isEmpty, "saved, unreferenced objects go away")
            context.retainsRegisteredObjects = true
            _ = try context.fetch(NSFetchRequest<Company>(entityName: "Company"))
            #expect(context.registeredObjects.count == 1, "unless the context retains them")
        }
    }
}

enum SnapshotModel {
    static func make() -> NSManagedObjectModel {
        let entity = NSEntityDescription()
        entity.name = "SnapshotNote"
        entity.managedObjectClassName = String(reflecting: SnapshotNote.self)
        entity.properties = [CompanyModel.attribute("text", .stringAttributeType)]
        let model = NSManagedObjectModel()
        model.entities = [entity]
        return model
    }
}

final class SnapshotNote: NSManagedObject {
    var events: [NSSnapshotEventType] = []
    override func awakeFromSnapshotEvents(_ flags: NSSnapshotEventType) {
        super.awakeFromSnapshotEvents(flags)
        events.append(flags)
    }
}
