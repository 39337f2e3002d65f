import OpenCoreDataShim
import Testing

@Suite struct ManagedObjectContextTests {
    /// Inserts a company with the given employees and saves.
    static func seed(_ context: NSManagedObjectContext, company name: String = "Acme", employees: [String]) throws
        -> Company
    {
        let company = Company(context: context)
        company.name = name
        company.inn = "inn-\(name)"
        for firstName in employees {
            let employee = Employee(context: context)
            employee.firstName = firstName
            employee.company = company
        }
        try context.save()
        return company
    }

    /// A context given another coordinator, of another copy of the model, fetches by entity name from that model:
    /// what it resolved the name to before is not kept. OpenCoreData's own behaviour: Apple's documentation does not
    /// say whether the coordinator of a context in use may be replaced.
    @Test func aFetchByNameAfterTheCoordinatorChangesUsesTheNewModel() throws {
        let first = CompanyModel.make()
        let second = CompanyModel.make()
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        for (model, name) in [(first, "Acme"), (second, "Globex")] {
            let container = CompanyModel.container(model: model)
            try container.viewContext.performAndWait {
                _ = try Self.seed(container.viewContext, company: name, employees: [])
            }
            context.persistentStoreCoordinator = container.persistentStoreCoordinator
            try context.performAndWait {
                let found = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Company"))
                #expect(found.map { $0.value(forKey: "name") as? String } == [name])
                #expect(found.first?.entity === model.entitiesByName["Company"])
            }
        }
    }

    @Test func fetchWithPredicateSortLimitAndOffset() throws {
        let context = CompanyModel.context()
        try context.performAndWait {
            _ = try Self.seed(context, employees: ["Dora", "Ada", "Cleo", "Bea"])
            let request = NSFetchRequest<Employee>(entityName: "Employee")
            request.sortDescriptors = [NSSortDescriptor(key: "firstName", ascending: true)]
            #expect(try context.fetch(request).map(\.firstName) == ["Ada", "Bea", "Cleo", "Dora"])
            request.fetchOffset = 1
            request.fetchLimit = 2
            #expect(try context.fetch(request).map(\.firstName) == ["Bea", "Cleo"])
            request.fetchOffset = 0
            request.fetchLimit = 0
            request.predicate = NSPredicate(format: "firstName BEGINSWITH[c] %@", "d")
            #expect(try context.fetch(request).map(\.firstName) == ["Dora"])
            #expect(try context.count(for: request) == 1)
        }
    }

    @Test func anyEmployeeFirstNameFindsTheCompany() throws {
        let context = CompanyModel.context()
        try context.performAndWait {
            let acme = try Self.seed(context, employees: ["Ada", "Bea"])
            _ = try Self.seed(context, company: "Globex", employees: ["Cleo"])
            let request = NSFetchRequest<Company>(entityName: "Company")
            request.predicate = NSPredicate(format: "ANY employees.firstName == %@", "Bea")
            #expect(try context.fetch(request) == [acme])
        }
    }

    @Test func pendingChangesAreIncludedByDefault() throws {
        let context = CompanyModel.context()
        try context.performAndWait {
            let acme = try Self.seed(context, employees: ["Ada", "Bea"])
            let bea = try #require(acme.employees.first { $0.firstName == "Bea" })
            let cleo = Employee(context: context)
            cleo.firstName = "Cleo"
            context.delete(bea)
            let ada = try #require(acme.employees.first { $0.firstName == "Ada" })
            ada.firstName = "Zoe"
            let request = NSFetchRequest<Employee>(entityName: "Employee")
            request.sortDescriptors = [NSSortDescriptor(key: "firstName", ascending: true)]
            #expect(try context.fetch(request).map(\.firstName) == ["Cleo", "Zoe"])
            request.predicate = NSPredicate(format: "firstName == 'Ada'")
            #expect(try context.fetch(request).isEmpty, "a changed object is judged by its current values")
            request.predicate = nil
            request.includesPendingChanges = false
            #expect(Set(try context.fetch(request).compactMap(\.firstName)) == ["Zoe", "Bea"])
        }
    }

