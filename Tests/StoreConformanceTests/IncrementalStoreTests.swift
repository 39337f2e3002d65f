import Foundation
import OpenCoreData
import StoreConformance
import Testing

/// NSIncrementalStore through the public API only: what the coordinator asks of a store and tells it, and what it does
/// when a store answers wrongly — an error in Core Data's domain naming the store and the method, and a context that
/// stays usable.
@Suite struct IncrementalStoreTests {
    /// A stack on the faulty store, populated while it behaves.
    final class FaultyStack {
        let coordinator: NSPersistentStoreCoordinator
        let store: FaultyIncrementalStore
        let url = DictionaryStore.newURL()

        init() throws {
            FaultyIncrementalStore.register()
            coordinator = NSPersistentStoreCoordinator(managedObjectModel: ConformanceModel.shared)
            store = try #require(
                try coordinator.addPersistentStore(
                    ofType: FaultyIncrementalStore.storeType, configurationName: nil, at: url, options: nil)
                    as? FaultyIncrementalStore)
            try ConformanceData.populate(.conformance(coordinator))
        }

        deinit { DictionaryStore.destroyDatabase(at: url) }
    }

    /// Runs `body`, which must fail with `code` and a message naming the store and `method`; then, with the store
    /// behaving again, runs it once more, which must succeed in the same context.
    func expectFailure(
        _ fault: FaultyIncrementalStore.Fault, code: Int, method: String, in stack: FaultyStack,
        context: NSManagedObjectContext, _ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        stack.store.fault = fault
        do {
            try body()
            Issue.record("\(fault): no error", sourceLocation: sourceLocation)
        } catch let error as NSError {
            #expect(error.domain == NSCocoaErrorDomain, sourceLocation: sourceLocation)
            #expect(error.code == code, "\(fault): \(error)", sourceLocation: sourceLocation)
            #expect(error.localizedDescription.contains("FaultyIncrementalStore"), sourceLocation: sourceLocation)
            #expect(
                error.localizedDescription.contains(method), "\(error.localizedDescription)",
                sourceLocation: sourceLocation)
        }
        stack.store.fault = .none
        try body()
    }

    @Test func fetchResultsOfTheWrongShapeAreReported() throws {
        let stack = try FaultyStack()
        let context = NSManagedObjectContext.conformance(stack.coordinator)
        let other = NSPersistentStoreCoordinator(managedObjectModel: ConformanceModel.shared)
        DictionaryStore.register()
        let otherURL = DictionaryStore.newURL()
        defer { DictionaryStore.destroyDatabase(at: otherURL) }
        let otherStore = try other.addPersistentStore(
            ofType: DictionaryStore.storeType, configurationName: nil, at: otherURL, options: nil)
        stack.store.foreignID = (otherStore as? NSIncrementalStore)?.newObjectID(
            for: ConformanceModel.shared.entitiesByName["Person"]!, referenceObject: "k1")
        try context.run {
            let objects = { _ = try context.objects("Person") }
            let ids = {
                let request = NSFetchRequest<NSManagedObjectID>(entityName: "Person")
                request.resultType = .managedObjectIDResultType
                _ = try context.fetch(request)
            }
            let count = { _ = try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Person")) }
            let method = "execute(_:with:)"
            let code = NSPersistentStoreOperationError
            try expectFailure(.fetchNotAnArray, code: code, method: method, in: stack, context: context, objects)
            try expectFailure(.fetchIDsForObjects, code: code, method: method, in: stack, context: context, objects)
            try expectFailure(.fetchForeignID, code: code, method: method, in: stack, context: context, ids)
            try expectFailure(.fetchWrongEntity, code: code, method: method, in: stack, context: context, ids)
            try expectFailure(.countNotOneNumber, code: code, method: method, in: stack, context: context, count)
        }
    }

    @Test func malformedNodesAreReported() throws {
        let stack = try FaultyStack()
        let context = NSManagedObjectContext.conformance(stack.coordinator)
        let id = try {
            var id: NSManagedObjectID?
            try context.run { id = try ConformanceData.one(context, "Employee", "name", "Ann").objectID }
            return try #require(id)
        }()
        try context.run {
            // Each attempt loads in a fresh context, so that nothing of the failed load stays registered.
            let load = {
                let fresh = NSManagedObjectContext.conformance(stack.coordinator)
                try fresh.run {
                    let ann = try fresh.existingObject(with: id)
                    #expect(ann.value(forKey: "name") as? String == "Ann")
                    #expect(
                        (ann.value(forKey: "department") as? NSManagedObject)?.value(forKey: "name") as? String
                            == "R&D")
                }
            }
            let method = "newValuesForObject(with:with:)"
            let code = NSPersistentStoreOperationError
            try expectFailure(.nodeForAnotherObject, code: code, method: method, in: stack, context: context, load)
            try expectFailure(.attributeOfWrongType, code: code, method: method, in: stack, context: context, load)
            try expectFailure(.toOneNotAnID, code: code, method: method, in: stack, context: context, load)
        }
    }

    @Test func aMalformedRelationshipAnswerIsNotKept() throws {
        let stack = try FaultyStack()
        let context = NSManagedObjectContext.conformance(stack.coordinator)
        try context.run {
            let research = try ConformanceData.one(context, "Department", "name", "R&D")
            // A relationship fault cannot throw: what the store answered is not used, and not kept either.
            stack.store.fault = .toManyNotIDs
            #expect(ConformanceData.names(research.value(forKey: "employees")).isEmpty)
            stack.store.fault = .none
            #expect(ConformanceData.names(research.value(forKey: "employees")) == ["Ann", "Bob"])
        }
    }

    @Test func badPermanentIDsFailTheSaveAndKeepTheChanges() throws {
        let stack = try FaultyStack()
        let context = NSManagedObjectContext.conformance(stack.coordinator)
        try context.run {
            let method = "obtainPermanentIDs(for:)"
            let code = NSPersistentStoreOperationError
            var inserted: [NSManagedObject] = []
            let save = {
                if inserted.isEmpty {
                    inserted = [
                        context.make("Project", ["title": "New 1"]), context.make("Project", ["title": "New 2"]),
                    ]
                }
                try context.save()
            }
            for fault in [
                FaultyIncrementalStore.Fault.tooFewPermanentIDs, .samePermanentIDTwice, .temporaryPermanentIDs,
            ] {
                try expectFailure(fault, code: code, method: method, in: stack, context: context, save)
                #expect(inserted.allSatisfy { !$0.objectID.isTemporaryID })
                inserted = []
            }
            let titles = try context.values("Project", "title")
            #expect(
                titles == [
                    "Apollo", "Artemis", "Borealis", "New 1", "New 1", "New 1", "New 2", "New 2", "New 2", "Zephyr",
                ])
        }
    }

    @Test func aSaveThatThrowsHalfwayLeavesTheContextUsable() throws {
        let stack = try FaultyStack()
        let context = NSManagedObjectContext.conformance(stack.coordinator)
        try context.run {
            let bob = try ConformanceData.one(context, "Employee", "name", "Bob")
            bob.setValue(1_000.0, forKey: "salary")
            let project = context.make("Project", ["title": "Hopeful"])
            stack.store.fault = .saveThrows
            do {
                try context.save()
                Issue.record("the save succeeded")
            } catch let error as NSError {
                #expect(error.domain == NSCocoaErrorDomain)
                #expect(error.code == NSPersistentStoreSaveError)
                #expect(error.localizedDescription.contains("FaultyIncrementalStore.execute(_:with:) failed"))
                #expect(error.localizedDescription.contains("the disk caught fire"))
                #expect(error.userInfo[NSUnderlyingErrorKey] != nil)
            }
            // The changes are still there, unsaved; the store has none of them.
            #expect(context.hasChanges)
            #expect(bob.hasChanges)
            #expect(project.isInserted)
            let other = NSManagedObjectContext.conformance(stack.coordinator)
            try other.run {
                let titles = try other.values("Project", "title")
                #expect(!titles.contains("Hopeful"))
            }
            // Once the store works, the same context saves them.
            stack.store.fault = .none
            try context.save()
            try other.run {
                let titles = try other.values("Project", "title")
                #expect(titles.contains("Hopeful"))
                let salary = try ConformanceData.one(other, "Employee", "name", "Bob").value(forKey: "salary")
                #expect((salary as? NSNumber)?.doubleValue == 1_000)
            }
        }
    }

    @Test func conflictsTheStoreFindsWhileSavingGoToTheMergePolicy() throws {
        let stack = try FaultyStack()
        // Another coordinator on the same database stands in for another process.
        let elsewhere = NSPersistentStoreCoordinator(managedObjectModel: ConformanceModel.shared)
        try elsewhere.addPersistentStore(
            ofType: FaultyIncrementalStore.storeType, configurationName: nil, at: stack.url, options: nil)
        let other = NSManagedObjectContext.conformance(elsewhere)
        stack.store.otherWriter = {
            try other.run {
                try ConformanceData.one(other, "Employee", "name", "Bob").setValue(2_000.0, forKey: "salary")
                try other.save()
            }
        }
        let context = NSManagedObjectContext.conformance(stack.coordinator)
        try context.run {
            let bob = try ConformanceData.one(context, "Employee", "name", "Bob")
            bob.setValue(1_000.0, forKey: "salary")
            stack.store.fault = .conflictInSave
            do {
                try context.save()
                Issue.record("the save succeeded over another writer's change")
            } catch let error as NSError {
                #expect(error.domain == NSCocoaErrorDomain)
                #expect(error.code == NSManagedObjectMergeError)
                let conflicts = error.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSMergeConflict]
                #expect(conflicts?.map(\.sourceObject) == [bob])
            }
            // The context keeps its change; with a merge policy that lets it win, it saves.
            #expect(bob.hasChanges)
            context.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
            try context.save()
        }
        try other.run {
            other.refreshAllObjects()
            let salary = try ConformanceData.one(other, "Employee", "name", "Bob").value(forKey: "salary")
            #expect((salary as? NSNumber)?.doubleValue == 1_000)
        }
    }

    @Test func theStoreIsToldWhichObjectsContextsUse() throws {
        let stack = try FaultyStack()
        let first = NSManagedObjectContext.conformance(stack.coordinator)
        let second = NSManagedObjectContext.conformance(stack.coordinator)
        var held: [NSManagedObject] = []
        try first.run { held = try first.objects("Department") }
        let ids = held.map(\.objectID)
        #expect(ids.allSatisfy { stack.store.registrationCounts[$0] == 1 })
        try second.run { held += try second.objects("Department") }
        #expect(ids.allSatisfy { stack.store.registrationCounts[$0] == 2 })
        try first.run { first.reset() }
        #expect(ids.allSatisfy { stack.store.registrationCounts[$0] == 1 })
        held = []
        try second.run { second.reset() }
        #expect(ids.allSatisfy { stack.store.registrationCounts[$0] == nil })
        // Saved new objects are registered under their permanent IDs.
        try first.run {
            let project = first.make("Project", ["title": "Registered"])
            try first.save()
            #expect(stack.store.registrationCounts[project.objectID] == 1)
        }
    }

    @Test func objectIDsRoundTripTheirReferenceObjects() throws {
        DictionaryStore.register()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: ConformanceModel.shared)
        let url = DictionaryStore.newURL()
        defer { DictionaryStore.destroyDatabase(at: url) }
        let store = try #require(
            try coordinator.addPersistentStore(
                ofType: DictionaryStore.storeType, configurationName: nil, at: url, options: nil) as? NSIncrementalStore
        )
        let entity = ConformanceModel.shared.entitiesByName["Project"]!
        let byString = store.newObjectID(for: entity, referenceObject: "abc")
        #expect(store.referenceObject(for: byString) as? String == "abc")
        #expect(byString == store.newObjectID(for: entity, referenceObject: "abc"))
        #expect(byString != store.newObjectID(for: entity, referenceObject: "abd"))
        #expect(!byString.isTemporaryID)
        #expect(byString.persistentStore === store)
        let byNumber = store.newObjectID(for: entity, referenceObject: 42)
        #expect((store.referenceObject(for: byNumber) as? NSNumber)?.intValue == 42)
        #expect(byNumber.uriRepresentation().absoluteString == "x-coredata://\(store.identifier!)/Project/p42")
        #expect(coordinator.managedObjectID(forURIRepresentation: byNumber.uriRepresentation()) == byNumber)
        #expect(coordinator.managedObjectID(forURIRepresentation: byString.uriRepresentation()) == byString)
    }

    @Test func aStoreMustNameItselfInItsMetadata() throws {
        NSPersistentStoreCoordinator.registerStoreClass(NamelessIncrementalStore.self, forStoreType: "Nameless")
        NSPersistentStoreCoordinator.registerStoreClass(EmptyIncrementalStore.self, forStoreType: "EmptyIncremental")
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: ConformanceModel.shared)
        for type in ["Nameless", "EmptyIncremental"] {
            do {
                try coordinator.addPersistentStore(
                    ofType: type, configurationName: nil, at: URL(string: "test://\(type)"), options: nil)
                Issue.record("a store of type \(type) was added")
            } catch let error as NSError {
                #expect(error.domain == NSCocoaErrorDomain)
                #expect(error.code == NSPersistentStoreOpenError)
                #expect(error.localizedDescription.contains("loadMetadata()"))
            }
        }
        #expect(coordinator.persistentStores.isEmpty)
    }

    @Test func registeringTheSameClassAgainIsHarmless() {
        DictionaryStore.register()
        DictionaryStore.register()
        let registered = NSPersistentStoreCoordinator.registeredStoreTypes[DictionaryStore.storeType]
        #expect((registered as? AnyClass).map(ObjectIdentifier.init) == ObjectIdentifier(DictionaryStore.self))
    }

    @Test func registeringAnotherClassForATakenTypeStops() async {
        await #expect(processExitsWith: .failure) {
            NSPersistentStoreCoordinator.registerStoreClass(DictionaryStore.self, forStoreType: "Taken")
            NSPersistentStoreCoordinator.registerStoreClass(FaultyIncrementalStore.self, forStoreType: "Taken")
        }
    }
}
