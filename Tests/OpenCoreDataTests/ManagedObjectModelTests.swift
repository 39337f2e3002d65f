import OpenCoreDataShim
import Testing

@Suite struct ManagedObjectModelTests {
    /// Person (abstract) ← Employee ← Manager, with a to-many `reports` from Manager to Employee.
    static func hierarchy() -> NSManagedObjectModel {
        let person = NSEntityDescription()
        person.name = "Person"
        person.isAbstract = true
        person.properties = [CompanyModel.attribute("name", .stringAttributeType)]
        let employee = NSEntityDescription()
        employee.name = "Employee"
        employee.properties = [CompanyModel.attribute("salary", .decimalAttributeType)]
        let manager = NSEntityDescription()
        manager.name = "Manager"
        let reports = NSRelationshipDescription()
        reports.name = "reports"
        reports.destinationEntity = employee
        reports.maxCount = 0
        let boss = NSRelationshipDescription()
        boss.name = "boss"
        boss.destinationEntity = manager
        boss.maxCount = 1
        reports.inverseRelationship = boss
        boss.inverseRelationship = reports
        manager.properties = [reports]
        employee.properties += [boss]
        person.subentities = [employee]
        employee.subentities = [manager]
        let model = NSManagedObjectModel()
        model.entities = [person, employee, manager]
        return model
    }

    @Test func entitiesByNameAndInheritedProperties() throws {
        let model = Self.hierarchy()
        let manager = try #require(model.entitiesByName["Manager"])
        let employee = try #require(model.entitiesByName["Employee"])
        let person = try #require(model.entitiesByName["Person"])
        #expect(Set(model.entitiesByName.keys) == ["Person", "Employee", "Manager"])
        #expect(manager.superentity === employee)
        #expect(employee.superentity === person)
        #expect(person.subentities.map(\.name) == ["Employee"])
        #expect(employee.subentitiesByName["Manager"] === manager)
        #expect(Set(manager.propertiesByName.keys) == ["name", "salary", "boss", "reports"])
        #expect(manager.properties.map(\.name).prefix(3) == ["name", "salary", "boss"])
        #expect(Set(manager.attributesByName.keys) == ["name", "salary"])
        #expect(Set(manager.relationshipsByName.keys) == ["boss", "reports"])
        #expect(manager.isKindOf(entity: person))
        #expect(!person.isKindOf(entity: manager))
        #expect(manager.relationships(forDestination: employee).map(\.name) == ["reports"])
        #expect(person.isAbstract)
        #expect(employee.managedObjectClassName == "NSManagedObject")
        let salary = try #require(manager.attributesByName["salary"])
        #expect(salary.entity === employee)
        #expect(salary.attributeValueClassName == "NSDecimalNumber")
    }

    @Test func relationshipDescriptions() throws {
        let model = Self.hierarchy()
        let reports = try #require(model.entitiesByName["Manager"]?.relationshipsByName["reports"])
        let boss = try #require(model.entitiesByName["Employee"]?.relationshipsByName["boss"])
        #expect(reports.isToMany)
        #expect(!boss.isToMany)
        #expect(reports.inverseRelationship === boss)
        #expect(reports.destinationEntity?.name == "Employee")
        #expect(reports.deleteRule == .nullifyDeleteRule)
        #expect(!reports.isOrdered)
    }

    @Test func attributeTypesAndValueClassNames() {
        let expectations: [(NSAttributeType, UInt, String?)] = [
            (.integer16AttributeType, 100, "NSNumber"), (.integer32AttributeType, 200, "NSNumber"),
            (.integer64AttributeType, 300, "NSNumber"), (.decimalAttributeType, 400, "NSDecimalNumber"),
            (.doubleAttributeType, 500, "NSNumber"), (.floatAttributeType, 600, "NSNumber"),
            (.stringAttributeType, 700, "NSString"), (.booleanAttributeType, 800, "NSNumber"),
            (.dateAttributeType, 900, "NSDate"), (.binaryDataAttributeType, 1000, "NSData"),
            (.UUIDAttributeType, 1100, "NSUUID"), (.URIAttributeType, 1200, "NSURL"),
            (.transformableAttributeType, 1800, nil),
        ]
        for (type, raw, className) in expectations {
            let attribute = NSAttributeDescription()
            attribute.attributeType = type
            #expect(type.rawValue == raw)
            #expect(attribute.attributeValueClassName == className)
            #expect(attribute.type.rawValue == type)
        }
        let transformable = NSAttributeDescription()
        transformable.attributeType = .transformableAttributeType
        transformable.valueTransformerName = "NSSecureUnarchiveFromData"
        transformable.attributeValueClassName = "NSArray"
        #expect(transformable.attributeValueClassName == "NSArray")
        #expect(NSDeleteRule.denyDeleteRule.rawValue == 3)
    }

    @Test func propertyFlagsAndValidationPredicates() {
        let attribute = NSAttributeDescription()
        attribute.name = "age"
        #expect(attribute.isOptional)
        #expect(!attribute.isTransient)
        attribute.isIndexedBySpotlight = true
        #expect(attribute.isIndexedBySpotlight)
        attribute.isTransient = true
        #expect(!attribute.isIndexedBySpotlight, "a transient property is never indexed by Spotlight")
        attribute.isIndexed = true
        attribute.userInfo = ["key": "value"]
        attribute.versionHashModifier = "v2"
        attribute.renamingIdentifier = "years"
        attribute.allowsExternalBinaryDataStorage = true
        attribute.preservesValueInHistoryOnDeletion = true
        attribute.setValidationPredicates([NSPredicate(format: "SELF >= 0")], withValidationWarnings: ["too young"])
        #expect(attribute.isTransient && attribute.isIndexed)
        #expect(attribute.userInfo?["key"] as? String == "value")
        #expect(attribute.versionHashModifier == "v2")
        #expect(attribute.renamingIdentifier == "years")
        #expect(attribute.allowsExternalBinaryDataStorage && attribute.preservesValueInHistoryOnDeletion)
        #expect(attribute.validationPredicates.map(\.predicateFormat) == ["SELF >= 0"])
        #expect(attribute.validationWarnings as? [String] == ["too young"])
    }

