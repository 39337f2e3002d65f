import Foundation
import OpenCoreDataShim
import Testing

/// `NSBatchInsertRequest`: from dictionaries, a dictionary handler or a managed object handler, with default values,
/// its result types, keys that go on after the inserted ones, and the errors of bad values — with the same results
/// from every store.
@Suite struct BatchInsertRequestTests {
    static func execute(_ request: NSPersistentStoreRequest, in stack: BatchStack) throws -> NSPersistentStoreResult {
        try BatchUpdateRequestTests.execute(request, in: stack)
    }

    @Test(arguments: BatchStoreKind.all)
    func dictionariesBecomeObjectsWithDefaultsForMissingAttributes(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind, fill: false)
        let hired = Date(timeIntervalSinceReferenceDate: 700_000_000)
        let request = NSBatchInsertRequest(
            entityName: "BatchWorker",
            objects: [
                ["name": "ann", "salary": 100, "rating": 3.5, "hired": hired],
                ["name": "bob", "salary": NSNumber(value: 200), "active": false],
            ])
        request.resultType = .objectIDs
        let result = try #require(try Self.execute(request, in: stack) as? NSBatchInsertResult)
        #expect(result.resultType == .objectIDs)
        let ids = try #require(result.result as? [NSManagedObjectID])
        #expect(ids.count == 2)
        #expect(ids.allSatisfy { !$0.isTemporaryID && $0.entity.name == "BatchWorker" })
        #expect(try stack.values("BatchWorker", "salary", as: Int64.self) == ["ann": 100, "bob": 200])
        #expect(try stack.values("BatchWorker", "rating", as: Double.self) == ["ann": 3.5])
        #expect(try stack.values("BatchWorker", "hired", as: Date.self) == ["ann": hired])
        // Defaults: `active` true, `level` 1.
        #expect(try stack.values("BatchWorker", "active", as: Bool.self) == ["ann": true, "bob": false])
        #expect(try stack.values("BatchWorker", "level", as: Int16.self) == ["ann": 1, "bob": 1])
        let context = stack.context()
        try context.performAndWait {
            let names = try ids.map { try context.existingObject(with: $0).value(forKey: "name") as? String }
            #expect(names == ["ann", "bob"])
        }
    }

    @Test(arguments: BatchStoreKind.all)
    func aDictionaryHandlerIsCalledUntilItReturnsTrue(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind, fill: false)
        var index = 0
        var calls = 0
        let request = NSBatchInsertRequest(entityName: "BatchProject") { dictionary in
            calls += 1
            guard index < 5 else { return true }
            dictionary["title"] = "project \(index)"
            index += 1
            return false
        }
        request.resultType = .count
        let result = try #require(try Self.execute(request, in: stack) as? NSBatchInsertResult)
        #expect((result.result as? NSNumber)?.intValue == 5)
        #expect(calls == 6)
        #expect(try stack.names("BatchProject", nameKey: "title") == (0..<5).map { "project \($0)" })
    }

    @Test(arguments: BatchStoreKind.all)
    func aManagedObjectHandlerSetsTheAttributesOfAnObjectOfTheEntity(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind, fill: false)
        var remaining = ["x", "y"]
        let entity = BatchModel.shared.entitiesByName["BatchManager"]!
        let request = NSBatchInsertRequest(entity: entity) { object in
            #expect(object.entity.name == "BatchManager")
            #expect(object.managedObjectContext == nil)
            guard let name = remaining.popLast() else { return true }
            object.setValue(name, forKey: "name")
            object.setValue(NSNumber(value: 7), forKey: "bonus")
            return false
        }
        let result = try #require(try Self.execute(request, in: stack) as? NSBatchInsertResult)
        #expect(result.resultType == .statusOnly)
        #expect((result.result as? NSNumber)?.boolValue == true)
        #expect(try stack.values("BatchManager", "bonus", as: Int64.self) == ["x": 7, "y": 7])
        #expect(try stack.values("BatchWorker", "level", as: Int16.self) == ["x": 1, "y": 1])
    }

    /// Objects inserted by a context afterwards get keys of their own, and the inserted objects are as good as any.
    @Test(arguments: BatchStoreKind.all)
    func laterObjectsGetOtherKeys(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind)
        let request = NSBatchInsertRequest(
            entityName: "BatchWorker", objects: (0..<3).map { ["name": "new \($0)", "salary": $0] })
        request.resultType = .objectIDs
        let ids = try #require(
            (try Self.execute(request, in: stack) as? NSBatchInsertResult)?.result as? [NSManagedObjectID])
        let context = stack.context()
        try context.performAndWait {
            let worker = NSEntityDescription.insertNewObject(forEntityName: "BatchWorker", into: context)
            worker.setValue("later", forKey: "name")
            let department = try context.existingObject(with: try stack.objectID("BatchDepartment", "Lab"))
            let inserted = try context.existingObject(with: ids[0])
            inserted.setValue(department, forKey: "department")
            try context.save()
            #expect(!ids.contains(worker.objectID))
        }
        #expect(try stack.names("BatchWorker").count == 6 + 3 + 1)
        #expect(try stack.values("BatchWorker", "salary", as: Int64.self)["new 2"] == 2)
        let lab = stack.context()
        try lab.performAndWait {
            let department = try lab.existingObject(with: try stack.objectID("BatchDepartment", "Lab"))
            #expect((department.value(forKey: "workers") as? Set<NSManagedObject>)?.count == 4)
        }
    }

    /// Merging inserted IDs faults the objects into the context and announces them as inserted, which is how a
    /// fetched results controller learns of them.
    @Test(arguments: BatchStoreKind.all)
    func mergingInsertedIDsAnnouncesTheObjects(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind, fill: false)
        let context = stack.context()
        try context.performAndWait {
            let request = NSBatchInsertRequest(entityName: "BatchProject", objects: [["title": "a"], ["title": "b"]])
            request.resultType = .objectIDs
            let result = try #require(try context.execute(request) as? NSBatchInsertResult)
            let ids = try #require(result.result as? [NSManagedObjectID])
            #expect(context.registeredObject(for: ids[0]) == nil)

            final class Box: @unchecked Sendable { var inserted: [NSManagedObject] = [] }
            let box = Box()
            let observer = NotificationCenter.default.addObserver(
                forName: NSManagedObjectContext.didChangeObjectsNotification, object: context, queue: nil
            ) { note in
                box.inserted = Array(note.userInfo?[NSInsertedObjectsKey] as? Set<NSManagedObject> ?? [])
            }
            defer { NotificationCenter.default.removeObserver(observer) }
            NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSInsertedObjectsKey: ids], into: [context])
            #expect(Set(box.inserted.map(\.objectID)) == Set(ids))
            #expect(Set(box.inserted.compactMap { $0.value(forKey: "title") as? String }) == ["a", "b"])
            #expect(box.inserted.allSatisfy { !$0.isInserted && !$0.hasChanges })
        }
    }

    @Test(arguments: BatchStoreKind.all)
    func badValuesThrowNamingTheKeyAndInsertNothing(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind, fill: false)
        let invalid = 134_070
        func insert(_ objects: [[String: Any]]) throws {
            _ = try Self.execute(NSBatchInsertRequest(entityName: "BatchWorker", objects: objects), in: stack)
        }
        BatchUpdateRequestTests.expectError(
            { try insert([["name": "ok"], ["nmae": "typo"]]) }, code: invalid, key: "nmae")
        BatchUpdateRequestTests.expectError(
            { try insert([["name": "ok"], ["salary": "much"]]) }, code: invalid, key: "salary")
        BatchUpdateRequestTests.expectError(
            { try insert([["name": "ok"], ["department": NSNull()]]) }, code: invalid, key: "department")
        #expect(try stack.names("BatchWorker").isEmpty)
    }
}
