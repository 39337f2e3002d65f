// An app whose model is an Xcode model bundle (Company.xcdatamodeld) and whose classes, Company and Employee, are
// generated from it at build time by the CoreDataModelCodeGenerator plugin — as Xcode's "Class Definition"
// code generation does. See Package.swift for the target's declaration.
import OpenCoreData

let container = NSPersistentContainer(name: "Company")
let description = NSPersistentStoreDescription()
description.type = NSInMemoryStoreType
container.persistentStoreDescriptions = [description]
container.loadPersistentStores { _, error in
    if let error { fatalError("Could not load the store: \(error)") }
}

let context = container.viewContext
context.performAndWait {
    let acme = Company(context: context)
    acme.name = "Acme"
    acme.inn = "7701234567"
    acme.uid = UUID()
    acme.createdAt = Date()
    for (first, second) in [("Ada", "Lovelace"), ("Charles", "Babbage")] {
        let employee = Employee(context: context)
        employee.firstName = first
        employee.secondName = second
        acme.addToEmployees(employee)
    }
    do {
        try context.save()
        let request: NSFetchRequest<Company> = Company.fetchRequest()
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        for company in try context.fetch(request) {
            let names = (company.employees as? Set<Employee> ?? []).compactMap(\.firstName).sorted()
            print("\(company.name) (\(company.inn)): \(names.joined(separator: ", "))")
        }
    } catch {
        print("error: \(error)")
    }
}