    @Test func resultTypes() throws {
        let context = CompanyModel.context()
        try context.performAndWait {
            let acme = try Self.seed(context, employees: ["Ada"])
            let ids = NSFetchRequest<NSManagedObjectID>(entityName: "Company")
            ids.resultType = .managedObjectIDResultType
            #expect(try context.fetch(ids) == [acme.objectID])
            let count = NSFetchRequest<NSNumber>(entityName: "Employee")
            count.resultType = .countResultType
            #expect(try context.fetch(count) == [1])
            let dictionaries = NSFetchRequest<NSDictionary>(entityName: "Company")
            dictionaries.resultType = .dictionaryResultType
            dictionaries.propertiesToFetch = ["name"]
            #expect(try context.fetch(dictionaries).first?["name"] as? String == "Acme")
        }
    }

    @Test func uniquingGivesOneObjectPerID() throws {
        let context = CompanyModel.context()
        try context.performAndWait {
            let acme = try Self.seed(context, employees: ["Ada"])
            let fetched = try context.fetch(NSFetchRequest<Company>(entityName: "Company"))
            #expect(fetched.first === acme)
            #expect(context.object(with: acme.objectID) === acme)
            #expect(context.registeredObject(for: acme.objectID) === acme)
            #expect(try context.existingObject(with: acme.objectID) === acme)
        }
    }

    @Test func objectsOfAnotherContextAreFaultsUntilTouched() throws {
        let container = CompanyModel.container()
        let writer = container.newBackgroundContext()
        let id = try writer.performAndWait { try Self.seed(writer, employees: ["Ada"]).objectID }
        let reader = container.newBackgroundContext()
        try reader.performAndWait {
            let company = reader.object(with: id)
            #expect(company.isFault)
            #expect(company.value(forKey: "name") as? String == "Acme")
            #expect(!company.isFault)
            let employees = try #require(company.value(forKey: "employees") as? Set<NSManagedObject>)
            #expect(employees.first?.value(forKey: "firstName") as? String == "Ada")
            let missing = NSManagedObjectID._testMissing(like: id)
            #expect(throws: NSError.self) { try reader.existingObject(with: missing) }
        }
    }

    @Test func obtainPermanentIDsBeforeSaving() throws {
        let context = CompanyModel.context()
        try context.performAndWait {
            let company = Company(context: context)
            company.name = "Acme"
            company.inn = "1"
            let temporary = company.objectID
            try context.obtainPermanentIDs(for: [company])
            #expect(!company.objectID.isTemporaryID)
            #expect(company.objectID != temporary)
            #expect(context.object(with: company.objectID) === company)
            try context.save()
            #expect(company.objectID.uriRepresentation().path.hasPrefix("/Company/p"))
        }
    }

    @Test func rollbackRestoresCommittedState() throws {
        let context = CompanyModel.context()
        try context.performAndWait {
            let acme = try Self.seed(context, employees: ["Ada"])
            acme.name = "Changed"
            let newcomer = Company(context: context)
            let ada = try #require(acme.employees.first)
            context.delete(ada)
            context.rollback()
            #expect(acme.name == "Acme")
            #expect(!ada.isDeleted)
            #expect(newcomer.managedObjectContext == nil)
            #expect(!context.hasChanges)
            #expect(acme.employees == [ada])
        }
    }

    @Test func resetForgetsEverything() throws {
        let context = CompanyModel.context()
        try context.performAndWait {
            let acme = try Self.seed(context, employees: ["Ada"])
            let id = acme.objectID
            acme.name = "Unsaved"
            context.reset()
            #expect(context.registeredObjects.isEmpty)
            #expect(!context.hasChanges)
            #expect(acme.managedObjectContext == nil)
            let again = context.object(with: id)
            #expect(again !== acme)
            #expect(again.value(forKey: "name") as? String == "Acme")
        }
    }

    @Test func refreshDiscardsOrMergesChanges() throws {
        let container = CompanyModel.container()
        let context = container.newBackgroundContext()
        let other = container.newBackgroundContext()
        let id = try context.performAndWait { try Self.seed(context, employees: []).objectID }
        try other.performAndWait {
            let company = try #require(try other.existingObject(with: id) as? Company)
            company.inn = "changed elsewhere"
            try other.save()
        }
        try context.performAndWait {
            let company = try #require(context.object(with: id) as? Company)
            company.name = "Local"
            context.refresh(company, mergeChanges: true)
            #expect(company.name == "Local", "local changes survive a merge")
            #expect(company.inn == "changed elsewhere", "store values arrive")
            context.refresh(company, mergeChanges: false)
            #expect(company.isFault)
            #expect(company.name == "Acme", "unmerged local changes are gone")
        }
    }

