import OpenCoreDataShim
import Testing

@Suite struct ManagedObjectTests {
    @Test func keyValueCodingReturnsFoundationValues() throws {
        let context = CompanyModel.context(model: AllTypesModel.make())
        try context.performAndWait {
            let thing = NSEntityDescription.insertNewObject(forEntityName: "Thing", into: context)
            let date = Date(timeIntervalSinceReferenceDate: 12_345)
            let uuid = UUID()
            thing.setValue(5, forKey: "int16")
            thing.setValue(Int32(70_000), forKey: "int32")
            thing.setValue(NSNumber(value: 1 << 40), forKey: "int64")
            thing.setValue(Decimal(string: "12.50"), forKey: "decimal")
            thing.setValue(2.5, forKey: "double")
            thing.setValue(Float(1.25), forKey: "float")
            thing.setValue("hello", forKey: "string")
            thing.setValue(true, forKey: "bool")
            thing.setValue(date, forKey: "date")
            thing.setValue(Data([1, 2, 3]), forKey: "data")
            thing.setValue(uuid, forKey: "uuid")
            thing.setValue(URL(string: "https://example.com")!, forKey: "uri")
            thing.setValue(["a", "b"], forKey: "transformable")

            #expect(thing.value(forKey: "int16") as? Int == 5)
            #expect(thing.value(forKey: "int16") as? Int16 == 5)
            #expect(thing.value(forKey: "int32") as? NSNumber == NSNumber(value: 70_000))
            #expect(thing.value(forKey: "int64") as? Int64 == 1 << 40)
            #expect((thing.value(forKey: "decimal") as? NSDecimalNumber)?.decimalValue == Decimal(string: "12.5"))
            #expect(thing.value(forKey: "double") as? Double == 2.5)
            #expect(thing.value(forKey: "float") as? Float == 1.25)
            #expect(thing.value(forKey: "string") as? String == "hello")
            #expect(thing.value(forKey: "bool") as? Bool == true)
            #expect(thing.value(forKey: "date") as? Date == date)
            #expect(thing.value(forKey: "data") as? Data == Data([1, 2, 3]))
            #expect(thing.value(forKey: "uuid") as? UUID == uuid)
            #expect(thing.value(forKey: "uri") as? URL == URL(string: "https://example.com"))
            #expect(thing.value(forKey: "transformable") as? [String] == ["a", "b"])
            #expect(thing.value(forKey: "counter") as? Int == 7, "default value")
            #expect(thing.value(forKeyPath: "string") as? String == "hello")
            thing.setValue(nil, forKey: "string")
            #expect(thing.value(forKey: "string") == nil)
            try context.save()
        }
    }

    @Test func typedSubclassAccessors() throws {
        let context = CompanyModel.context(model: AllTypesModel.make())
        try context.performAndWait {
            let thing = Thing(context: context)
            #expect(thing.int16 == 0, "a scalar with no value reads as zero")
            #expect(thing.counter == 7, "the model's default value")
            thing.int16 = -3
            thing.int32 = 40
            thing.int64 = .max
            thing.decimal = Decimal(string: "0.1")
            thing.double = .pi
            thing.float = 0.5
            thing.string = "typed"
            thing.bool = true
            thing.date = Date(timeIntervalSince1970: 0)
            thing.data = Data("x".utf8)
            thing.uuid = UUID(uuidString: "00000000-0000-0000-0000-000000000001")
            thing.uri = URL(fileURLWithPath: "/tmp")
            thing.transformable = ["z"]
            #expect(thing.int16 == -3 && thing.int32 == 40 && thing.int64 == .max)
            #expect(thing.decimal == Decimal(string: "0.1"))
            #expect(thing.double == .pi && thing.float == 0.5 && thing.bool)
            #expect(thing.string == "typed")
            #expect(thing.date == Date(timeIntervalSince1970: 0))
            #expect(thing.data == Data("x".utf8))
            #expect(thing.uuid?.uuidString == "00000000-0000-0000-0000-000000000001")
            #expect(thing.uri?.path == "/tmp")
            #expect(thing.transformable == ["z"])
            #expect(thing.value(forKey: "int16") as? Int == -3, "typed and keyed access see the same storage")
            try context.save()
            #expect(thing.int64 == .max)
        }
    }

    @Test func stateFlagsThroughTheLifeCycle() throws {
        let context = CompanyModel.context()
        try context.performAndWait {
            let company = Company(context: context)
            company.name = "Acme"
            company.inn = "1"
            #expect(company.isInserted && !company.isUpdated && !company.isDeleted)
            #expect(company.hasChanges)
            #expect(company.managedObjectContext === context)
            #expect(company.objectID.isTemporaryID)
            try context.save()
            #expect(!company.isInserted && !company.hasChanges)
            #expect(!company.objectID.isTemporaryID)
            company.name = "Acme Ltd"
            #expect(company.isUpdated && company.hasChanges && company.hasPersistentChangedValues)
            #expect(context.updatedObjects.contains(company))
            try context.save()
            #expect(!company.isUpdated)
            context.delete(company)
            #expect(company.isDeleted)
            #expect(context.deletedObjects.contains(company))
            try context.save()
            #expect(!company.isDeleted)
            #expect(company.managedObjectContext == nil)
        }
    }

