import Foundation
import OpenCoreDataShim
import Testing

/// Delete rules with the SQLite store: deleting many objects at once cascades and nullifies exactly as deleting
/// them one by one does, the result survives reopening the store, and the relationships the rules walk are read a
/// relationship at a time rather than an object at a time.
@Suite(.serialized) struct SQLiteDeleteRuleTests {
    /// Room ⟶> Crate (cascade; the crate's room is nullified), Crate <<⟶>> Label (nullify both ways, a join
    /// table). Table names unique to this suite, so that statements can be counted while other suites run.
    static func model() -> NSManagedObjectModel {
        func attribute(_ name: String, _ type: NSAttributeType) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.isOptional = true
            return attribute
        }
        func relationship(
            _ name: String, to destination: NSEntityDescription, toMany: Bool, rule: NSDeleteRule
        ) -> NSRelationshipDescription {
            let relationship = NSRelationshipDescription()
            relationship.name = name
            relationship.destinationEntity = destination
            relationship.minCount = 0
            relationship.maxCount = toMany ? 0 : 1
            relationship.deleteRule = rule
            relationship.isOptional = true
            return relationship
        }
        let room = NSEntityDescription()
        room.name = "DeleteRuleRoom"
        room.managedObjectClassName = NSStringFromClass(NSManagedObject.self)
        let crate = NSEntityDescription()
        crate.name = "DeleteRuleCrate"
        crate.managedObjectClassName = NSStringFromClass(NSManagedObject.self)
        let label = NSEntityDescription()
        label.name = "DeleteRuleLabel"
        label.managedObjectClassName = NSStringFromClass(NSManagedObject.self)

        let crates = relationship("crates", to: crate, toMany: true, rule: .cascadeDeleteRule)
        let roomOfCrate = relationship("room", to: room, toMany: false, rule: .nullifyDeleteRule)
        crates.inverseRelationship = roomOfCrate
        roomOfCrate.inverseRelationship = crates
        let labels = relationship("labels", to: label, toMany: true, rule: .nullifyDeleteRule)
        let labelled = relationship("crates", to: crate, toMany: true, rule: .nullifyDeleteRule)
        labels.inverseRelationship = labelled
        labelled.inverseRelationship = labels

