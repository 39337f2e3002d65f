import OpenCoreDataShim
import Testing

@Suite struct RelationshipTests {
    @Test func threeWaysOfAddingAnEmployeeKeepBothSidesInStep() throws {
        let context = CompanyModel.context()
        try context.performAndWait {
            let company = Company(context: context)
            company.name = "Acme"
            company.inn = "7701"
            let first = Employee(context: context)
            first.company = company  // 1. set the to-one side
            let second = Employee(context: context)
            company.addToEmployees(second)  // 2. the generated accessor
            let third = Employee(context: context)
            company.mutableSetValue(forKey: "employees").add(third)  // 3. the to-many side by key
            #expect(company.employees == [first, second, third])
            #expect(second.company === company && third.company === company)
            try context.save()
            #expect(company.employees.count == 3)
        }
    }

    @Test func movingAnEmployeeRemovesItFromTheOldCompany() {
        let context = CompanyModel.context()
        context.performAndWait {
            let acme = Company(context: context)
            let globex = Company(context: context)
            let ada = Employee(context: context)
            ada.company = acme
            globex.addToEmployees(ada)
            #expect(ada.company === globex)
            #expect(acme.employees.isEmpty)
            #expect(globex.employees == [ada])
            acme.removeFromEmployees(NSSet(array: [ada]))
            #expect(ada.company === globex, "removing an object that is not there changes nothing")
            globex.removeFromEmployees(ada)
            #expect(ada.company == nil)
        }
    }

    @Test func oneToOneMovesRatherThanDuplicates() throws {
        let context = CompanyModel.context(model: GraphModel.make())
        context.performAndWait {
            let alice = GraphModel.insert("Person", "Alice", into: context)
            let bob = GraphModel.insert("Person", "Bob", into: context)
            let passport = GraphModel.insert("Passport", "P1", into: context)
            alice.setValue(passport, forKey: "passport")
            #expect(passport.value(forKey: "holder") as? NSManagedObject === alice)
            bob.setValue(passport, forKey: "passport")
            #expect(passport.value(forKey: "holder") as? NSManagedObject === bob)
            #expect(alice.value(forKey: "passport") == nil)
        }
    }

    @Test func manyToManyBothSides() {
        let context = CompanyModel.context(model: GraphModel.make())
        context.performAndWait {
            let alice = GraphModel.insert("Person", "Alice", into: context)
            let chess = GraphModel.insert("Club", "Chess", into: context)
            let go = GraphModel.insert("Club", "Go", into: context)
            alice.mutableSetValue(forKey: "clubs").addObjects(from: [chess, go])
            #expect((chess.value(forKey: "members") as? Set<NSManagedObject>) == [alice])
            go.mutableSetValue(forKey: "members").remove(alice)
            #expect((alice.value(forKey: "clubs") as? Set<NSManagedObject>) == [chess])
            alice.setValue(NSSet(), forKey: "clubs")
            #expect((chess.value(forKey: "members") as? Set<NSManagedObject>)?.isEmpty == true)
        }
    }

    @Test func orderedRelationshipsKeepTheirOrder() throws {
        let context = CompanyModel.context(model: GraphModel.make())
        try context.performAndWait {
            let playlist = GraphModel.insert("Playlist", "Mix", into: context)
            let songs = ["a", "b", "c"].map { GraphModel.insert("Song", $0, into: context) }
            let ordered = playlist.mutableOrderedSetValue(forKey: "songs")
            ordered.addObjects(from: songs)
            ordered.moveObjects(at: IndexSet(integer: 2), to: 0)
            let names = {
                (playlist.value(forKey: "songs") as? NSOrderedSet)?.array.compactMap {
                    ($0 as? NSManagedObject)?.value(forKey: "name") as? String
                }
            }
            #expect(names() == ["c", "a", "b"])
            #expect(ordered.array.count == 3)
            ordered.removeObject(at: 1)
            #expect(names() == ["c", "b"])
            #expect(songs[0].value(forKey: "playlist") == nil)
            #expect(songs[2].value(forKey: "playlist") as? NSManagedObject === playlist)
            songs[0].setValue(playlist, forKey: "playlist")
            #expect(names() == ["c", "b", "a"], "joining through the inverse appends")
            try context.save()
            #expect(names() == ["c", "b", "a"])
        }
    }

