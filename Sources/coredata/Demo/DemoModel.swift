import OpenCoreDataShim

/// The demo's Company/Employee model: deleting a company deletes its employees (cascade); deleting an employee
/// only removes it from its company (nullify).
enum DemoModel {
    static func make() -> NSManagedObjectModel {
        let company = NSEntityDescription()
        company.name = "Company"
        company.managedObjectClassName = String(reflecting: DemoCompany.self)
        let employee = NSEntityDescription()
        employee.name = "Employee"
        employee.managedObjectClassName = String(reflecting: DemoEmployee.self)

        let inn = attribute("inn", .stringAttributeType, optional: false)
        inn.setValidationPredicates(
            [NSPredicate(format: "SELF MATCHES '[0-9]{10}'")],
            withValidationWarnings: ["An INN is ten digits"])
        let name = attribute("name", .stringAttributeType, optional: false)
        let uid = attribute("uid", .UUIDAttributeType, optional: false)
        let createdAt = attribute("createdAt", .dateAttributeType)

        let employees = NSRelationshipDescription()
        employees.name = "employees"
        employees.destinationEntity = employee
        employees.maxCount = 0
        employees.deleteRule = .cascadeDeleteRule
        let worksFor = NSRelationshipDescription()
        worksFor.name = "company"
        worksFor.destinationEntity = company
        worksFor.maxCount = 1
        worksFor.deleteRule = .nullifyDeleteRule
        employees.inverseRelationship = worksFor
        worksFor.inverseRelationship = employees

        company.properties = [inn, name, uid, createdAt, employees]
        employee.properties = [
            attribute("firstName", .stringAttributeType, optional: false),
            attribute("secondName", .stringAttributeType, optional: false), worksFor,
        ]
        let model = NSManagedObjectModel()
        model.entities = [company, employee]
        return model
    }

    private static func attribute(_ name: String, _ type: NSAttributeType, optional: Bool = true)
        -> NSAttributeDescription
    {
        let attribute = NSAttributeDescription()
        attribute.name = name
        attribute.attributeType = type
        attribute.isOptional = optional
        return attribute
    }
}

final class DemoCompany: NSManagedObject {
    @Managed var inn: String
    @Managed var name: String
    @Managed var uid: UUID
    @Managed var createdAt: Date?
    @Managed var employees: Set<DemoEmployee>

    override func awakeFromInsert() {
        super.awakeFromInsert()
        setPrimitiveValue(Date(), forKey: "createdAt")
        setPrimitiveValue(UUID(), forKey: "uid")
    }
}

extension DemoCompany {
    @ManagedAccessor func addToEmployees(_ value: DemoEmployee)
    @ManagedAccessor func removeFromEmployees(_ value: DemoEmployee)
}

final class DemoEmployee: NSManagedObject {
    @Managed var firstName: String
    @Managed var secondName: String
    @Managed var company: DemoCompany?

    var fullName: String { "\(firstName) \(secondName)" }
}
