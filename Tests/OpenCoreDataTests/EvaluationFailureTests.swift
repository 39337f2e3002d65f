#if !canImport(CoreData)
import Foundation
import OpenCoreDataShim
import Testing

/// Predicates and derivations that come from users or files may name keys an entity lacks, methods nobody answers,
/// `ANYKEY` (a Spotlight construct) or a `FETCH` without a context. Apple raises an exception when it evaluates
/// them; here the throwing calls — fetching, counting, saving — throw Core Data's error instead, and only the calls
/// that cannot throw (`evaluate(with:)`, `value(forKey:)`) stop the program, as Apple's raise.
@Suite struct EvaluationFailureTests {
    static let failingFormats = [
        ("nmae == 'Ada'", "nmae"),
        ("owner.nmae == 'Ada'", "nmae"),
        ("ANY tags.lable == 'red'", "lable"),
        ("FUNCTION(name, 'frobnicate:', 1) == 1", "frobnicate:"),
        ("ANYKEY == 'Ada'", "ANYKEY"),
        ("FETCH($request, $context, NO).@count == 1", "FETCH"),
        ("SUBQUERY(tags, $t, $t.lable == 'red').@count > 0", "lable"),
        ("name == 'Ada' AND TERNARY(nmae == nil, 1, 0) == 1", "nmae"),
    ]