    @Test func relatingObjectsOfDifferentContextsStops() async {
        await #expect(processExitsWith: .failure) {
            let model = CompanyModel.make()
            let first = CompanyModel.context(model: model)
            let second = CompanyModel.context(model: model)
            let company = first.performAndWait { Company(context: first) }
            second.performAndWait {
                let employee = Employee(context: second)
                employee.company = company
            }
        }
    }

    @Test func wrongDestinationEntityStops() async {
        await #expect(processExitsWith: .failure) {
            let context = CompanyModel.context()
            context.performAndWait {
                let employee = Employee(context: context)
                employee.setValue(Employee(context: context), forKey: "company")
            }
        }
    }
}

@Suite struct DeleteRuleTests {
    @Test func cascadeDeletesTheEmployeesOfADeletedCompany() throws {
        let context = CompanyModel.context()
        try context.performAndWait {
            let company = Company(context: context)
            company.name = "Acme"
            company.inn = "1"
            let ada = Employee(context: context)
            ada.company = company
            try context.save()
            context.delete(company)
            context.processPendingChanges()
            #expect(ada.isDeleted)
            #expect(context.deletedObjects == [company, ada])
            try context.save()
            #expect(try context.count(for: NSFetchRequest<Employee>(entityName: "Employee")) == 0)
        }
    }

    @Test func nullifyRemovesADeletedEmployeeFromItsCompany() throws {
        let context = CompanyModel.context()
        try context.performAndWait {
            let company = Company(context: context)
            company.name = "Acme"
            company.inn = "1"
            let ada = Employee(context: context)
            ada.company = company
            try context.save()
            context.delete(ada)
            context.processPendingChanges()
            #expect(company.employees.isEmpty)
            #expect(!company.isDeleted)
            try context.save()
            #expect(try context.count(for: NSFetchRequest<Company>(entityName: "Company")) == 1)
        }
    }

    @Test func denyForbidsDeletingWhileDestinationsRemain() throws {
        let context = CompanyModel.context(model: GraphModel.make())
        try context.performAndWait {
            let owner = GraphModel.insert("Owner", "o", into: context)
            let item = GraphModel.insert("Item", "i", into: context)
            item.setValue(owner, forKey: "deniedBy")
            try context.save()
            context.delete(owner)
            let error = #expect(throws: NSError.self) { try context.save() }
            #expect(error?.domain == NSCocoaErrorDomain)
            #expect(error?.code == NSValidationRelationshipDeniedDeleteError)
            #expect(error?.userInfo[NSValidationKeyErrorKey] as? String == "denied")
            #expect(error?.userInfo[NSValidationObjectErrorKey] as? NSManagedObject === owner)
            context.rollback()
            #expect(!owner.isDeleted)
            context.delete(item)
            context.delete(owner)
            try context.save()
        }
    }

    @Test func noActionLeavesTheInverseAlone() {
        let context = CompanyModel.context(model: GraphModel.make())
        context.performAndWait {
            let owner = GraphModel.insert("Owner", "o", into: context)
            let item = GraphModel.insert("Item", "i", into: context)
            item.setValue(owner, forKey: "ignoredBy")
            context.delete(owner)
            context.processPendingChanges()
            #expect(item.value(forKey: "ignoredBy") as? NSManagedObject === owner)
        }
    }

    @Test func cascadeAndNullifyOnOneOwner() {
        let context = CompanyModel.context(model: GraphModel.make())
        context.performAndWait {
            let owner = GraphModel.insert("Owner", "o", into: context)
            let cascaded = GraphModel.insert("Item", "c", into: context)
            let nullified = GraphModel.insert("Item", "n", into: context)
            cascaded.setValue(owner, forKey: "cascadedBy")
            nullified.setValue(owner, forKey: "nullifiedBy")
            context.delete(owner)
            context.processPendingChanges()
            #expect(cascaded.isDeleted)
            #expect(!nullified.isDeleted)
            #expect(nullified.value(forKey: "nullifiedBy") == nil)
        }
    }
}
