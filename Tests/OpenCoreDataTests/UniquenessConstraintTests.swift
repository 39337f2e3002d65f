import Foundation
import OpenCoreData
import Testing

/// Uniqueness constraints (`NSEntityDescription.uniquenessConstraints`) at save: conflicts among the saved objects
/// and with the store's rows fail the save under the error policy, and are an insert-or-update under the others.
@Suite struct UniquenessConstraintTests {
    /// Tag (name unique; count; note) ⟷> Item (title) through Tag.items / Item.tag; Person (email unique) with the
    /// subentity Employee, which adds a constraint of its own (badge).
    static func model() -> NSManagedObjectModel {
        func attribute(_ name: String, _ type: NSAttributeType) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.isOptional = true
            return attribute
        }
        let tag = NSEntityDescription()
        tag.name = "Tag"
        let item = NSEntityDescription()
        item.name = "Item"
        let items = NSRelationshipDescription()
        items.name = "items"
        items.destinationEntity = item
        items.maxCount = 0
        items.deleteRule = .nullifyDeleteRule
        let owner = NSRelationshipDescription()
        owner.name = "tag"
        owner.destinationEntity = tag
        owner.maxCount = 1
        owner.deleteRule = .nullifyDeleteRule
        items.inverseRelationship = owner
        owner.inverseRelationship = items
        tag.properties = [
            attribute("name", .stringAttributeType), attribute("count", .integer64AttributeType),
            attribute("note", .stringAttributeType), items,
        ]
        tag.uniquenessConstraints = [["name"]]
        item.properties = [attribute("title", .stringAttributeType), owner]
        let person = NSEntityDescription()
        person.name = "Person"
        person.properties = [attribute("email", .stringAttributeType)]
        person.uniquenessConstraints = [["email"]]
        let employee = NSEntityDescription()
        employee.name = "Employee"
        employee.properties = [attribute("badge", .integer64AttributeType)]
        employee.uniquenessConstraints = [["badge"]]
        person.subentities = [employee]
        let model = NSManagedObjectModel()
        model.entities = [tag, item, person, employee]
        return model
    }

    static func insert(
        _ entity: String, _ values: [String: Any], into context: NSManagedObjectContext
    ) -> NSManagedObject {
        let object = NSEntityDescription.insertNewObject(forEntityName: entity, into: context)
        for (key, value) in values { object.setValue(value, forKey: key) }
        return object
    }

    /// A store holding the tag "swift" (count 1, note "old") with one item; returns the tag's ID.
    static func storeWithSwiftTag(_ coordinator: NSPersistentStoreCoordinator) throws -> NSManagedObjectID {
        let context = SQLiteStack.context(coordinator)
        return try context.performAndWait {
            let tag = insert("Tag", ["name": "swift", "count": Int64(1), "note": "old"], into: context)
            insert("Item", ["title": "first"], into: context).setValue(tag, forKey: "tag")
            try context.save()
            return tag.objectID
        }
    }

    static func tags(_ context: NSManagedObjectContext) throws -> [NSManagedObject] {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Tag")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        return try context.fetch(request)
    }

    static func saveError(_ context: NSManagedObjectContext) -> NSError? {
        do {
            try context.save()
            return nil
        } catch {
            return error as NSError
        }
    }

    @Test(arguments: [NSSQLiteStoreType, NSInMemoryStoreType])
    func theErrorPolicyReportsAConflictWithAStoredObject(storeType: String) throws {
        let directory = SQLiteTestDirectory()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.model())
        try coordinator.addPersistentStore(
            ofType: storeType, configurationName: nil,
            at: storeType == NSSQLiteStoreType ? directory.store() : nil, options: nil)
        let stored = try Self.storeWithSwiftTag(coordinator)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            let duplicate = Self.insert("Tag", ["name": "swift", "count": Int64(5)], into: context)
            let error = try #require(Self.saveError(context))
            #expect(error.domain == NSCocoaErrorDomain)
            #expect(error.code == NSManagedObjectConstraintMergeError)
            let conflicts = try #require(
                error.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSConstraintConflict])
            #expect(conflicts.count == 1)
            let conflict = try #require(conflicts.first)
            #expect(conflict.constraint == ["name"])
            #expect(conflict.constraintValues["name"] as? String == "swift")
            #expect(conflict.databaseObject?.objectID == stored)
            #expect(conflict.databaseSnapshot?["count"] as? Int64 == 1)
            #expect(conflict.conflictingObjects == [duplicate])
            #expect(conflict.conflictingSnapshots.first?["count"] as? Int64 == 5)
            // Nothing was written, and the context keeps its changes.
            #expect(duplicate.isInserted)
            #expect(context.insertedObjects.count == 1)
        }
        let reader = SQLiteStack.context(coordinator)
        #expect(try reader.performAndWait { try Self.tags(reader).count } == 1)
    }

    @Test func anEmptyConflictCanBeMadeAsNSObjectsAre() {
        // Code that compares errors builds the conflicts it expects with NSObject's init().
        let conflict = NSConstraintConflict()
        #expect(conflict.constraint.isEmpty)
        #expect(conflict.databaseObject == nil)
        #expect(conflict.databaseSnapshot == nil)
        #expect(conflict.conflictingObjects.isEmpty)
        #expect(conflict.conflictingSnapshots.isEmpty)
    }

    @Test func objectsOfOneSaveConflictWithEachOther() throws {
        let directory = SQLiteTestDirectory()
        let coordinator = try SQLiteStack.coordinator(Self.model(), at: directory.store())
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            let one = Self.insert("Tag", ["name": "kotlin"], into: context)
            let two = Self.insert("Tag", ["name": "kotlin"], into: context)
            _ = Self.insert("Tag", ["name": "rust"], into: context)
            _ = Self.insert("Tag", [:], into: context)  // no value: no conflict
            _ = Self.insert("Tag", [:], into: context)
            let error = try #require(Self.saveError(context))
            #expect(error.code == NSManagedObjectConstraintMergeError)
            let conflicts = error.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSConstraintConflict] ?? []
            #expect(conflicts.count == 1)
            #expect(conflicts.first?.databaseObject == nil)
            #expect(Set(conflicts.first?.conflictingObjects ?? []) == [one, two])

            // The trump policy keeps the newest and saves.
            context.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
            try context.save()
            #expect(one.isDeleted || one.managedObjectContext == nil)
            #expect(!two.isDeleted && !two.objectID.isTemporaryID)
        }
        let reader = SQLiteStack.context(coordinator)
        let names = try reader.performAndWait { try Self.tags(reader).map { $0.value(forKey: "name") as? String } }
        #expect(names.sorted { ($0 ?? "") < ($1 ?? "") } == [nil, nil, "kotlin", "rust"])
    }

    @Test func objectTrumpUpdatesTheStoredObjectWithTheInsertedValues() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let coordinator = try SQLiteStack.coordinator(Self.model(), at: url)
        let stored = try Self.storeWithSwiftTag(coordinator)
        let context = SQLiteStack.context(coordinator)
        context.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        try context.performAndWait {
            let duplicate = Self.insert("Tag", ["name": "swift", "count": Int64(5)], into: context)
            Self.insert("Item", ["title": "second"], into: context).setValue(duplicate, forKey: "tag")
            try context.save()
            #expect(duplicate.managedObjectContext == nil || duplicate.isDeleted)
            #expect(!context.hasChanges)
        }
        let reader = SQLiteStack.context(try SQLiteStack.coordinator(Self.model(), at: url))
        try reader.performAndWait {
            let tags = try Self.tags(reader)
            #expect(tags.count == 1)
            let tag = try #require(tags.first)
            // The stored row, updated: same object, the inserted count, the stored note it did not set.
            #expect(tag.objectID.uriRepresentation() == stored.uriRepresentation())
            #expect(tag.value(forKey: "count") as? Int64 == 5)
            #expect(tag.value(forKey: "note") as? String == "old")
            let titles = (tag.value(forKey: "items") as? Set<NSManagedObject> ?? []).compactMap {
                $0.value(forKey: "title") as? String
            }
            #expect(titles.sorted() == ["first", "second"])
        }
    }

    @Test func storeTrumpKeepsTheStoredValues() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let coordinator = try SQLiteStack.coordinator(Self.model(), at: url)
        let stored = try Self.storeWithSwiftTag(coordinator)
        let context = SQLiteStack.context(coordinator)
        context.mergePolicy = NSMergeByPropertyStoreTrumpMergePolicy
        try context.performAndWait {
            _ = Self.insert("Tag", ["name": "swift", "count": Int64(5), "note": "new"], into: context)
            _ = Self.insert("Tag", ["name": "go"], into: context)
            try context.save()
        }
        let reader = SQLiteStack.context(try SQLiteStack.coordinator(Self.model(), at: url))
        try reader.performAndWait {
            let tags = try Self.tags(reader)
            #expect(tags.map { $0.value(forKey: "name") as? String } == ["go", "swift"])
            #expect(tags.last?.objectID.uriRepresentation() == stored.uriRepresentation())
            #expect(tags.last?.value(forKey: "count") as? Int64 == 1)
            #expect(tags.last?.value(forKey: "note") as? String == "old")
        }
    }

    @Test func anUpdateOntoStoredValuesConflictsAndMovingOffThemDoesNot() throws {
        let directory = SQLiteTestDirectory()
        let coordinator = try SQLiteStack.coordinator(Self.model(), at: directory.store())
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            let swift = Self.insert("Tag", ["name": "swift"], into: context)
            let go = Self.insert("Tag", ["name": "go"], into: context)
            try context.save()
            go.setValue("swift", forKey: "name")
            let error = try #require(Self.saveError(context))
            let conflict = (error.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSConstraintConflict])?.first
            #expect(conflict?.databaseObject == swift)
            #expect(conflict?.conflictingObjects == [go])
            // Moving the stored object off the values, in the same save, leaves them free.
            swift.setValue("swiftlang", forKey: "name")
            try context.save()
        }
    }

    @Test func aSuperentitysConstraintHoldsOverItsSubentitiesAndASubentityMayAddItsOwn() throws {
        let directory = SQLiteTestDirectory()
        let coordinator = try SQLiteStack.coordinator(Self.model(), at: directory.store())
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            let person = Self.insert("Person", ["email": "ada@example.com"], into: context)
            _ = Self.insert("Employee", ["email": "grace@example.com", "badge": Int64(7)], into: context)
            try context.save()

            let employee = Self.insert("Employee", ["email": "ada@example.com", "badge": Int64(8)], into: context)
            var error = try #require(Self.saveError(context))
            var conflicts = error.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSConstraintConflict] ?? []
            #expect(conflicts.map(\.constraint) == [["email"]])
            #expect(conflicts.first?.databaseObject == person)
            #expect(conflicts.first?.conflictingObjects == [employee])

            // The subentity's own constraint: badge 7 is taken by the stored employee.
            employee.setValue("alan@example.com", forKey: "email")
            employee.setValue(Int64(7), forKey: "badge")
            error = try #require(Self.saveError(context))
            conflicts = error.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSConstraintConflict] ?? []
            #expect(conflicts.map(\.constraint) == [["badge"]])
            #expect(conflicts.first?.databaseObject?.value(forKey: "email") as? String == "grace@example.com")

            employee.setValue(Int64(9), forKey: "badge")
            try context.save()
        }
    }
}
