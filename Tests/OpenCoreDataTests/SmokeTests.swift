import OpenCoreDataShim
import Testing

@Suite struct SmokeTests {
    @Test func insertRelateSaveFetch() throws {
        let context = CompanyModel.context()
        try context.performAndWait {
            let company = Company(context: context)
            company.name = "Acme"
            company.inn = "7701"
            let ada = Employee(context: context)
            ada.firstName = "Ada"
            ada.company = company
            #expect(company.employees.count == 1)
            #expect(company.createdAt != nil)
            try context.save()
            let request = NSFetchRequest<Employee>(entityName: "Employee")
            request.predicate = NSPredicate(format: "company.name == %@", "Acme")
            let found = try context.fetch(request)
            #expect(found.count == 1)
            #expect(found.first === ada)
            #expect(!ada.objectID.isTemporaryID)
        }
    }
}
