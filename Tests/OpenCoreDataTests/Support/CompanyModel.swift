import OpenCoreDataShim

/// The Company/Employee model of the sample code: Company (inn, name, uid, createdAt) ↔ Employee (firstName,
/// secondName); deleting a company deletes its employees, deleting an employee leaves the company.
enum CompanyModel {
    static func make() -> NSManagedObjectModel {
        let company = NSEntityDescription()
        company.name = "Company"
        company.managedObjectClassName = String(reflecting: Company.self)
        let employee = NSEntityDescription()
        employee.name = "Employee"
        employee.managedObjectClassName = String(reflecting: Employee.self)

        let inn = attribute("inn", .stringAttributeType, optional: false)
        let name = attribute("name", .stringAttributeType, optional: false)
        let uid = attribute("uid", .UUIDAttributeType)
        let createdAt = attribute("createdAt", .dateAttributeType)

        let firstName = attribute("firstName", .stringAttributeType)
        let secondName = attribute("secondName", .stringAttributeType)

        let employees = NSRelationshipDescription()
        employees.name = "employees"
        employees.destinationEntity = employee
        employees.minCount = 0
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
        employee.properties = [firstName, secondName, worksFor]

        let model = NSManagedObjectModel()
        model.entities = [company, employee]
        return model
    }

    static func attribute(_ name: String, _ type: NSAttributeType, optional: Bool = true) -> NSAttributeDescription {
        let attribute = NSAttributeDescription()
        attribute.name = name
        attribute.attributeType = type
        attribute.isOptional = optional
        return attribute
    }

    /// A container with an in-memory store and its view context.
    static func container(model: NSManagedObjectModel = make(), name: String = "Company") -> NSPersistentContainer {
        let container = NSPersistentContainer(name: name, managedObjectModel: model)
        let description = NSPersistentStoreDescription()
        description.type = NSInMemoryStoreType
        container.persistentStoreDescriptions = [description]
        container.loadPersistentStores { _, error in
            precondition(error == nil, "could not load the in-memory store: \(String(describing: error))")
        }
        return container
    }

    /// A context on a fresh in-memory store, to be used from the calling thread.
    static func context(model: NSManagedObjectModel = make()) -> NSManagedObjectContext {
        let container = container(model: model)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = container.persistentStoreCoordinator
        return context
    }
}

final class Company: NSManagedObject {
    @Managed var inn: String
    @Managed var name: String
    @Managed var uid: UUID?
    @Managed var createdAt: Date?
    @Managed var employees: Set<Employee>

    override func awakeFromInsert() {
        super.awakeFromInsert()
        setPrimitiveValue(Date(), forKey: "createdAt")
    }
}

extension Company {
    @ManagedAccessor func addToEmployees(_ value: Employee)
    @ManagedAccessor func removeFromEmployees(_ value: Employee)
    @ManagedAccessor func addToEmployees(_ values: NSSet)
    @ManagedAccessor func removeFromEmployees(_ values: NSSet)
}

final class Employee: NSManagedObject {
    @Managed var firstName: String?
    @Managed var secondName: String?
    @Managed var company: Company?
}