    /// A store of the sample model with two items, one of them only inserted (a pending change).
    static func context(_ type: String) throws -> (NSManagedObjectContext, SQLiteTestDirectory) {
        let directory = SQLiteTestDirectory()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: SQLiteSampleModel.make())
        try coordinator.addPersistentStore(ofType: type, configurationName: nil, at: directory.store(), options: nil)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            let owner = NSEntityDescription.insertNewObject(forEntityName: "Owner", into: context)
            owner.setValue("Ada", forKey: "name")
            let tag = NSEntityDescription.insertNewObject(forEntityName: "Tag", into: context)
            tag.setValue("red", forKey: "label")
            let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
            item.setValue("Ada", forKey: "name")
            item.setValue(owner, forKey: "owner")
            item.setValue(Set([tag]), forKey: "tags")
            try context.save()
            let pending = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
            pending.setValue("Ada", forKey: "name")
        }
        return (context, directory)
    }

    @Test(arguments: [NSSQLiteStoreType, NSInMemoryStoreType])
    func fetchesAndCountsThrow(_ storeType: String) throws {
        let (context, directory) = try Self.context(storeType)
        try context.performAndWait {
            for (format, named) in Self.failingFormats {
                let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
                request.predicate = try NSPredicate(validatingFormat: format)
                let fetchError = try #require(throws: NSError.self, "\(format)") { try context.fetch(request) }
                #expect(fetchError.domain == NSCocoaErrorDomain)
                #expect(fetchError.code == NSCoreDataError)
                #expect(fetchError.localizedDescription.contains(named), "\(fetchError.localizedDescription)")
                #expect(fetchError.localizedDescription.contains("The fetch of 'Item'"))
                let countError = try #require(throws: NSError.self, "\(format)") { try context.count(for: request) }
                #expect(countError.code == NSCoreDataError)
            }
            // The context is unharmed: a good fetch still works.
            let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
            request.predicate = NSPredicate(format: "name == 'Ada'")
            #expect(try context.fetch(request).count == 2)
        }
        _ = directory
    }

    /// Of several failures, the error names the first: what went wrong first explains what followed.
    @Test(arguments: [NSSQLiteStoreType, NSInMemoryStoreType])
    func theFirstOfSeveralFailuresIsReported(_ storeType: String) throws {
        let (context, directory) = try Self.context(storeType)
        try context.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
            request.predicate = try NSPredicate(validatingFormat: "nmae == 'Ada' OR lable == 'red'")
            let error = try #require(throws: NSError.self) { try context.fetch(request) }
            #expect(error.code == NSCoreDataError)
            #expect(error.localizedDescription.contains("nmae"), "\(error.localizedDescription)")
            #expect(!error.localizedDescription.contains("lable"), "\(error.localizedDescription)")
        }
        _ = directory
    }

    /// Dictionaries answer a key they do not have with nil, as on Apple platforms.
    @Test func dictionariesAnswerUnknownKeysWithNil() {
        #expect(NSPredicate(format: "missing == nil").evaluate(with: ["name": "Ada"]))
        #expect(!NSPredicate(format: "missing.deeper == 1").evaluate(with: ["name": "Ada"]))
    }

    @Test func evaluatingOutsideAThrowingCallStops() async {
        await #expect(processExitsWith: .failure) {
            _ = NSPredicate(format: "ANYKEY == 1").evaluate(with: ["a": 1])
        }
        await #expect(processExitsWith: .failure) {
            let context = CompanyModel.context()
            context.performAndWait {
                let company = Company(context: context)
                _ = NSPredicate(format: "nmae == 'x'").evaluate(with: company)
            }
        }
    }

    /// A model built in code whose derived attribute reads a key the entity lacks: the save throws, inside its
    /// transaction, and writes nothing.
    @Test func aDerivationNamingAMissingKeyFailsTheSave() throws {
        let entity = NSEntityDescription()
        entity.name = "Note"
        let text = NSAttributeDescription()
        text.name = "text"
        text.attributeType = .stringAttributeType
        text.isOptional = true
        let derived = NSDerivedAttributeDescription()
        derived.name = "shout"
        derived.attributeType = .stringAttributeType
        derived.isOptional = true
        derived.derivationExpression = NSExpression(format: "uppercase:(txet)")
        entity.properties = [text, derived]
        let model = NSManagedObjectModel()
        model.entities = [entity]
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let coordinator = try SQLiteStack.coordinator(model, at: url)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            let note = NSEntityDescription.insertNewObject(forEntityName: "Note", into: context)
            note.setValue("hi", forKey: "text")
            let error = try #require(throws: NSError.self) { try context.save() }
            #expect(error.code == NSCoreDataError)
            #expect(error.localizedDescription.contains("Deriving 'shout' of entity 'Note'"))
            #expect(error.localizedDescription.contains("txet"))
            #expect(context.hasChanges)
        }
        try SQLiteStack.close(coordinator)
        #expect(try RawSQLite.query(url, "SELECT COUNT(*) FROM ZNOTE") == [[.integer(0)]])
    }

    @Test func aValidationPredicateNobodyAnswersFailsTheSave() throws {
        let entity = NSEntityDescription()
        entity.name = "Note"
        let text = NSAttributeDescription()
        text.name = "text"
        text.attributeType = .stringAttributeType
        text.isOptional = true
        text.setValidationPredicates(
            [NSPredicate(format: "FUNCTION(SELF, 'frobnicate') == 1")], withValidationWarnings: ["frobnicated"])
        entity.properties = [text]
        let model = NSManagedObjectModel()
        model.entities = [entity]
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(
            ofType: NSInMemoryStoreType, configurationName: nil, at: URL(fileURLWithPath: "/dev/null"), options: nil)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            let note = NSEntityDescription.insertNewObject(forEntityName: "Note", into: context)
            note.setValue("hi", forKey: "text")
            let error = try #require(throws: NSError.self) { try context.save() }
            #expect(error.code == NSCoreDataError)
            #expect(error.localizedDescription.contains("frobnicate"))
        }
    }

    /// A model file whose derivation reads a missing key does not load.
    @Test(arguments: ["txet", "uppercase:(txet)", "notes.@count", "owner.nmae", "canonical:(owner.nmae)"])
    func modelFilesWithDerivationsNamingMissingKeysAreRefused(_ derivation: String) throws {
        let contents = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="Note">
                    <attribute name="text" optional="YES" attributeType="String"/>
                    <attribute name="derived" optional="YES" attributeType="String" derived="YES" \
            derivationExpression="\(derivation)"/>
                    <relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" \
            destinationEntity="Owner"/>
                </entity>
                <entity name="Owner">
                    <attribute name="name" optional="YES" attributeType="String"/>
                </entity>
            </model>
            """
        let directory = try ModelScratchDirectory()
        let url = try directory.write(contents, to: "M.xcdatamodel/contents").deletingLastPathComponent()
        let error = try #require(throws: NSError.self) { try NSManagedObjectModel(validatingContentsOf: url) }
        #expect(error.code == NSCoreDataError)
        #expect(error.userInfo["property"] as? String == "derived")
        #expect(error.localizedDescription.contains("not a property of the entity"), "\(error.localizedDescription)")
        let valid = contents.replacingOccurrences(of: "txet", with: "text").replacingOccurrences(
            of: "nmae", with: "name"
        )
        .replacingOccurrences(of: "notes.@count", with: "text")
        let other = try directory.write(valid, to: "N.xcdatamodel/contents").deletingLastPathComponent()
        #expect(try NSManagedObjectModel(validatingContentsOf: other).entitiesByName["Note"] != nil)
    }
}
#endif