    @Test func notificationsDescribeChanges() throws {
        let context = CompanyModel.context()
        final class Box: @unchecked Sendable { var changed: [String] = []; var saved: [String] = [] }
        let box = Box()
        let center = NotificationCenter.default
        let changeToken = center.addObserver(
            forName: NSManagedObjectContext.didChangeObjectsNotification, object: context, queue: nil
        ) { note in
            let inserted = note.userInfo?[NSInsertedObjectsKey] as? Set<NSManagedObject> ?? []
            box.changed.append("inserted \(inserted.count)")
        }
        let saveToken = center.addObserver(
            forName: NSManagedObjectContext.didSaveObjectsNotification, object: context, queue: nil
        ) { note in
            let inserted = note.userInfo?[NSInsertedObjectsKey] as? Set<NSManagedObject> ?? []
            box.saved.append("inserted \(inserted.count)")
        }
        defer {
            center.removeObserver(changeToken)
            center.removeObserver(saveToken)
        }
        try context.performAndWait {
            _ = try Self.seed(context, employees: ["Ada", "Bea"])
        }
        #expect(box.changed.first == "inserted 3")
        #expect(box.saved == ["inserted 3"])
    }

    @Test func eachEventAnnouncesTheObjectsChangedInIt() throws {
        let context = CompanyModel.context()
        final class Box: @unchecked Sendable { var events: [(inserted: Int, updated: [String])] = [] }
        let box = Box()
        let token = NotificationCenter.default.addObserver(
            forName: NSManagedObjectContext.didChangeObjectsNotification, object: context, queue: nil
        ) { note in
            let inserted = note.userInfo?[NSInsertedObjectsKey] as? Set<NSManagedObject> ?? []
            let updated = note.userInfo?[NSUpdatedObjectsKey] as? Set<NSManagedObject> ?? []
            box.events.append((inserted.count, updated.compactMap { ($0 as? Company)?.name }.sorted()))
        }
        defer { NotificationCenter.default.removeObserver(token) }
        try context.performAndWait {
            let acme = try Self.seed(context, employees: [])
            box.events = []
            // Changed twice in one event: updated once. Inserted and changed: inserted only.
            acme.name = "Acme One"
            acme.name = "Acme Two"
            let globex = Company(context: context)
            globex.name = "Globex"
            globex.inn = "2"
            context.processPendingChanges()
            // After a rollback, the next change is announced again.
            context.rollback()
            acme.name = "Acme Three"
            context.processPendingChanges()
            acme.name = "Acme Four"
            context.processPendingChanges()
        }
        #expect(box.events.first?.inserted == 1)
        #expect(box.events.first?.updated == ["Acme Two"])
        #expect(box.events.suffix(2).map(\.updated) == [["Acme Three"], ["Acme Four"]])
    }

