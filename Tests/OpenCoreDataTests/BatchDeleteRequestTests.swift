import Foundation
import OpenCoreDataShim
import Testing

/// `NSBatchDeleteRequest`: by fetch request or by object IDs, with delete rules applied in the store (cascade,
/// nullify, deny, join rows), its result types, and merging the deletions into a context — with the same results from
/// every store.
@Suite struct BatchDeleteRequestTests {
    static func execute(_ request: NSPersistentStoreRequest, in stack: BatchStack) throws -> NSPersistentStoreResult {
        try BatchUpdateRequestTests.execute(request, in: stack)
    }

    static func deleteRequest(_ entity: String, _ format: String? = nil) -> NSBatchDeleteRequest {
        let fetch = NSFetchRequest<NSFetchRequestResult>(entityName: entity)
        fetch.predicate = format.map { NSPredicate(format: $0) }
        return NSBatchDeleteRequest(fetchRequest: fetch)
    }

    @Test(arguments: BatchStoreKind.all)
    func deletesWhatThePredicateMatches(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind)
        let request = Self.deleteRequest("BatchProject", "title == 'gemini'")
        request.resultType = .resultTypeCount
        let result = try #require(try Self.execute(request, in: stack) as? NSBatchDeleteResult)
        #expect(result.resultType == .resultTypeCount)
        #expect((result.result as? NSNumber)?.intValue == 1)
        #expect(try stack.names("BatchProject", nameKey: "title") == ["apollo"])
        // The join rows went with it: bob is in apollo only.
        let context = stack.context()
        try context.performAndWait {
            let bob = try context.existingObject(with: try stack.objectID("BatchWorker", "bob"))
            let titles = (bob.value(forKey: "projects") as? Set<NSManagedObject>)?.compactMap {
                $0.value(forKey: "title") as? String
            }
            #expect(titles == ["apollo"])
        }
    }

    @Test(arguments: BatchStoreKind.all)
    func cascadesFollowTheirRulesAndNullifyTheRest(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind)
        let lab = try stack.objectID("BatchDepartment", "Lab")
        let request = Self.deleteRequest("BatchDepartment", "name == 'Sales'")
        request.resultType = .resultTypeObjectIDs
        let result = try #require(try Self.execute(request, in: stack) as? NSBatchDeleteResult)
        let deleted = try #require(result.result as? [NSManagedObjectID])
        // The department, its three workers (cascade), and their badges (cascade from worker).
        #expect(deleted.count == 1 + 3 + 2)
        #expect(Set(deleted.map { $0.entity.name ?? "" }) == ["BatchDepartment", "BatchWorker", "BatchBadge"])
        #expect(try stack.names("BatchDepartment") == ["Lab"])
        #expect(try stack.names("BatchWorker") == ["dee", "eve", "max"])
        #expect(try stack.names("BatchBadge", nameKey: "code") == ["D1"])
        // Projects stay (nullify), without the deleted members.
        #expect(try stack.names("BatchProject", nameKey: "title") == ["apollo", "gemini"])
        let context = stack.context()
        try context.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "BatchProject")
            for project in try context.fetch(request) {
                #expect((project.value(forKey: "members") as? Set<NSManagedObject>)?.isEmpty == true)
            }
            let department = try context.existingObject(with: lab)
            #expect((department.value(forKey: "workers") as? Set<NSManagedObject>)?.count == 3)
        }
    }

    @Test(arguments: BatchStoreKind.all)
    func nullifiedReferencesAreCleared(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind)
        // A badge's holder is nullify: deleting bob's badge leaves bob without one.
        let request = Self.deleteRequest("BatchBadge", "code == 'B1'")
        _ = try Self.execute(request, in: stack)
        let context = stack.context()
        try context.performAndWait {
            let bob = try context.existingObject(with: try stack.objectID("BatchWorker", "bob"))
            #expect(bob.value(forKey: "badge") == nil)
            let ann = try context.existingObject(with: try stack.objectID("BatchWorker", "ann"))
            #expect((ann.value(forKey: "badge") as? NSManagedObject)?.value(forKey: "code") as? String == "A1")
        }
        // Deleting workers nullifies their department's side: the department stays.
        _ = try Self.execute(Self.deleteRequest("BatchWorker", "department.name == 'Lab'"), in: stack)
        #expect(try stack.names("BatchDepartment") == ["Lab", "Sales"])
        #expect(try stack.names("BatchWorker") == ["ann", "bob", "cy"])
        #expect(try stack.names("BatchBadge", nameKey: "code") == ["A1"])
    }

    @Test(arguments: BatchStoreKind.all)
    func aDenyRuleWithDestinationsFailsTheWholeRequest(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind)
        BatchUpdateRequestTests.expectError(
            { _ = try Self.execute(Self.deleteRequest("BatchSafe"), in: stack) }, code: 1600, key: "documents")
        #expect(try stack.names("BatchSafe") == ["empty", "vault"])
        // A safe whose relationship is empty goes.
        _ = try Self.execute(Self.deleteRequest("BatchSafe", "name == 'empty'"), in: stack)
        #expect(try stack.names("BatchSafe") == ["vault"])
        // Once its documents are gone, so can the vault.
        _ = try Self.execute(Self.deleteRequest("BatchDocument"), in: stack)
        _ = try Self.execute(Self.deleteRequest("BatchSafe"), in: stack)
        #expect(try stack.names("BatchSafe").isEmpty)
    }

    @Test(arguments: BatchStoreKind.all)
    func objectIDsOfOneEntityAreDeleted(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind)
        let ids = try ["cy", "eve"].map { try stack.objectID("BatchWorker", $0) }
        let request = NSBatchDeleteRequest(objectIDs: ids)
        #expect(request.fetchRequest.entityName == "BatchWorker")
        request.resultType = .resultTypeObjectIDs
        let result = try #require(try Self.execute(request, in: stack) as? NSBatchDeleteResult)
        #expect(Set(try #require(result.result as? [NSManagedObjectID])) == Set(ids))
        #expect(try stack.names("BatchWorker") == ["ann", "bob", "dee", "max"])

        // Deleting them again deletes nothing.
        let again = NSBatchDeleteRequest(objectIDs: ids)
        again.resultType = .resultTypeCount
        let count = try #require(try Self.execute(again, in: stack) as? NSBatchDeleteResult)
        #expect((count.result as? NSNumber)?.intValue == 0)

        // IDs of two entities (a subentity counts as another) are refused.
        let mixed = NSBatchDeleteRequest(objectIDs: [
            try stack.objectID("BatchWorker", "ann"), try stack.objectID("BatchWorker", "max"),
        ])
        BatchUpdateRequestTests.expectError({ _ = try Self.execute(mixed, in: stack) }, code: 134_070, key: nil)
        #expect(try stack.names("BatchWorker") == ["ann", "bob", "dee", "max"])
    }

    @Test(arguments: BatchStoreKind.all)
    func sortOffsetAndLimitChooseTheDeletedObjects(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind)
        let fetch = NSFetchRequest<NSFetchRequestResult>(entityName: "BatchWorker")
        fetch.sortDescriptors = [NSSortDescriptor(key: "salary", ascending: false)]
        fetch.fetchOffset = 1
        fetch.fetchLimit = 2
        let request = NSBatchDeleteRequest(fetchRequest: fetch)
        request.resultType = .resultTypeCount
        let result = try #require(try Self.execute(request, in: stack) as? NSBatchDeleteResult)
        // eve and dee, and dee's badge.
        #expect((result.result as? NSNumber)?.intValue == 3)
        #expect(try stack.names("BatchWorker") == ["ann", "bob", "cy", "max"])
    }

    /// Deleted objects stay in a context until the IDs are merged; then they are gone from it, and from the
    /// relationships of the objects that stay.
    @Test(arguments: BatchStoreKind.all)
    func mergingTheDeletedIDsRemovesTheObjects(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind)
        let context = stack.context()
        try context.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "BatchDepartment")
            request.predicate = NSPredicate(format: "name == 'Sales'")
            let sales = try #require(try context.fetch(request).first)
            let workers = try #require(sales.value(forKey: "workers") as? Set<NSManagedObject>)
            #expect(workers.count == 3)
            let ann = try #require(workers.first { $0.value(forKey: "name") as? String == "ann" })

            let delete = NSBatchDeleteRequest(objectIDs: [ann.objectID])
            delete.resultType = .resultTypeObjectIDs
            let result = try #require(try context.execute(delete) as? NSBatchDeleteResult)
            let ids = try #require(result.result as? [NSManagedObjectID])
            #expect(context.registeredObject(for: ann.objectID) === ann)
            #expect(!ann.isDeleted)

            final class Box: @unchecked Sendable { var deleted: [NSManagedObjectID] = [] }
            let box = Box()
            let observer = NotificationCenter.default.addObserver(
                forName: NSManagedObjectContext.didChangeObjectsNotification, object: context, queue: nil
            ) { note in
                box.deleted = (note.userInfo?[NSDeletedObjectsKey] as? Set<NSManagedObject> ?? []).map(\.objectID)
            }
            defer { NotificationCenter.default.removeObserver(observer) }
            NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSDeletedObjectsKey: ids], into: [context])
            #expect(box.deleted == [ann.objectID])
            #expect(context.registeredObject(for: ann.objectID) == nil)
            #expect((sales.value(forKey: "workers") as? Set<NSManagedObject>)?.count == 2)
        }
    }

    @Test(arguments: BatchStoreKind.all)
    func badPredicatesThrowNamingTheKey(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind)
        BatchUpdateRequestTests.expectError(
            { _ = try Self.execute(Self.deleteRequest("BatchWorker", "department.title == 'x'"), in: stack) },
            code: 134_070, key: "title")
        #expect(try stack.names("BatchWorker").count == 6)
    }
}