        room.properties = [attribute("name", .stringAttributeType), crates]
        crate.properties = [attribute("number", .integer64AttributeType), labels, roomOfCrate]
        label.properties = [attribute("text", .stringAttributeType), labelled]
        let model = NSManagedObjectModel()
        model.entities = [room, crate, label]
        return model
    }

    static let sharedModel = model()

    /// `rooms` rooms of `crates` crates each; every crate carries the labels "even"/"odd" and "all".
    static func fill(_ directory: SQLiteTestDirectory, rooms: Int, crates: Int) throws -> URL {
        let url = directory.store()
        let coordinator = try SQLiteStack.coordinator(sharedModel, at: url)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            var labels: [String: NSManagedObject] = [:]
            for text in ["even", "odd", "all"] {
                let label = NSEntityDescription.insertNewObject(forEntityName: "DeleteRuleLabel", into: context)
                label.setValue(text, forKey: "text")
                labels[text] = label
            }
            for roomNumber in 0..<rooms {
                let room = NSEntityDescription.insertNewObject(forEntityName: "DeleteRuleRoom", into: context)
                room.setValue("room \(roomNumber)", forKey: "name")
                for index in 0..<crates {
                    let number = roomNumber * crates + index
                    let crate = NSEntityDescription.insertNewObject(forEntityName: "DeleteRuleCrate", into: context)
                    crate.setValue(Int64(number), forKey: "number")
                    crate.setValue(room, forKey: "room")
                    crate.setValue(Set([labels[number % 2 == 0 ? "even" : "odd"]!, labels["all"]!]), forKey: "labels")
                }
            }
            try context.save()
        }
        try SQLiteStack.close(coordinator)
        return url
    }

    static func count(_ entity: String, _ context: NSManagedObjectContext, _ format: String? = nil) throws -> Int {
        let request = NSFetchRequest<NSManagedObject>(entityName: entity)
        request.predicate = format.map { NSPredicate(format: $0) }
        return try context.count(for: request)
    }

    @Test func deletingManyObjectsCascadesAndNullifiesAndIsSaved() throws {
        let directory = SQLiteTestDirectory()
        let url = try Self.fill(directory, rooms: 6, crates: 4)
        let coordinator = try SQLiteStack.coordinator(Self.sharedModel, at: url)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "DeleteRuleRoom")
            request.predicate = NSPredicate(format: "name != %@", "room 5")
            let doomed = try context.fetch(request)
            #expect(doomed.count == 5)
            for room in doomed { context.delete(room) }
            context.processPendingChanges()

            let crates = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "DeleteRuleCrate"))
            let deletedCrates = context.deletedObjects.filter { $0.entity.name == "DeleteRuleCrate" }
            #expect(deletedCrates.count == 20)
            #expect(crates.filter { !$0.isDeleted }.count == 4)
            let all = try #require(
                try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "DeleteRuleLabel")).first {
                    $0.value(forKey: "text") as? String == "all"
                })
            // The labels no longer reach the deleted crates, before and after saving.
            #expect((all.value(forKey: "crates") as? Set<NSManagedObject>)?.count == 4)
            try context.save()
            #expect((all.value(forKey: "crates") as? Set<NSManagedObject>)?.count == 4)
        }
        try SQLiteStack.close(coordinator)

        let reopened = SQLiteStack.context(try SQLiteStack.coordinator(Self.sharedModel, at: url))
        try reopened.performAndWait {
            #expect(try Self.count("DeleteRuleRoom", reopened) == 1)
            #expect(try Self.count("DeleteRuleCrate", reopened) == 4)
            #expect(try Self.count("DeleteRuleCrate", reopened, "room.name == 'room 5'") == 4)
            #expect(try Self.count("DeleteRuleLabel", reopened) == 3)
            #expect(try Self.count("DeleteRuleLabel", reopened, "crates.@count == 4") == 1)
            #expect(try Self.count("DeleteRuleLabel", reopened, "crates.@count == 2") == 2)
            let numbers = try reopened.fetch(NSFetchRequest<NSManagedObject>(entityName: "DeleteRuleCrate"))
                .compactMap { $0.value(forKey: "number") as? Int64 }
            #expect(Set(numbers) == [20, 21, 22, 23])
        }
    }

    @Test func deletingADestinationNullifiesToOnesNotYetResolved() throws {
        // Items fetched from the store know their owner only by its ID until the relationship is used.
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let model = SQLiteSampleModel.make()
        let coordinator = try SQLiteStack.coordinator(model, at: url)
        let seeding = SQLiteStack.context(coordinator)
        try seeding.performAndWait {
            let context = seeding
            let owner = NSEntityDescription.insertNewObject(forEntityName: "Owner", into: context)
            owner.setValue("Ada", forKey: "name")
            for index in 0..<3 {
                let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
                item.setValue("item \(index)", forKey: "name")
                item.setValue(owner, forKey: "owner")
            }
            try context.save()
        }
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            let items = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item"))
            let owner = try #require(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Owner")).first)
            // One item's owner resolved to the object, the others still only its ID.
            #expect(items[0].value(forKey: "owner") as? NSManagedObject === owner)
            context.delete(owner)
            context.processPendingChanges()
            #expect(items.allSatisfy { $0.value(forKey: "owner") == nil && !$0.isDeleted })
            #expect(context.updatedObjects.count == 3)
            // The store still has them owned until the save.
            let committedOwners = items.map { $0.committedValues(forKeys: ["owner"])["owner"] as? NSManagedObject }
            #expect(committedOwners.allSatisfy { $0 === owner })
            try context.save()
        }
        let reopened = SQLiteStack.context(coordinator)
        let ownerless = try reopened.performAndWait { try Self.count("Item", reopened, "owner == nil") }
        #expect(ownerless == 3)
        try SQLiteStack.close(coordinator)
    }

    @Test func deletingUnsavedAndSavedObjectsTogetherLeavesTheOthersAlone() throws {
        let directory = SQLiteTestDirectory()
        let url = try Self.fill(directory, rooms: 3, crates: 2)
        let coordinator = try SQLiteStack.coordinator(Self.sharedModel, at: url)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            let rooms = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "DeleteRuleRoom"))
            let extra = NSEntityDescription.insertNewObject(forEntityName: "DeleteRuleCrate", into: context)
            extra.setValue(Int64(99), forKey: "number")
            let first = try #require(rooms.first { $0.value(forKey: "name") as? String == "room 0" })
            extra.setValue(first, forKey: "room")
            for room in rooms where room.value(forKey: "name") as? String != "room 2" { context.delete(room) }
            try context.save()
            #expect(extra.isDeleted || extra.managedObjectContext == nil)
            #expect(try Self.count("DeleteRuleCrate", context) == 2)
            #expect(try Self.count("DeleteRuleCrate", context, "number == 99") == 0)
        }
    }

    @Test func theRelationshipsOfManyDeletedObjectsAreReadTogether() throws {
        let directory = SQLiteTestDirectory()
        let url = try Self.fill(directory, rooms: 20, crates: 3)
        let context = SQLiteStack.context(try SQLiteStack.coordinator(Self.sharedModel, at: url))
        try context.performAndWait {
            let rooms = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "DeleteRuleRoom"))
            let counter = SQLiteReadCounter()
            defer { counter.stop() }
            for room in rooms { context.delete(room) }
            context.processPendingChanges()
            #expect(context.deletedObjects.count == 80)
            // One read of the crates of all twenty rooms and one of the labels of all sixty crates (with the labels'
            // rows), then one per label to take the deleted crates out of its relationship: not one per room and
            // per crate.
            // (Recording sees every store of the process: only this suite's tables count.)
            let reads = counter.statements.filter { $0.hasPrefix("SELECT") && $0.contains("ZDELETERULE") }
            #expect(reads.count <= 6, "\(reads)")
            try context.save()
        }
        let reopened = SQLiteStack.context(try SQLiteStack.coordinator(Self.sharedModel, at: url))
        try reopened.performAndWait {
            let crates = try Self.count("DeleteRuleCrate", reopened)
            let emptyLabels = try Self.count("DeleteRuleLabel", reopened, "crates.@count == 0")
            #expect(crates == 0)
            #expect(emptyLabels == 3)
        }
    }
}