    @Test func saveNotificationsListTheSavedObjectsAndTheirIDs() throws {
        let context = CompanyModel.context()
        final class Box: @unchecked Sendable {
            var objects: [AnyHashable: Any] = [:]
            var ids: [AnyHashable: Any] = [:]
        }
        let box = Box()
        let center = NotificationCenter.default
        let objectsToken = center.addObserver(
            forName: NSManagedObjectContext.didSaveObjectsNotification, object: context, queue: nil
        ) { box.objects = $0.userInfo ?? [:] }
        let idsToken = center.addObserver(
            forName: NSManagedObjectContext.didSaveObjectIDsNotification, object: context, queue: nil
        ) { box.ids = $0.userInfo ?? [:] }
        defer {
            center.removeObserver(objectsToken)
            center.removeObserver(idsToken)
        }
        try context.performAndWait {
            let acme = try Self.seed(context, employees: ["Ada", "Bea"])
            let globex = try Self.seed(context, company: "Globex", employees: ["Cleo", "Dora"])
            let employees = try context.fetch(NSFetchRequest<Employee>(entityName: "Employee"))
            let ada = try #require(employees.first { $0.firstName == "Ada" })
            let cleo = try #require(employees.first { $0.firstName == "Cleo" })
            let dora = try #require(employees.first { $0.firstName == "Dora" })
            let eve = Employee(context: context)
            eve.firstName = "Eve"
            eve.company = acme
            ada.firstName = "Ada L."
            // Globex's deletion cascades to its employees, which are deleted objects of the save too.
            context.delete(globex)
            let deletedIDs = [globex.objectID, cleo.objectID, dora.objectID]
            try context.save()

            #expect(box.objects[NSInsertedObjectsKey] as? Set<NSManagedObject> == [eve])
            // Eve's company is Acme, whose employees changed with her: both are updated.
            #expect(box.objects[NSUpdatedObjectsKey] as? Set<NSManagedObject> == [ada, acme])
            #expect(box.objects[NSDeletedObjectsKey] as? Set<NSManagedObject> == [globex, cleo, dora])
            let ids = NSManagedObjectContext.NotificationKey.self
            let insertedIDs = box.ids[ids.insertedObjectIDs.rawValue] as? Set<NSManagedObjectID>
            #expect(insertedIDs == [eve.objectID])
            #expect(insertedIDs?.contains { $0.isTemporaryID } == false, "inserted objects are listed by permanent ID")
            let updatedIDs = box.ids[ids.updatedObjectIDs.rawValue] as? Set<NSManagedObjectID>
            #expect(updatedIDs == [ada.objectID, acme.objectID])
            #expect(box.ids[ids.deletedObjectIDs.rawValue] as? Set<NSManagedObjectID> == Set(deletedIDs))
        }
    }

    /// The did-save notification lists every object updated since the last save, whatever events announced them:
    /// updates announced by an earlier event and joined by others, announced and then deleted, announced and changed
    /// again, or some of them deleted and as many others changed.
    @Test func theDidSaveNotificationListsTheUpdatesOfEveryEventSinceTheLastSave() throws {
        let context = CompanyModel.context()
        final class Box: @unchecked Sendable {
            var updated: Set<NSManagedObject> = []
            var deleted: Set<NSManagedObject> = []
            var updatedIDs: Set<NSManagedObjectID> = []
        }
        let box = Box()
        let center = NotificationCenter.default
        let objectsToken = center.addObserver(
            forName: NSManagedObjectContext.didSaveObjectsNotification, object: context, queue: nil
        ) { note in
            box.updated = note.userInfo?[NSUpdatedObjectsKey] as? Set<NSManagedObject> ?? []
            box.deleted = note.userInfo?[NSDeletedObjectsKey] as? Set<NSManagedObject> ?? []
        }
        let idsToken = center.addObserver(
            forName: NSManagedObjectContext.didSaveObjectIDsNotification, object: context, queue: nil
        ) { note in
            let key = NSManagedObjectContext.NotificationKey.updatedObjectIDs.rawValue
            box.updatedIDs = note.userInfo?[key] as? Set<NSManagedObjectID> ?? []
        }
        defer {
            center.removeObserver(objectsToken)
            center.removeObserver(idsToken)
        }
        try context.performAndWait {
            let acme = try Self.seed(context, employees: [])
            let globex = try Self.seed(context, company: "Globex", employees: [])
            let initech = try Self.seed(context, company: "Initech", employees: [])
            let hooli = try Self.seed(context, company: "Hooli", employees: [])

            acme.name = "Acme 2"
            globex.name = "Globex 2"
            context.processPendingChanges()
            initech.name = "Initech 2"
            try context.save()
            #expect(box.updated == [acme, globex, initech])
            #expect(box.updatedIDs == [acme.objectID, globex.objectID, initech.objectID])

            acme.name = "Acme 3"
            globex.name = "Globex 3"
            context.processPendingChanges()
            context.delete(globex)
            try context.save()
            #expect(box.updated == [acme])
            #expect(box.deleted == [globex])

            acme.name = "Acme 4"
            initech.name = "Initech 4"
            context.processPendingChanges()
            acme.name = "Acme 5"
            try context.save()
            #expect(box.updated == [acme, initech])

            // As many updated objects as announced, but not the same ones.
            acme.name = "Acme 6"
            initech.name = "Initech 6"
            context.processPendingChanges()
            context.delete(initech)
            hooli.name = "Hooli 6"
            try context.save()
            #expect(box.updated == [acme, hooli])
            #expect(box.updatedIDs == [acme.objectID, hooli.objectID])
            #expect(box.deleted == [initech])
        }
    }

