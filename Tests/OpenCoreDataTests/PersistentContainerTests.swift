import OpenCoreDataShim
import Testing

@Suite struct PersistentContainerTests {
    @Test func containerBuildsTheStack() throws {
        let model = CompanyModel.make()
        let container = NSPersistentContainer(name: "Stack", managedObjectModel: model)
        #expect(container.name == "Stack")
        #expect(container.managedObjectModel === model)
        #expect(container.persistentStoreCoordinator.managedObjectModel === model)
        #expect(container.persistentStoreDescriptions.first?.url?.lastPathComponent == "Stack.sqlite")
        #expect(container.persistentStoreDescriptions.first?.type == NSSQLiteStoreType)
        #expect(container.viewContext.concurrencyType == .mainQueueConcurrencyType)
        #expect(container.viewContext === container.viewContext)
        #expect(container.newBackgroundContext().concurrencyType == .privateQueueConcurrencyType)
        let description = NSPersistentStoreDescription()
        description.type = NSInMemoryStoreType
        container.persistentStoreDescriptions = [description]
        var loaded: [String] = []
        container.loadPersistentStores { description, error in
            #expect(error == nil)
            loaded.append(description.type)
        }
        #expect(loaded == [NSInMemoryStoreType])
        #expect(container.persistentStoreCoordinator.persistentStores.first?.type == NSInMemoryStoreType)
    }

    @Test func aDescriptionMadeWithoutAURLIsASQLiteStoreInMemory() throws {
        // Apple's descriptions start at /dev/null, and code relies on it for stores that live in memory.
        let description = NSPersistentStoreDescription()
        #expect(description.url == URL(fileURLWithPath: "/dev/null"))
        #expect(description.type == NSSQLiteStoreType)
        let container = NSPersistentContainer(name: "Ephemeral", managedObjectModel: CompanyModel.make())
        container.persistentStoreDescriptions = [description]
        var loadError: (any Error)?
        container.loadPersistentStores { _, error in loadError = error }
        #expect(loadError == nil)
        let store = try #require(container.persistentStoreCoordinator.persistentStores.first)
        #expect(store.type == NSSQLiteStoreType)
        #expect(store.url == URL(fileURLWithPath: "/dev/null"))
    }

    @Test func unknownStoreTypeIsReportedToTheCompletionHandler() {
        let container = NSPersistentContainer(name: "Bad", managedObjectModel: CompanyModel.make())
        let description = NSPersistentStoreDescription()
        description.type = "NoSuchStore"
        container.persistentStoreDescriptions = [description]
        var reported: NSError?
        container.loadPersistentStores { _, error in reported = error as NSError? }
        #expect(reported?.code == NSPersistentStoreInvalidTypeError)
        #expect(reported?.domain == NSCocoaErrorDomain)
    }

    @Test func coordinatorManagesStoresAndMetadata() throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: CompanyModel.make())
        let store = try coordinator.addPersistentStore(
            ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
        #expect(coordinator.persistentStores == [store])
        let metadata = coordinator.metadata(for: store)
        #expect(metadata[NSStoreTypeKey] as? String == NSInMemoryStoreType)
        #expect(metadata[NSStoreUUIDKey] as? String == store.identifier)
        #expect(coordinator.managedObjectModel.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        var updated = metadata
        updated["MyKey"] = "MyValue"
        coordinator.setMetadata(updated, for: store)
        #expect(coordinator.metadata(for: store)["MyKey"] as? String == "MyValue")
        try coordinator.remove(store)
        #expect(coordinator.persistentStores.isEmpty)
        #expect(throws: NSError.self) { try coordinator.remove(store) }
        #expect(throws: NSError.self) {
            try coordinator.addPersistentStore(
                ofType: NSInMemoryStoreType, configurationName: "Nope", at: nil, options: nil)
        }
    }

    @Test func savingWithoutAStoreFails() {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: CompanyModel.make())
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        context.performAndWait {
            let company = Company(context: context)
            company.name = "Nowhere"
            company.inn = "0"
            let error = #expect(throws: NSError.self) { try context.save() }
            #expect(error?.domain == NSCocoaErrorDomain)
            #expect(company.isInserted)
        }
    }
}

@Suite struct ManagedObjectClassTests {
    #if !canImport(CoreData)
    /// On Apple platforms an unqualified class name is found only for `@objc`-named classes; here the classes of the
    /// loaded Swift images are searched, so Xcode models' plain `representedClassName`s work.
    @Test func insertNewObjectCreatesTheEntitysClass() {
        let context = CompanyModel.context(model: LookupModel.make())
        context.performAndWait {
            // `LookedUpWidget` is named only in the model: found among the classes of the loaded images.
            let widget = NSEntityDescription.insertNewObject(forEntityName: "Widget", into: context)
            #expect(widget is LookedUpWidget)
            let plain = NSEntityDescription.insertNewObject(forEntityName: "Plain", into: context)
            #expect(type(of: plain) == NSManagedObject.self)
        }
    }
    #endif

    @Test func entityOfAClass() {
        let model = CompanyModel.make()
        _ = NSPersistentStoreCoordinator(managedObjectModel: model)
        #expect(Employee.entity().name == "Employee")
        #expect(Company.fetchRequest().entityName == "Company")
    }

    @Test func instantiatingAnAbstractEntityStops() async {
        await #expect(processExitsWith: .failure) {
            let entity = NSEntityDescription()
            entity.name = "Shape"
            entity.isAbstract = true
            _ = NSManagedObject(entity: entity, insertInto: nil)
        }
    }
}

enum LookupModel {
    static func make() -> NSManagedObjectModel {
        let widget = NSEntityDescription()
        widget.name = "Widget"
        widget.managedObjectClassName = "LookedUpWidget"
        let plain = NSEntityDescription()
        plain.name = "Plain"
        let model = NSManagedObjectModel()
        model.entities = [widget, plain]
        return model
    }
}

final class LookedUpWidget: NSManagedObject {}