    @Test func changedAndCommittedValues() throws {
        let context = CompanyModel.context()
        try context.performAndWait {
            let company = Company(context: context)
            company.name = "Acme"
            company.inn = "1"
            try context.save()
            #expect(company.changedValues().isEmpty)
            company.name = "Globex"
            #expect(company.changedValues().keys.sorted() == ["name"])
            #expect(company.changedValues()["name"] as? String == "Globex")
            #expect(company.committedValues(forKeys: ["name"])["name"] as? String == "Acme")
            #expect(company.changedValuesForCurrentEvent()["name"] as? String == "Acme", "old value in this event")
            context.processPendingChanges()
            #expect(company.changedValuesForCurrentEvent().isEmpty)
            company.name = "Acme"
            #expect(company.changedValues().isEmpty, "set back to the committed value")
            #expect(company.committedValues(forKeys: nil)["uid"] is NSNull)
        }
    }

    @Test func transientPropertiesAreTrackedButNotStored() throws {
        let context = CompanyModel.context(model: AllTypesModel.make())
        try context.performAndWait {
            let thing = Thing(context: context)
            try context.save()
            thing.scratch = "temporary"
            #expect(thing.hasChanges)
            #expect(thing.isUpdated)
            #expect(!thing.hasPersistentChangedValues)
            #expect(thing.changedValues().isEmpty, "changedValues lists persistent properties only")
            try context.save()
            context.refresh(thing, mergeChanges: false)
            #expect(thing.scratch == nil, "a transient value does not come back from the store")
        }
    }

    @Test func primitiveValuesBypassInverseMaintenance() {
        let context = CompanyModel.context()
        context.performAndWait {
            let company = Company(context: context)
            let employee = Employee(context: context)
            employee.setPrimitiveValue(company, forKey: "company")
            #expect(employee.primitiveValue(forKey: "company") as? Company === company)
            #expect(company.employees.isEmpty, "primitive setters do not maintain inverses")
            let other = Employee(context: context)
            other.setValue(company, forKey: "company")
            #expect(company.employees == [other], "key-value coding does")
        }
    }

    @Test func keyPathsAndCollectionOperators() throws {
        let context = CompanyModel.context()
        try context.performAndWait {
            let company = Company(context: context)
            company.name = "Acme"
            for name in ["Ada", "Grace", "Ada"] {
                let employee = Employee(context: context)
                employee.firstName = name
                employee.company = company
            }
            let anyEmployee = try #require(company.employees.first)
            #expect(anyEmployee.value(forKeyPath: "company.name") as? String == "Acme")
            #expect(company.value(forKeyPath: "employees.@count") as? Int == 3)
            // Applied to a set (a to-many relationship), the object operators give a set, as Foundation's do.
            let names = company.value(forKeyPath: "employees.@distinctUnionOfObjects.firstName") as? Set<String>
            #expect(names == ["Ada", "Grace"])
            let all = company.value(forKeyPath: "employees.firstName") as? Set<String>
            #expect(all == ["Ada", "Grace"])
        }
    }

    @Test func lifecycleHooksAreCalled() throws {
        let context = CompanyModel.context(model: HookModel.make())
        try context.performAndWait {
            HookedObject.log = []
            let object = HookedObject(context: context)
            object.setValue("a", forKey: "name")
            try context.save()
            context.refresh(object, mergeChanges: false)
            _ = object.value(forKey: "name")
            context.delete(object)
            context.processPendingChanges()
            try context.save()
            #expect(
                HookedObject.log == [
                    "awakeFromInsert", "willSave", "didSave", "willTurnIntoFault", "didTurnIntoFault",
                    "awakeFromFetch", "prepareForDeletion", "willSave", "willTurnIntoFault", "didSave",
                    "didTurnIntoFault",
                ])
        }
    }

    @Test func descriptionNamesEntityAndID() {
        let context = CompanyModel.context()
        context.performAndWait {
            let company = Company(context: context)
            company.name = "Acme"
            #expect(company.description.contains("(entity: Company; id: "))
            #expect(company.description.contains("x-coredata:///Company/t"))
            #expect(company.description.contains("name = Acme;"))
        }
    }

    @Test func unknownKeyStops() async {
        await #expect(processExitsWith: .failure) {
            let context = CompanyModel.context()
            context.performAndWait {
                let company = Company(context: context)
                _ = company.value(forKey: "nonexistent")
            }
        }
    }

    @Test func settingAnUnknownKeyStopsNamingTheKey() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let context = CompanyModel.context()
            context.performAndWait {
                let company = Company(context: context)
                company.setValue("x", forKey: "nonexistent")
            }
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("setValue:forUndefinedKey:"))
        #expect(message.contains("not key value coding-compliant for the key \"nonexistent\""))
    }

    @Test func wrongValueTypeStops() async {
        await #expect(processExitsWith: .failure) {
            let context = CompanyModel.context()
            context.performAndWait {
                let company = Company(context: context)
                company.setValue(42, forKey: "name")
            }
        }
    }
}

/// A model whose class records its life-cycle hooks.
enum HookModel {
    static func make() -> NSManagedObjectModel {
        let entity = NSEntityDescription()
        entity.name = "HookedObject"
        entity.managedObjectClassName = String(reflecting: HookedObject.self)
        entity.properties = [CompanyModel.attribute("name", .stringAttributeType)]
        let model = NSManagedObjectModel()
        model.entities = [entity]
        return model
    }
}

final class HookedObject: NSManagedObject {
    nonisolated(unsafe) static var log: [String] = []
    override func awakeFromInsert() { Self.log.append("awakeFromInsert") }
    override func awakeFromFetch() { Self.log.append("awakeFromFetch") }
    override func willSave() { Self.log.append("willSave") }
    override func didSave() { Self.log.append("didSave") }
    override func willTurnIntoFault() { Self.log.append("willTurnIntoFault") }
    override func didTurnIntoFault() { Self.log.append("didTurnIntoFault") }
    override func prepareForDeletion() { Self.log.append("prepareForDeletion") }
}
