#if !canImport(CoreData)
import Foundation
import OpenCoreDataShim
import Testing

/// Models found among a SwiftPM target's resources (`Inventory.xcdatamodeld`, declared with `.copy` in
/// Package.swift), and the rules a loaded model carries into validation.
@Suite struct ModelLoadingBundleTests {
    static var inventoryURL: URL? { Bundle.module.url(forResource: "Inventory", withExtension: "xcdatamodeld") }

    @Test func theCurrentVersionLoads() throws {
        let url = try #require(Self.inventoryURL)
        let model = try #require(NSManagedObjectModel(contentsOf: url))
        #expect(Set(model.entitiesByName.keys) == ["Dock", "Item", "Warehouse"])
        #expect(model.versionIdentifiers == ["v2"])
        #expect(model.configurations == ["Stock"])
        #expect(model.entities(forConfigurationName: "Stock")?.map(\.name) == ["Item"])
        let versions = try NSManagedObjectModel.versionsOfModel(at: url)
        #expect(versions.map(\.name) == ["Inventory", "Inventory 2"])
        #expect(versions.map { $0.model.versionIdentifiers } == [["v1"], ["v2"]])
        #expect(try NSManagedObjectModel.currentVersionNameOfModel(at: url) == "Inventory 2")
    }

    /// Code written for Apple platforms finds its model in the bundle of one of its classes. On Linux that bundle is
    /// the build folder, and the model is in the class's resource bundle inside it.
    @Test func mergedModelFindsTheModelOfAClassesBundle() throws {
        final class InThisTarget {}
        let merged = try #require(NSManagedObjectModel.mergedModel(from: [Bundle(for: InThisTarget.self)]))
        let url = try #require(Self.inventoryURL)
        let direct = try #require(NSManagedObjectModel(contentsOf: url))
        #expect(Set(direct.entitiesByName.keys).isSubset(of: Set(merged.entitiesByName.keys)))
        for (name, hash) in direct.entityVersionHashesByName {
            #expect(merged.entityVersionHashesByName[name] == hash)
        }
    }

