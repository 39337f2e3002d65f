import OpenCoreDataShim

// The classes of the demo's model (Resources/Company.xcdatamodeld), whose entities name them as their
// representedClassName: `DemoCompany` and `DemoEmployee`.

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