    @Test func copiesAreDeepAndEditable() throws {
        let model = CompanyModel.make()
        _ = NSPersistentStoreCoordinator(managedObjectModel: model)
        let copy = try #require(model.copy() as? NSManagedObjectModel)
        let employees = try #require(copy.entitiesByName["Company"]?.relationshipsByName["employees"])
        #expect(employees.destinationEntity === copy.entitiesByName["Employee"])
        #expect(employees.inverseRelationship === copy.entitiesByName["Employee"]?.relationshipsByName["company"])
        #expect(employees !== model.entitiesByName["Company"]?.relationshipsByName["employees"])
        // The copy is editable although the original is in use.
        copy.entitiesByName["Company"]?.name = "Firm"
        #expect(copy.entitiesByName["Firm"] != nil)
        #expect(model.entitiesByName["Company"] != nil)
        let attributeCopy = try #require(
            model.entitiesByName["Employee"]?.attributesByName["firstName"]?.copy()
                as? NSAttributeDescription)
        #expect(attributeCopy.name == "firstName")
        #expect(attributeCopy.attributeType == .stringAttributeType)
    }

    @Test func configurations() throws {
        let model = CompanyModel.make()
        let company = try #require(model.entitiesByName["Company"])
        model.setEntities([company], forConfigurationName: "Companies")
        #expect(model.configurations == ["Companies"])
        #expect(model.entities(forConfigurationName: "Companies")?.map(\.name) == ["Company"])
        #expect(model.entities(forConfigurationName: nil)?.count == 2)
        #expect(model.entities(forConfigurationName: "Nope") == nil)
    }

    @Test func versionHashesTrackPersistentChanges() throws {
        let first = CompanyModel.make()
        let second = CompanyModel.make()
        #expect(first.entityVersionHashesByName == second.entityVersionHashesByName)
        #expect(first.entityVersionHashesByName["Company"]?.count == 32)
        let name = try #require(second.entitiesByName["Company"]?.attributesByName["name"])
        name.isOptional = true
        #expect(first.entityVersionHashesByName["Company"] != second.entityVersionHashesByName["Company"])
        #expect(first.entityVersionHashesByName["Employee"] == second.entityVersionHashesByName["Employee"])
        let third = CompanyModel.make()
        third.entitiesByName["Employee"]?.versionHashModifier = "renamed-meaning"
        #expect(first.entityVersionHashesByName["Employee"] != third.entityVersionHashesByName["Employee"])
        // userInfo does not affect persistence, so it does not affect the hash.
        let fourth = CompanyModel.make()
        fourth.entitiesByName["Employee"]?.userInfo = ["note": "x"]
        #expect(first.entityVersionHashesByName["Employee"] == fourth.entityVersionHashesByName["Employee"])
    }

    @Test func compatibilityWithStoreMetadata() {
        let model = CompanyModel.make()
        let metadata: [String: Any] = [NSStoreModelVersionHashesKey: model.entityVersionHashesByName]
        #expect(model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        let other = CompanyModel.make()
        other.entitiesByName["Employee"]?.properties.removeLast()
        #expect(!other.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        #expect(!model.isConfiguration(withName: nil, compatibleWithStoreMetadata: [:]))
    }

    @Test func mergingModels() throws {
        let first = NSManagedObjectModel()
        let a = NSEntityDescription()
        a.name = "A"
        first.entities = [a]
        let second = NSManagedObjectModel()
        let b = NSEntityDescription()
        b.name = "B"
        second.entities = [b]
        let merged = try #require(NSManagedObjectModel(byMerging: [first, second]))
        #expect(Set(merged.entitiesByName.keys) == ["A", "B"])
        let clash = NSManagedObjectModel()
        let otherA = NSEntityDescription()
        otherA.name = "A"
        clash.entities = [otherA]
        #expect(NSManagedObjectModel(byMerging: [first, clash]) == nil)
    }

    @Test func fetchIndexes() throws {
        let model = CompanyModel.make()
        let employee = try #require(model.entitiesByName["Employee"])
        let firstName = try #require(employee.attributesByName["firstName"])
        let element = NSFetchIndexElementDescription(property: firstName, collationType: .binary)
        let index = NSFetchIndexDescription(name: "byFirstName", elements: [element])
        employee.indexes = [index]
        #expect(employee.indexes.first?.entity === employee)
        #expect(employee.indexes.first?.elements.first?.property === firstName)
        #expect(element.indexDescription === index)
        #expect(element.isAscending)
        employee.uniquenessConstraints = [["firstName", "secondName"]]
        #expect(employee.uniquenessConstraints.first?.compactMap { $0 as? String } == ["firstName", "secondName"])
    }

    @Test func mutatingAModelInUseStops() async {
        await #expect(processExitsWith: .failure) {
            let model = CompanyModel.make()
            _ = NSPersistentStoreCoordinator(managedObjectModel: model)
            model.entitiesByName["Company"]?.attributesByName["name"]?.isOptional = true
        }
    }

    @Test func reservedPropertyNamesAreRefused() async {
        await #expect(processExitsWith: .failure) {
            let entity = NSEntityDescription()
            entity.name = "Note"
            entity.properties = [CompanyModel.attribute("description", .stringAttributeType)]
        }
    }
}