    @Test func mergedModelFindsTheBundlesModel() throws {
        // The bundle's two models, Inventory and Shelf (its migration tests' model), each at its current version.
        let merged = try #require(NSManagedObjectModel.mergedModel(from: [Bundle.module]))
        let inventoryURL = try #require(Self.inventoryURL)
        let inventory = try #require(NSManagedObjectModel(contentsOf: inventoryURL))
        let shelfURL = try #require(Bundle.module.url(forResource: "Shelf", withExtension: "momd"))
        let shelf = try #require(NSManagedObjectModel(contentsOf: shelfURL))
        #expect(
            merged.entityVersionHashesByName
                == inventory.entityVersionHashesByName.merging(shelf.entityVersionHashesByName) { first, _ in first })
        let empty = try ModelScratchDirectory()
        let emptyBundle = try #require(Bundle(url: empty.url))
        let none = try #require(NSManagedObjectModel.mergedModel(from: [emptyBundle]))
        #expect(none.entities.isEmpty)
    }

    @Test func mergingTwoModelsWithTheSameEntityFails() throws {
        let directory = try ModelScratchDirectory()
        let source = try #require(Self.inventoryURL)
        try FileManager.default.copyItem(at: source, to: directory.url.appendingPathComponent("A.xcdatamodeld"))
        try FileManager.default.copyItem(at: source, to: directory.url.appendingPathComponent("B.xcdatamodeld"))
        let bundle = try #require(Bundle(url: directory.url))
        #expect(NSManagedObjectModel.mergedModel(from: [bundle]) == nil)
    }

    @Test func aContainerFindsItsModelByName() throws {
        let container = NSPersistentContainer(name: "Inventory")
        #expect(Set(container.managedObjectModel.entitiesByName.keys) == ["Dock", "Item", "Warehouse"])
        let missing = NSPersistentContainer(name: "NoSuchModel")
        #expect(missing.managedObjectModel.entities.isEmpty)
    }

    /// Xcode's minimum, maximum and pattern become Core Data's validation errors.
    @Test func loadedRulesValidate() throws {
        let context = try Self.inventoryContext()
        try context.performAndWait {
            let warehouse = NSEntityDescription.insertNewObject(forEntityName: "Warehouse", into: context)
            warehouse.setValue("X", forKey: "city")
            #expect(
                (warehouse.value(forKey: "opened") as? Date)?.timeIntervalSinceReferenceDate == 86400,
                "the date default")
            #expect(Self.validationCode(of: warehouse) == NSValidationStringTooShortError)
            warehouse.setValue(String(repeating: "x", count: 41), forKey: "city")
            #expect(Self.validationCode(of: warehouse) == NSValidationStringTooLongError)
            warehouse.setValue("Oslo", forKey: "city")
            warehouse.setValue(Date(timeIntervalSinceReferenceDate: -10), forKey: "opened")
            #expect(Self.validationCode(of: warehouse) == NSValidationDateTooSoonError)
            warehouse.setValue(Date(timeIntervalSinceReferenceDate: 10), forKey: "opened")
            #expect(Self.validationCode(of: warehouse) == nil)

            let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
            item.setValue("bolt", forKey: "name")
            #expect(item.value(forKey: "quantity") as? Int16 == 0, "the number default")
            item.setValue(2000, forKey: "quantity")
            #expect(Self.validationCode(of: item) == NSValidationNumberTooLargeError)
            item.setValue(-1, forKey: "quantity")
            #expect(Self.validationCode(of: item) == NSValidationNumberTooSmallError)
            item.setValue(5, forKey: "quantity")
            item.setValue("abc", forKey: "sku")
            #expect(Self.validationCode(of: item) == NSValidationStringPatternMatchingError)
            item.setValue("ABC-12", forKey: "sku")
            item.setValue(warehouse, forKey: "warehouse")
            try context.save()
        }
    }

    @Test func templatesFetch() throws {
        let context = try Self.inventoryContext()
        try context.performAndWait {
            for name in ["bolt", "nut"] {
                let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
                item.setValue(name, forKey: "name")
            }
            try context.save()
            let model = try #require(context.persistentStoreCoordinator?.managedObjectModel)
            #expect(model.fetchRequestTemplate(forName: "ItemsNamed")?.predicate?.predicateFormat == "name == $NAME")
            let request = try #require(
                model.fetchRequestFromTemplate(withName: "ItemsNamed", substitutionVariables: ["NAME": "nut"]))
            let found = try context.fetch(request)
            #expect(found.count == 1)
            #expect((found.first as? NSManagedObject)?.value(forKey: "name") as? String == "nut")
            #expect(model.fetchRequestFromTemplate(withName: "Missing", substitutionVariables: [:]) == nil)
        }
    }

    @Test func templatesCanBeSetInCode() {
        let model = NSManagedObjectModel()
        let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Item")
        model.setFetchRequestTemplate(request, forName: "All")
        #expect(model.fetchRequestTemplatesByName["All"] === request)
        model.setFetchRequestTemplate(nil, forName: "All")
        #expect(model.fetchRequestTemplatesByName.isEmpty)
    }

    /// The demo's model, `Sources/coredata/Resources/Company.xcdatamodeld`: Company (inn, name, uid, createdAt)
    /// and Employee (firstName, secondName); deleting a company deletes its employees, deleting an employee
    /// leaves its company.
    @Test func theDemoModel() throws {
        var root = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { root.deleteLastPathComponent() }
        let url = root.appendingPathComponent("Sources/coredata/Resources/Company.xcdatamodeld")
        let model = try NSManagedObjectModel(validatingContentsOf: url)
        let company = try #require(model.entitiesByName["Company"])
        let employee = try #require(model.entitiesByName["Employee"])
        #expect(company.managedObjectClassName == "DemoCompany")
        #expect(employee.managedObjectClassName == "DemoEmployee")
        let types = company.attributesByName.mapValues(\.attributeType)
        #expect(
            types == [
                "inn": .stringAttributeType, "name": .stringAttributeType, "uid": .UUIDAttributeType,
                "createdAt": .dateAttributeType,
            ])
        #expect(company.attributesByName.filter { !$0.value.isOptional }.keys.sorted() == ["inn", "name", "uid"])
        #expect(Set(employee.attributesByName.keys) == ["firstName", "secondName"])
        let employees = try #require(company.relationshipsByName["employees"])
        #expect(employees.isToMany && employees.deleteRule == .cascadeDeleteRule)
        #expect(employees.inverseRelationship?.name == "company")
        #expect(employees.inverseRelationship?.isToMany == false)
        #expect(employees.inverseRelationship?.deleteRule == .nullifyDeleteRule)

        let context = CompanyModel.context(model: model)
        try context.performAndWait {
            let acme = NSEntityDescription.insertNewObject(forEntityName: "Company", into: context)
            acme.setValue("Acme", forKey: "name")
            acme.setValue("12345", forKey: "inn")
            acme.setValue(UUID(), forKey: "uid")
            #expect(Self.validationCode(of: acme) == NSValidationStringPatternMatchingError, "an INN is ten digits")
            acme.setValue("7701234567", forKey: "inn")
            let ada = NSEntityDescription.insertNewObject(forEntityName: "Employee", into: context)
            ada.setValue("Ada", forKey: "firstName")
            ada.setValue("Lovelace", forKey: "secondName")
            ada.setValue(acme, forKey: "company")
            try context.save()
            context.delete(acme)
            try context.save()
            #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Employee")) == 0)
        }
    }

    static func inventoryContext() throws -> NSManagedObjectContext {
        let url = try #require(inventoryURL)
        let model = try #require(NSManagedObjectModel(contentsOf: url))
        let container = NSPersistentContainer(name: "Inventory", managedObjectModel: model)
        let description = NSPersistentStoreDescription()
        description.type = NSInMemoryStoreType
        container.persistentStoreDescriptions = [description]
        var loadError: (any Error)?
        container.loadPersistentStores { _, error in loadError = error }
        if let loadError { throw loadError }
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = container.persistentStoreCoordinator
        return context
    }

    static func validationCode(of object: NSManagedObject) -> Int? {
        do {
            try object.validateForInsert()
            return nil
        } catch let error as NSError {
            return error.code
        }
    }
}
#endif
