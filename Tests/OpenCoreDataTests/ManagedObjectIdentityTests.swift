import OpenCoreDataShim
import Testing

/// Managed objects are equal only to themselves, whatever static type they are compared as, and sets of them hold
/// each object once.
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
}
