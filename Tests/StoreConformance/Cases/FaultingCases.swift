import Foundation
import OpenCoreData
import Testing

extension StoreConformanceCase {
    static let faulting: [StoreConformanceCase] = [
        StoreConformanceCase("Fetched objects are faults until touched, and load from the store") { fixture in
            let stack = try ConformanceStack(fixture)
            try ConformanceData.populate(stack.newContext())
            let context = stack.newContext()
            try context.run {
                let faults = try context.objects("Department", sortedBy: ["name"])
                let allFaults = faults.allSatisfy { $0.isFault }
                #expect(allFaults)
                #expect(faults.first?.value(forKey: "name") as? String == "Empty")
                #expect(faults.first?.isFault == false)
                let full = try context.objects("Employee", "name == 'Ann'") { $0.returnsObjectsAsFaults = false }
                #expect(full.first?.isFault == false)
                // A fault made from an ID alone loads when touched.
                let id = try ConformanceData.one(context, "Project", "title", "Borealis").objectID
                let other = NSManagedObjectContext.conformance(stack.coordinator)
                try other.run {
                    let fault = other.object(with: id)
                    #expect(fault.isFault)
                    #expect(fault.value(forKey: "title") as? String == "Borealis")
                    let members = fault.value(forKey: "members") as? Set<NSManagedObject>
                    #expect(ConformanceData.names(members) == ["Cid", "Quinn"])
                }
                // Turned back into a fault, an object reloads what another context saved meanwhile.
                let ann = try ConformanceData.one(context, "Employee", "name", "Ann")
                #expect((ann.value(forKey: "age") as? NSNumber)?.intValue == 34)
                try other.run {
                    let theirs = try ConformanceData.one(other, "Employee", "name", "Ann")
                    theirs.setValue(35, forKey: "age")
                    try other.save()
                }
                context.refresh(ann, mergeChanges: false)
                #expect(ann.isFault)
                #expect((ann.value(forKey: "age") as? NSNumber)?.intValue == 35)
            }
        },
        StoreConformanceCase("Object ID results and existing objects come from the store") { fixture in
            let stack = try ConformanceStack(fixture)
            try ConformanceData.populate(stack.newContext())
            let context = stack.newContext()
            try context.run {
                let request = NSFetchRequest<NSManagedObjectID>(entityName: "Project")
                request.resultType = .managedObjectIDResultType
                request.predicate = NSPredicate(format: "title BEGINSWITH 'A'")
                let ids = try context.fetch(request)
                #expect(ids.count == 2)
                for id in ids {
                    #expect(!id.isTemporaryID)
                    #expect(id.entity.name == "Project")
                    let title = try context.existingObject(with: id).value(forKey: "title") as? String
                    #expect(title?.hasPrefix("A") == true)
                }
            }
        },
    ]

    static let optimisticLocking: [StoreConformanceCase] = [
        StoreConformanceCase("Saving over another context's change is a merge conflict") { fixture in
            let stack = try ConformanceStack(fixture)
            try ConformanceData.populate(stack.newContext())
            try checkConflicts(between: stack.newContext(), and: stack.newContext())
        },
        StoreConformanceCase("Saving over another coordinator's change is a merge conflict") { fixture in
            guard fixture.sharesLiveChanges else { return }
            let stack = try ConformanceStack(fixture)
            try ConformanceData.populate(stack.newContext())
            try checkConflicts(between: stack.newContext(), and: .conformance(try stack.reopen()))
        },
    ]

    /// `first` and `second` read the same objects; `second` saves changes; then `first`'s saves of its own changes
    /// to them conflict: with the default policy the save fails with the conflicts and `first` stays usable, and a
    /// merge policy resolves them.
    static func checkConflicts(between first: NSManagedObjectContext, and second: NSManagedObjectContext) throws {
        // Held across the blocks: a context keeps only the objects someone holds (or that have changes).
        var read: [NSManagedObject] = []
        try first.run {
            read = [
                try ConformanceData.one(first, "Employee", "name", "Bob"),
                try ConformanceData.one(first, "Employee", "name", "Dee"),
            ]
            for object in read { _ = object.value(forKey: "age") }
        }
        try second.run {
            try ConformanceData.one(second, "Employee", "name", "Bob").setValue(29, forKey: "age")
            second.delete(try ConformanceData.one(second, "Employee", "name", "Dee"))
            try second.save()
        }
        try first.run {
            let (bob, dee) = (read[0], read[1])
            bob.setValue(99_000.0, forKey: "salary")
            do {
                try first.save()
                Issue.record("saving over another context's change succeeded")
            } catch let error as NSError {
                #expect(error.domain == NSCocoaErrorDomain)
                #expect(error.code == NSManagedObjectMergeError)
                let conflicts = error.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSMergeConflict] ?? []
                #expect(conflicts.count == 1)
                #expect(conflicts.first?.sourceObject == bob)
                #expect((conflicts.first?.persistedSnapshot?["age"] as? NSNumber)?.intValue == 29)
            }
            // The context is still usable: with a merge policy, its change wins property by property.
            first.mergePolicy = NSMergePolicy.mergeByPropertyObjectTrump
            try first.save()
            // Changing an object deleted meanwhile conflicts too (with nothing persisted).
            dee.setValue(24, forKey: "age")
            first.mergePolicy = NSMergePolicy.error
            do {
                try first.save()
                Issue.record("saving a change to an object deleted by another context succeeded")
            } catch let error as NSError {
                #expect(error.code == NSManagedObjectMergeError)
                let conflicts = error.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSMergeConflict] ?? []
                #expect(conflicts.first?.persistedSnapshot == nil)
                #expect(conflicts.first?.newVersionNumber == 0)
            }
            first.rollback()
        }
        try second.run {
            second.refreshAllObjects()
            let bob = try ConformanceData.one(second, "Employee", "name", "Bob")
            #expect((bob.value(forKey: "age") as? NSNumber)?.intValue == 29)
            #expect((bob.value(forKey: "salary") as? NSNumber)?.doubleValue == 99_000)
        }
    }
}
