import ArgumentParser
import OpenCoreDataShim

/// `coredata demo`: the main job of the framework, end to end, on the Company/Employee model.
struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Insert, relate, fetch, validate and delete companies and employees, printing what happens."
    )

    enum StoreKind: String, ExpressibleByArgument, CaseIterable {
        case sqlite
        case memory
    }

    @Option(help: "Where the demo keeps its objects: a SQLite file (the default) or memory.")
    var store: StoreKind =
        NSPersistentStoreCoordinator.registeredStoreTypes[NSSQLiteStoreType] == nil ? .memory : .sqlite

    @Option(help: "The SQLite file to use (a temporary one by default; it is replaced if it exists).")
    var file: String?

    func run() throws {
        // The model is the Company.xcdatamodeld resource of this tool, found by name as an app's model is.
        let container = NSPersistentContainer(name: "Company")
        let description = NSPersistentStoreDescription()
        switch store {
        case .memory:
            description.type = NSInMemoryStoreType
            print("Store: in memory")
        case .sqlite:
            let url =
                file.map(URL.init(fileURLWithPath:))
                ?? FileManager.default.temporaryDirectory.appendingPathComponent(
                    "coredata-demo-\(UUID().uuidString).sqlite")
            try? container.persistentStoreCoordinator.destroyPersistentStore(at: url, ofType: NSSQLiteStoreType)
            description.url = url
            description.type = NSSQLiteStoreType
            print("Store: SQLite at \(url.path)")
        }
        container.persistentStoreDescriptions = [description]
        var loadError: (any Error)?
        container.loadPersistentStores { _, error in loadError = error }
        if let loadError { throw loadError }

        let context = container.newBackgroundContext()
        try context.performAndWait { try Demo(context: context).run() }
    }
}

/// The demo's steps, on one context's queue.
private struct Demo {
    let context: NSManagedObjectContext

    func run() throws {
        section("1. Insert a company and three employees, related three ways")
        let company = DemoCompany(context: context)
        company.name = "Horns & Hooves"
        company.inn = "7701234567"
        let ostap = employee("Ostap", "Bender")
        ostap.company = company
        print("   set the to-one side:           \(ostap.fullName).company = \(company.name)")
        let kisa = employee("Ippolit", "Vorobyaninov")
        company.mutableSetValue(forKey: "employees").add(kisa)
        print("   add through the inverse:       \(company.name).employees += \(kisa.fullName)")
        let shura = employee("Shura", "Balaganov")
        company.addToEmployees(shura)
        print("   generated accessor:            \(company.name).addToEmployees(\(shura.fullName))")
        print(
            "   \(company.name) now has \(company.employees.count) employees; every employee points back: "
                + "\(company.employees.allSatisfy { $0.company === company })")
        try context.save()
        print("   saved; company ID \(company.objectID.uriRepresentation().absoluteString)")

        section("2. Fetch")
        let request = NSFetchRequest<DemoCompany>(entityName: "Company")
        request.predicate = NSPredicate(format: "ANY employees.firstName == %@", "Ostap")
        let found = try context.fetch(request)
        print("   companies with ANY employees.firstName == \"Ostap\": \(found.map(\.name))")
        let sorted = NSFetchRequest<DemoEmployee>(entityName: "Employee")
        sorted.sortDescriptors = [NSSortDescriptor(key: "secondName", ascending: true)]
        print("   employees by second name: \(try context.fetch(sorted).map(\.fullName))")

        section("3. Validate a bad object")
        let bad = DemoCompany(context: context)
        bad.inn = "12-34"
        do {
            try context.save()
            print("   unexpectedly saved")
        } catch let error as NSError {
            describe(error)
        }
        context.delete(bad)
        print("   deleted the bad company; pending changes: \(context.hasChanges)")

        section("4. Delete with cascade")
        let employees = NSFetchRequest<DemoEmployee>(entityName: "Employee")
        print("   employees before: \(try context.count(for: employees))")
        context.delete(company)
        context.processPendingChanges()
        print(
            "   deleting \(company.name) also deletes: "
                + "\(context.deletedObjects.compactMap { ($0 as? DemoEmployee)?.fullName }.sorted())")
        try context.save()
        print("   employees after saving: \(try context.count(for: employees))")
        print(
            "   companies after saving: \(try context.count(for: NSFetchRequest<DemoCompany>(entityName: "Company")))")
    }

    private func employee(_ firstName: String, _ secondName: String) -> DemoEmployee {
        let employee = DemoEmployee(context: context)
        employee.firstName = firstName
        employee.secondName = secondName
        return employee
    }

    private func section(_ title: String) {
        print("\n" + title)
    }

    private func describe(_ error: NSError) {
        print("   save failed: \(error.domain) \(error.code): \(error.localizedDescription)")
        let details = error.userInfo[NSDetailedErrorsKey] as? [NSError] ?? [error]
        for detail in details {
            let key = detail.userInfo[NSValidationKeyErrorKey] as? String ?? "?"
            let object = (detail.userInfo[NSValidationObjectErrorKey] as? NSManagedObject)?.entity.name ?? "?"
            print("     - \(object).\(key): code \(detail.code), \(detail.localizedDescription)")
        }
    }
}