    @Test func mergeChangesFromAnotherContextsSave() throws {
        let container = CompanyModel.container()
        let writer = container.newBackgroundContext()
        let reader = container.newBackgroundContext()
        let id = try writer.performAndWait { try Self.seed(writer, employees: ["Ada"]).objectID }
        let company = try reader.performAndWait { try #require(try reader.existingObject(with: id) as? Company) }
        final class Box: @unchecked Sendable { var note: Notification? }
        let box = Box()
        let token = NotificationCenter.default.addObserver(
            forName: NSManagedObjectContext.didSaveObjectsNotification, object: writer, queue: nil
        ) { box.note = $0 }
        try writer.performAndWait {
            let theirs = try #require(try writer.existingObject(with: id) as? Company)
            theirs.name = "Renamed"
            try writer.save()
        }
        NotificationCenter.default.removeObserver(token)
        let note = try #require(box.note)
        reader.performAndWait {
            #expect(company.name == "Acme")
            reader.mergeChanges(fromContextDidSave: note)
            #expect(company.name == "Renamed")
        }
    }

    @Test func conflictingSavesFailWithMergeErrorByDefault() throws {
        let container = CompanyModel.container()
        let first = container.newBackgroundContext()
        let second = container.newBackgroundContext()
        let id = try first.performAndWait { try Self.seed(first, employees: []).objectID }
        let mine = try first.performAndWait { try #require(try first.existingObject(with: id) as? Company) }
        let theirs = try second.performAndWait { try #require(try second.existingObject(with: id) as? Company) }
        try second.performAndWait {
            theirs.name = "Theirs"
            try second.save()
        }
        first.performAndWait {
            mine.name = "Mine"
            let error = #expect(throws: NSError.self) { try first.save() }
            #expect(error?.code == NSManagedObjectMergeError)
            let conflicts = error?.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSMergeConflict]
            #expect(conflicts?.first?.sourceObject === mine)
            #expect(conflicts?.first?.persistedSnapshot?["name"] as? String == "Theirs")
            #expect(mine.name == "Mine", "a failed save keeps the context's changes")
        }
    }

    @Test(arguments: [
        (NSMergePolicyType.mergeByPropertyObjectTrumpMergePolicyType, "Mine", "theirs-inn"),
        (.mergeByPropertyStoreTrumpMergePolicyType, "Theirs", "theirs-inn"),
        (.overwriteMergePolicyType, "Mine", "inn-Acme"),
        (.rollbackMergePolicyType, "Theirs", "theirs-inn"),
    ])
    func mergePolicies(type: NSMergePolicyType, name: String, inn: String) throws {
        let container = CompanyModel.container()
        let first = container.newBackgroundContext()
        let second = container.newBackgroundContext()
        let id = try first.performAndWait { try Self.seed(first, employees: []).objectID }
        let mine = try first.performAndWait { try #require(try first.existingObject(with: id) as? Company) }
        try second.performAndWait {
            let theirs = try #require(try second.existingObject(with: id) as? Company)
            theirs.name = "Theirs"
            theirs.inn = "theirs-inn"
            try second.save()
        }
        try first.performAndWait {
            first.mergePolicy = NSMergePolicy(merge: type)
            mine.name = "Mine"
            try first.save()
        }
        let check = container.newBackgroundContext()
        try check.performAndWait {
            let stored = try #require(try check.existingObject(with: id) as? Company)
            #expect(stored.name == name)
            #expect(stored.inn == inn)
        }
    }

    @Test func fetchRequestExecuteUsesTheCurrentContext() throws {
        let context = CompanyModel.context()
        try context.performAndWait {
            _ = try Self.seed(context, employees: ["Ada"])
            let results = try NSFetchRequest<Employee>(entityName: "Employee").execute()
            #expect(results.map(\.firstName) == ["Ada"])
        }
    }
}

extension NSManagedObjectID {
    /// An ID like `id` for an object that was never saved, built through the URI round trip.
    static func _testMissing(like id: NSManagedObjectID) -> NSManagedObjectID {
        let coordinator = id.persistentStore!.persistentStoreCoordinator!
        var text = id.uriRepresentation().absoluteString
        text = String(text[..<text.lastIndex(of: "p")!]) + "p999999"
        return coordinator.managedObjectID(forURIRepresentation: URL(string: text)!)!
    }
}
