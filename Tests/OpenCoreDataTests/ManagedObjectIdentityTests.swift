import OpenCoreDataShim
import Testing

/// Managed objects are equal only to themselves, whatever static type they are compared as, and sets of them hold
/// each object once; object IDs are equal when they name the same object, whichever instance each is.
@Suite struct ManagedObjectIdentityTests {
    @Test func anObjectIsEqualOnlyToItselfHoweverItIsTyped() {
        let context = CompanyModel.context()
        context.performAndWait {
            let ada = Employee(context: context)
            let bob = Employee(context: context)
            let acme = Company(context: context)
            let adaAsObject: NSObject = ada
            let adaAsManaged: NSManagedObject = ada
            let adaAsAny: Any = ada
            let adaAsOptional: Employee? = ada
            #expect(ada.isEqual(ada))
            #expect(ada.isEqual(adaAsObject))
            #expect(ada.isEqual(adaAsManaged))
            #expect(ada.isEqual(adaAsAny))
            #expect(ada.isEqual(adaAsOptional as Any))
            #expect(adaAsObject != bob as NSObject)
            #expect(!ada.isEqual(bob))
            #expect(!ada.isEqual(bob as NSObject))
            #expect(!ada.isEqual(acme))
            #expect(!ada.isEqual(acme as NSManagedObject))
            #expect(!ada.isEqual(nil))
            #expect(!ada.isEqual(NSNull()))
            #expect(!ada.isEqual("Ada"))
            #expect(!ada.isEqual(ada.objectID))
        }
    }

    @Test func setsHoldEachObjectOnce() {
        let context = CompanyModel.context()
        context.performAndWait {
            let employees = (0..<1_000).map { _ in Employee(context: context) }
            var typed = Set(employees)
            var managed = Set(employees.map { $0 as NSManagedObject })
            #expect(typed.count == 1_000)
            #expect(managed.count == 1_000)
            for employee in employees {
                #expect(!typed.insert(employee).inserted)
                #expect(!managed.insert(employee).inserted)
            }
            #expect(typed.count == 1_000 && managed.count == 1_000)
            let stranger = Employee(context: context)
            #expect(!typed.contains(stranger))
            #expect(!managed.contains(stranger))
            #expect(!managed.contains(Company(context: context)))
            #expect(employees.allSatisfy { typed.contains($0) && managed.contains($0) })
        }
    }

    @Test func anIDIsEqualToEveryIDOfItsObjectHoweverItIsTyped() throws {
        let context = CompanyModel.context()
        try context.performAndWait {
            let ada = Employee(context: context)
            let bob = Employee(context: context)
            try context.obtainPermanentIDs(for: [ada, bob])
            let id = ada.objectID
            let coordinator = try #require(context.persistentStoreCoordinator)
            let same = try #require(coordinator.managedObjectID(forURIRepresentation: id.uriRepresentation()))
            let other = bob.objectID
            #expect(id.isEqual(same))
            #expect(id.isEqual(same as NSObject))
            #expect(id.isEqual(same as Any))
            #expect(id.isEqual(Optional(same) as Any))
            #expect(same.isEqual(id as NSObject))
            #expect(id as NSObject == same as NSObject)
            #expect(!id.isEqual(other))
            #expect(!id.isEqual(other as NSObject))
            #expect(!id.isEqual(ada))
            #expect(!id.isEqual(ada as NSObject))
            #expect(!id.isEqual(nil))
            #expect(!id.isEqual(NSNull()))
            #expect(!id.isEqual(id.uriRepresentation()))
        }
    }

    @Test func setsHoldEachObjectsIDOnce() throws {
        let context = CompanyModel.context()
        try context.performAndWait {
            let employees = (0..<1_000).map { _ in Employee(context: context) }
            try context.obtainPermanentIDs(for: employees)
            let coordinator = try #require(context.persistentStoreCoordinator)
            let ids = employees.map(\.objectID)
            let copies = ids.compactMap { coordinator.managedObjectID(forURIRepresentation: $0.uriRepresentation()) }
            #expect(copies.count == 1_000)
            var typed = Set(ids)
            var objects = Set(ids.map { $0 as NSObject })
            for copy in copies {
                #expect(!typed.insert(copy).inserted)
                #expect(!objects.insert(copy).inserted)
            }
            #expect(typed.count == 1_000 && objects.count == 1_000)
            #expect(copies.allSatisfy { typed.contains($0) && objects.contains($0) })
            let stranger = Employee(context: context).objectID
            #expect(!typed.contains(stranger))
            #expect(!objects.contains(stranger))
            #expect(!objects.contains(employees[0]))
        }
    }
}
