import Foundation
import OpenCoreDataShim
import Testing

/// `NSBatchUpdateRequest` through `NSManagedObjectContext.execute(_:)`: constants and expressions, predicates,
/// subentities, result types, what happens to objects already in a context, and the errors of bad requests — with
/// the same results from every store.
@Suite struct BatchUpdateRequestTests {
    /// Runs `request` in a new context of `stack`.
    static func execute(_ request: NSPersistentStoreRequest, in stack: BatchStack) throws -> NSPersistentStoreResult {
        let context = stack.context()
        return try context.performAndWait { try context.execute(request) }
    }

    @Test(arguments: BatchStoreKind.all)
    func constantsChangeTheMatchingObjectsOnly(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind)
        let request = NSBatchUpdateRequest(entityName: "BatchWorker")
        request.predicate = NSPredicate(format: "department.name == %@", "Sales")
        request.propertiesToUpdate = ["rating": 9.5, "active": false]
        request.resultType = .updatedObjectsCountResultType
        let result = try #require(try Self.execute(request, in: stack) as? NSBatchUpdateResult)
        #expect(result.resultType == .updatedObjectsCountResultType)
        #expect((result.result as? NSNumber)?.intValue == 3)
        #expect(
            try stack.values("BatchWorker", "rating", as: Double.self)
                == ["ann": 9.5, "bob": 9.5, "cy": 9.5, "dee": 5, "eve": 1, "max": 4.5])
        let active = try stack.values("BatchWorker", "active", as: Bool.self)
        #expect(active.filter { !$0.value }.keys.sorted() == ["ann", "bob", "cy"])
    }

    @Test(arguments: BatchStoreKind.all)
    func expressionsAreComputedFromTheValuesBeforeTheUpdate(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind)
        let request = NSBatchUpdateRequest(entityName: "BatchWorker")
        request.predicate = NSPredicate(format: "salary >= 300")
        // Both values read `salary` as it was; an integer attribute takes a fraction toward zero.
        request.propertiesToUpdate = [
            "salary": NSExpression(format: "salary * 1.5 + 1"),
            "rating": NSExpression(format: "salary / 8"),
            "level": NSExpression(format: "salary - 299"),
        ]
        _ = try Self.execute(request, in: stack)
        #expect(
            try stack.values("BatchWorker", "salary", as: Int64.self)
                == ["ann": 100, "bob": 200, "cy": 451, "dee": 601, "eve": 751, "max": 901])
        #expect(
            try stack.values("BatchWorker", "rating", as: Double.self)
                == ["ann": 3.5, "bob": 4, "cy": 37.5, "dee": 50, "eve": 62.5, "max": 75])
        #expect(try stack.values("BatchWorker", "level", as: Int16.self)["max"] == 301)
    }

    @Test(arguments: BatchStoreKind.all)
    func datesTakeNowAndSecondsAndNilClears(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind)
        let start = Date()
        let request = NSBatchUpdateRequest(entityName: "BatchWorker")
        request.predicate = NSPredicate(format: "name == 'ann'")
        request.propertiesToUpdate = ["hired": NSExpression(format: "now() - 86400"), "rating": NSNull()]
        _ = try Self.execute(request, in: stack)
        let context = stack.context()
        try context.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "BatchWorker")
            request.predicate = NSPredicate(format: "name == 'ann'")
            let ann = try #require(try context.fetch(request).first)
            let hired = try #require(ann.value(forKey: "hired") as? Date)
            #expect(abs(hired.timeIntervalSince(start) + 86400) < 60)
            #expect(ann.value(forKey: "rating") == nil)
        }
    }

    @Test(arguments: BatchStoreKind.all)
    func subentitiesAreUpdatedUnlessExcluded(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind)
        let request = NSBatchUpdateRequest(entityName: "BatchWorker")
        request.includesSubentities = false
        request.propertiesToUpdate = ["salary": 1]
        request.resultType = .updatedObjectIDsResultType
        let result = try #require(try Self.execute(request, in: stack) as? NSBatchUpdateResult)
        let ids = try #require(result.result as? [NSManagedObjectID])
        #expect(ids.count == 5)
        #expect(!ids.contains(try stack.objectID("BatchWorker", "max")))
        #expect(try stack.values("BatchWorker", "salary", as: Int64.self)["max"] == 600)

        let managers = NSBatchUpdateRequest(entityName: "BatchWorker")
        managers.predicate = NSPredicate(format: "salary > 1")
        managers.propertiesToUpdate = ["salary": 2]
        let status = try #require(try Self.execute(managers, in: stack) as? NSBatchUpdateResult)
        #expect(status.resultType == .statusOnlyResultType)
        #expect((status.result as? NSNumber)?.boolValue == true)
        #expect(try stack.values("BatchWorker", "salary", as: Int64.self)["max"] == 2)
    }

    @Test(arguments: BatchStoreKind.all)
    func objectIDsNameTheUpdatedObjects(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind)
        let request = NSBatchUpdateRequest(entity: BatchModel.shared.entitiesByName["BatchWorker"]!)
        request.predicate = NSPredicate(format: "rating > 3.9")
        request.propertiesToUpdate = [BatchModel.shared.entitiesByName["BatchWorker"]!.attributesByName["level"]!: 7]
        request.resultType = .updatedObjectIDsResultType
        let result = try #require(try Self.execute(request, in: stack) as? NSBatchUpdateResult)
        let ids = Set(try #require(result.result as? [NSManagedObjectID]))
        #expect(ids == Set(try ["bob", "dee", "max"].map { try stack.objectID("BatchWorker", $0) }))
    }

    /// Registered objects keep what they had until they are refreshed or the IDs are merged; saving one that changed
    /// in the meantime meets the new version (optimistic locking).
    @Test(arguments: BatchStoreKind.all)
    func registeredObjectsStayStaleUntilMerged(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind)
        let context = stack.context()
        try context.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "BatchWorker")
            request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            let workers = try context.fetch(request)
            let ann = workers[0]
            let bob = workers[1]
            #expect(ann.value(forKey: "salary") as? Int64 == 100)

            let update = NSBatchUpdateRequest(entityName: "BatchWorker")
            update.predicate = NSPredicate(format: "name IN %@", ["ann", "bob"])
            update.propertiesToUpdate = ["salary": 1000]
            update.resultType = .updatedObjectIDsResultType
            let result = try #require(try context.execute(update) as? NSBatchUpdateResult)
            let ids = try #require(result.result as? [NSManagedObjectID])

            // The context did not see the update.
            #expect(ann.value(forKey: "salary") as? Int64 == 100)
            #expect(!ann.hasChanges)
            #expect(try context.fetch(request)[0].value(forKey: "salary") as? Int64 == 100)

            // Saving a stale object conflicts with the update's new version.
            bob.setValue("robert", forKey: "name")
            #expect(throws: Error.self) { try context.save() }
            context.rollback()

            NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSUpdatedObjectsKey: ids], into: [context])
            #expect(ann.value(forKey: "salary") as? Int64 == 1000)
            #expect(bob.value(forKey: "salary") as? Int64 == 1000)
            bob.setValue("robert", forKey: "name")
            try context.save()
        }
        #expect(try stack.values("BatchWorker", "salary", as: Int64.self)["robert"] == 1000)
    }

    @Test(arguments: BatchStoreKind.all)
    func refreshingReadsTheUpdatedValues(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind)
        let context = stack.context()
        try context.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "BatchDepartment")
            request.predicate = NSPredicate(format: "name == 'Lab'")
            let lab = try #require(try context.fetch(request).first)
            #expect(lab.value(forKey: "budget") as? Double == 2000)
            let update = NSBatchUpdateRequest(entityName: "BatchDepartment")
            update.propertiesToUpdate = ["budget": NSExpression(format: "budget + 0.25")]
            _ = try context.execute(update)
            #expect(lab.value(forKey: "budget") as? Double == 2000)
            context.refresh(lab, mergeChanges: false)
            #expect(lab.value(forKey: "budget") as? Double == 2000.25)
        }
    }

    @Test(arguments: BatchStoreKind.all)
    func theCoordinatorExecutesFetchAndBatchRequestsForAContext(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind)
        let context = stack.context()
        try context.performAndWait {
            let fetch = NSFetchRequest<NSManagedObject>(entityName: "BatchDepartment")
            fetch.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            let departments = try #require(try stack.coordinator.execute(fetch, with: context) as? [NSManagedObject])
            #expect(departments.compactMap { $0.value(forKey: "name") as? String } == ["Lab", "Sales"])
            #expect(departments.allSatisfy { $0.managedObjectContext === context })

            let update = NSBatchUpdateRequest(entityName: "BatchDepartment")
            update.propertiesToUpdate = ["budget": 0.0]
            update.resultType = .updatedObjectsCountResultType
            let result = try stack.coordinator.execute(update, with: context) as? NSBatchUpdateResult
            #expect((result?.result as? NSNumber)?.intValue == 2)
        }
    }

    // MARK: Bad requests

    /// The key a failed batch request's error names (on Apple platforms, where these are exceptions or other codes,
    /// only that it failed).
    static func expectError(
        _ body: () throws -> Void, code: Int, key: String?, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        do {
            try body()
            Issue.record("the request did not throw", sourceLocation: sourceLocation)
        } catch {
            #if !canImport(CoreData)
            let error = error as NSError
            #expect(error.domain == NSCocoaErrorDomain, sourceLocation: sourceLocation)
            #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
            if let key {
                #expect(error.userInfo[NSValidationKeyErrorKey] as? String == key, sourceLocation: sourceLocation)
                #expect(error.localizedDescription.contains("'\(key)'"), sourceLocation: sourceLocation)
            }
            #endif
        }
    }

    @Test(arguments: BatchStoreKind.all)
    func badKeysAndValuesThrowNamingTheKey(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind)
        func update(_ properties: [AnyHashable: Any], predicate: NSPredicate? = nil) -> NSBatchUpdateRequest {
            let request = NSBatchUpdateRequest(entityName: "BatchWorker")
            request.propertiesToUpdate = properties
            request.predicate = predicate
            return request
        }
        let invalid = 134_070
        Self.expectError({ _ = try Self.execute(update(["wage": 1]), in: stack) }, code: invalid, key: "wage")
        Self.expectError(
            { _ = try Self.execute(update(["department": NSNull()]), in: stack) }, code: invalid, key: "department")
        Self.expectError({ _ = try Self.execute(update(["salary": "lots"]), in: stack) }, code: invalid, key: "salary")
        Self.expectError(
            { _ = try Self.execute(update(["name": NSExpression(format: "salary + 1")]), in: stack) }, code: invalid,
            key: "name")
        Self.expectError(
            { _ = try Self.execute(update(["salary": 1], predicate: NSPredicate(format: "wages > 1")), in: stack) },
            code: invalid, key: "wages")
        // Expressions no store computes exactly in a batch update.
        Self.expectError(
            { _ = try Self.execute(update(["name": NSExpression(format: "uppercase(name)")]), in: stack) },
            code: 134_091, key: "name")
        Self.expectError(
            { _ = try Self.execute(update(["rating": NSExpression(format: "rating / salary")]), in: stack) },
            code: 134_091, key: "rating")
        Self.expectError(
            { _ = try Self.execute(update(["rating": NSExpression(format: "department.budget")]), in: stack) },
            code: 134_091, key: "rating")
        // Nothing changed.
        #expect(try stack.values("BatchWorker", "salary", as: Int64.self)["ann"] == 100)
    }
}
