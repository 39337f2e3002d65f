import Foundation
import OpenCoreDataShim
import Testing

/// wibosco's policy for its version 2 → 3 mapping, as that project writes it: each post's hex color becomes a
/// Color object of its own. The mapping model names it `CoreDataMigration_Example.Post2ToPost3MigrationPolicy`;
/// OpenCoreData finds this class by its unqualified name.
final class Post2ToPost3MigrationPolicy: NSEntityMigrationPolicy {
    override func createDestinationInstances(
        forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager
    ) throws {
        try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
        guard
            let post = manager.destinationInstances(forEntityMappingName: mapping.name, sourceInstances: [sInstance])
                .first
        else { throw NSError(domain: "Post2ToPost3MigrationPolicy", code: 1) }
        let color = NSEntityDescription.insertNewObject(forEntityName: "Color", into: post.managedObjectContext!)
        color.setValue(UUID().uuidString, forKey: "colorID")
        color.setValue(sInstance.value(forKey: "hexColor"), forKey: "hex")
        post.setValue(color, forKey: "color")
    }
}

/// The BookMigration policy of the objc.io article, for its Model1 → Model2 mapping: a book's author name becomes an
/// Author, one per name across books, looked up in the manager's user info.
final class MHWBookToBookPolicy: NSEntityMigrationPolicy {
    override func createDestinationInstances(
        forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager
    ) throws {
        let version = "\(mapping.userInfo?["modelVersion"] ?? "")"
        guard version == "2" || version == "3" else {
            return try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
        }
        let book = NSEntityDescription.insertNewObject(
            forEntityName: mapping.destinationEntityName!, into: manager.destinationContext)
        book.setValue(sInstance.value(forKey: "title"), forKey: "title")
        if version == "3" {
            // Model 3 keeps each user's copy of the book as a File; the user is the destination user with the same
            // userId, found with a fetch in the destination context (which holds the users migrated so far).
            for sourceUser in sInstance.value(forKey: "users") as? Set<NSManagedObject> ?? [] {
                let file = NSEntityDescription.insertNewObject(forEntityName: "File", into: manager.destinationContext)
                file.setValue(sInstance.value(forKey: "fileURL"), forKey: "fileURL")
                file.setValue(book, forKey: "book")
                let request = NSFetchRequest<NSManagedObject>(entityName: "User")
                request.predicate = NSPredicate(format: "userId == %@", sourceUser.value(forKey: "userId") as! NSNumber)
                file.setValue(try manager.destinationContext.fetch(request).last, forKey: "user")
            }
            manager.associate(sourceInstance: sInstance, withDestinationInstance: book, for: mapping)
            return
        }
        var authors = manager.userInfo?["authors"] as? [String: NSManagedObject] ?? [:]
        let name = sInstance.value(forKey: "authorName") as? String ?? ""
        let author =
            authors[name]
            ?? {
                let author = NSEntityDescription.insertNewObject(
                    forEntityName: "Author", into: manager.destinationContext)
                author.setValue(name, forKey: "name")
                return author
            }()
        authors[name] = author
        manager.userInfo = (manager.userInfo ?? [:]).merging(["authors": authors]) { $1 }
        book.mutableSetValue(forKey: "authors").add(author)
        manager.associate(sourceInstance: sInstance, withDestinationInstance: book, for: mapping)
    }
}

/// BookMigration's User policy for Model2 → Model3: a user made by hand with the source's attributes, given the
/// files its books' lookup holds (the project's Book policy fills none, so users get their files from the Book
/// policy).
final class MHWUserToUserPolicy: NSEntityMigrationPolicy {
    override func createDestinationInstances(
        forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager
    ) throws {
        guard "\(mapping.userInfo?["modelVersion"] ?? "")" == "3" else {
            return try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
        }
        let user = NSEntityDescription.insertNewObject(
            forEntityName: mapping.destinationEntityName!, into: manager.destinationContext)
        for key in user.entity.attributesByName.keys where sInstance.entity.attributesByName[key] != nil {
            if let value = sInstance.value(forKey: key) { user.setValue(value, forKey: key) }
        }
        let files = manager.userInfo?["files"] as? [String: NSManagedObject] ?? [:]
        for book in sInstance.value(forKey: "books") as? Set<NSManagedObject> ?? [] {
            files[book.objectID.uriRepresentation().absoluteString]?.setValue(user, forKey: "user")
        }
        manager.associate(sourceInstance: sInstance, withDestinationInstance: user, for: mapping)
    }
}

/// Records every stage it is called for in the manager's user info, and answers `FUNCTION($entityPolicy, "shout:",
/// …)`.
class RecordingPolicy: NSEntityMigrationPolicy {
    static func record(_ stage: String, _ manager: NSMigrationManager) {
        var stages = manager.userInfo?["stages"] as? [String] ?? []
        stages.append(stage)
        manager.userInfo = (manager.userInfo ?? [:]).merging(["stages": stages]) { $1 }
    }

    override func begin(_ mapping: NSEntityMapping, with manager: NSMigrationManager) throws {
        Self.record("begin", manager)
    }
    override func createDestinationInstances(
        forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager
    ) throws {
        Self.record("create", manager)
        try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
    }
    override func endInstanceCreation(forMapping mapping: NSEntityMapping, manager: NSMigrationManager) throws {
        Self.record("endInstanceCreation", manager)
    }
    override func createRelationships(
        forDestination dInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager
    ) throws {
        Self.record("relate", manager)
        try super.createRelationships(forDestination: dInstance, in: mapping, manager: manager)
    }
    override func endRelationshipCreation(forMapping mapping: NSEntityMapping, manager: NSMigrationManager) throws {
        Self.record("endRelationshipCreation", manager)
    }
    override func performCustomValidation(forMapping mapping: NSEntityMapping, manager: NSMigrationManager) throws {
        Self.record("validate", manager)
        let sources = manager.sourceInstances(forEntityMappingName: mapping.name, destinationInstances: nil)
        let destinations = manager.destinationInstances(forEntityMappingName: mapping.name, sourceInstances: nil)
        Self.record("\(sources.count)->\(destinations.count)", manager)
    }
    override func end(_ mapping: NSEntityMapping, manager: NSMigrationManager) throws {
        Self.record("end", manager)
    }
    override func respondsToPredicateFunction(_ name: String) -> Bool { name == "shout:" }
    override func performPredicateFunction(_ name: String, arguments: [Any?]) -> Any? {
        (arguments.first as? String).map { $0.uppercased() + "!" }
    }
}

/// A policy whose relationship stage fails.
final class FailingPolicy: RecordingPolicy {
    override func createRelationships(
        forDestination dInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager
    ) throws {
        throw NSError(domain: "FailingPolicy", code: 7, userInfo: [NSLocalizedDescriptionKey: "no relationships today"])
    }
}

/// A policy that cancels the migration as soon as it starts.
final class CancellingPolicy: NSEntityMigrationPolicy {
    override func begin(_ mapping: NSEntityMapping, with manager: NSMigrationManager) throws {
        manager.cancelMigrationWithError(NSError(domain: "CancellingPolicy", code: 3))
    }
}

/// A policy that kills its process with SIGKILL — as a crash, or the system ending an app, would stop a migration
/// without a chance to clean up — at the stage its mapping's user info names: `create` after the second destination
/// object, `end` once every object is made and before the one save.
final class KillingPolicy: RecordingPolicy {
    override func createDestinationInstances(
        forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager
    ) throws {
        try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
        if mapping.userInfo?["killAt"] as? String == "create",
            manager.destinationInstances(forEntityMappingName: mapping.name, sourceInstances: nil).count == 2
        {
            kill(getpid(), SIGKILL)
        }
    }
    override func end(_ mapping: NSEntityMapping, manager: NSMigrationManager) throws {
        if mapping.userInfo?["killAt"] as? String == "end" { kill(getpid(), SIGKILL) }
    }
}

/// `NSMigrationManager`: the object-by-object migration with mapping models, policies and their stages.
@Suite struct MigrationManagerTests {
    /// People with a name and an age, in version 1 with a nickname, in version 2 with a shout.
    static func peopleModel(version: Int) -> NSManagedObjectModel {
        let name = CompanyModel.attribute("name", .stringAttributeType)
        let age = CompanyModel.attribute("age", .integer16AttributeType)
        let extra = CompanyModel.attribute(version == 1 ? "nickname" : "shout", .stringAttributeType)
        let person = NSEntityDescription()
        person.name = "Person"
        person.properties = [name, age, extra]
        let model = NSManagedObjectModel()
        model.entities = [person]
        return model
    }

    static func writePeople(_ people: [(String, Int)], to url: URL) throws {
        let coordinator = try SQLiteStack.coordinator(peopleModel(version: 1), at: url)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            for (name, age) in people {
                let person = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
                person.setValue(name, forKey: "name")
                person.setValue(age, forKey: "age")
            }
            try context.save()
        }
        try SQLiteStack.close(coordinator)
    }

    static func peopleMapping(policy: String?, sourcePredicate: String = "age > 20") -> NSMappingModel {
        let age = NSPropertyMapping()
        age.name = "age"
        age.valueExpression = NSExpression(format: "$source.age + 10")
        let shout = NSPropertyMapping()
        shout.name = "shout"
        shout.valueExpression = NSExpression(format: #"FUNCTION($entityPolicy, "shout:", $source.name)"#)
        let name = NSPropertyMapping()
        name.name = "name"
        name.valueExpression = NSExpression(format: "$source.name")
        let person = NSEntityMapping()
        person.name = "PersonToPerson"
        person.mappingType = .customEntityMappingType
        person.sourceEntityName = "Person"
        person.destinationEntityName = "Person"
        person.entityMigrationPolicyClassName = policy
        person.sourceExpression = NSExpression(
            format: #"FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Person", %@), "#
                + "$manager.sourceContext, NO)", sourcePredicate)
        person.attributeMappings = [age, name, shout]
        let mapping = NSMappingModel()
        mapping.entityMappings = [person]
        return mapping
    }

    static func people(at url: URL) throws -> [String: [String: Any]] {
        let coordinator = try SQLiteStack.coordinator(peopleModel(version: 2), at: url)
        defer { try? SQLiteStack.close(coordinator) }
        let context = SQLiteStack.context(coordinator)
        return try context.performAndWait {
            var people: [String: [String: Any]] = [:]
            for person in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person")) {
                people[person.value(forKey: "name") as? String ?? ""] = [
                    "age": person.value(forKey: "age") as Any, "shout": person.value(forKey: "shout") as Any,
                ]
            }
            return people
        }
    }

    @Test func aMappingModelBuiltInCodeRunsItsExpressionsAndEveryStageOfItsPolicy() throws {
        let directory = SQLiteTestDirectory()
        let source = directory.store("People1.sqlite")
        let destination = directory.store("People2.sqlite")
        try Self.writePeople([("ada", 36), ("bob", 12), ("cleo", 25)], to: source)
        let manager = NSMigrationManager(
            sourceModel: Self.peopleModel(version: 1), destinationModel: Self.peopleModel(version: 2))
        #expect(manager.migrationProgress == 0)
        // The migration reports to the thread's current progress, as Foundation's implicit progress trees work.
        let parent = Progress(totalUnitCount: 1)
        parent.becomeCurrent(withPendingUnitCount: 1)
        try manager.migrateStore(
            from: source, type: .sqlite, mapping: Self.peopleMapping(policy: "RecordingPolicy"), to: destination,
            type: .sqlite)
        parent.resignCurrent()
        #expect(parent.fractionCompleted == 1)
        #expect(manager.progress?.completedUnitCount == manager.progress?.totalUnitCount)
        // Bob is 12: the source fetch's predicate leaves him behind.
        let people = try Self.people(at: destination)
        #expect(Set(people.keys) == ["ada", "cleo"])
        #expect((people["ada"]?["age"] as? NSNumber)?.intValue == 46)
        #expect(people["cleo"]?["shout"] as? String == "CLEO!")
        #expect(
            manager.userInfo?["stages"] as? [String] == [
                "begin", "create", "create", "endInstanceCreation", "relate", "relate", "endRelationshipCreation",
                "validate", "2->2", "end",
            ])
        #expect(manager.migrationProgress == 1)
        #expect(manager.mappingModel.entityMappings.count == 1)
    }

    /// The project's own flow (CoreDataMigrator): version 1 → 2 with its mapping model (the `color` attribute
    /// renamed `hexColor` by a value expression), 2 → 3 with its mapping model and its policy (each color becomes a
    /// Color object), 3 → 4 with an inferred mapping model (a `hide` attribute with a default). Its tests expect
    /// the migrated store to need no further migration; the data must come through whole.
    @Test(.enabled(if: SQLiteCorpus.isAvailable))
    func wiboscosStoreMigratesThroughItsMappingModelsAndPolicyToTheLatestVersion() throws {
        let directory = SQLiteTestDirectory()
        let original = try directory.copyCorpusStore(MigrationCorpus.Wibosco.store("1"))
        let before = try RawSQLite.query(original, "SELECT ZPOSTID, ZCOLOR, ZDATE FROM ZPOST ORDER BY ZPOSTID")
        #expect(before.count == 1001)
        let models = try MigrationCorpus.Wibosco.models()
        let bundle = try #require(Bundle(url: MigrationCorpus.Wibosco.mappings))
        var current = original
        for step in 0..<3 {
            let mapping = try #require(
                NSMappingModel(from: [bundle], forSourceModel: models[step], destinationModel: models[step + 1])
                    ?? (step == 2
                        ? try NSMappingModel.inferredMappingModel(
                            forSourceModel: models[step], destinationModel: models[step + 1]) : nil))
            let next = directory.store("Step\(step + 1).sqlite")
            let manager = NSMigrationManager(sourceModel: models[step], destinationModel: models[step + 1])
            try manager.migrateStore(
                from: current, sourceType: NSSQLiteStoreType, options: nil, with: mapping, toDestinationURL: next,
                destinationType: NSSQLiteStoreType, destinationOptions: nil)
            current = next
        }
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: current)
        #expect(models[3].isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        #expect(!models[2].isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        let after = try RawSQLite.query(
            current,
            "SELECT p.ZPOSTID, c.ZHEX, p.ZDATE, p.ZHIDE, c.ZPOST = p.Z_PK FROM ZPOST p JOIN ZCOLOR c ON p.ZCOLOR = "
                + "c.Z_PK ORDER BY p.ZPOSTID")
        #expect(after.map { Array($0[0..<3]) } == before)
        #expect(after.allSatisfy { $0[3] == .integer(0) && $0[4] == .integer(1) })
        #expect(try RawSQLite.query(current, "SELECT COUNT(*) FROM ZCOLOR") == [[.integer(1001)]])
    }

    /// BookMigration's Model1 → Model2 with its mapping model and policy: authors become objects, one per name, and
    /// the user keeps its books (the article's tests: authors exist, Franz Kafka is one author of two books).
    @Test(.enabled(if: SQLiteCorpus.isAvailable)) func bookMigrationsAuthorsBecomeObjects() throws {
        let directory = SQLiteTestDirectory()
        let source = try directory.copyCorpusStore(MigrationCorpus.BookMigration.store)
        let destination = directory.store("Model2.sqlite")
        let models = try MigrationCorpus.BookMigration.models()
        let mapping = try NSMappingModel(
            validatingContentsOf: MigrationCorpus.BookMigration.mapping("Model1_to_Model2"))
        let manager = NSMigrationManager(sourceModel: models[0], destinationModel: models[1])
        try manager.migrateStore(from: source, type: .sqlite, mapping: mapping, to: destination, type: .sqlite)
        let coordinator = try SQLiteStack.coordinator(models[1], at: destination)
        defer { try? SQLiteStack.close(coordinator) }
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            let books = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Book"))
            #expect(books.count == 4)
            #expect(books.allSatisfy { ($0.value(forKey: "authors") as? Set<NSManagedObject>)?.count == 1 })
            let kafka = NSFetchRequest<NSManagedObject>(entityName: "Author")
            kafka.predicate = NSPredicate(format: "name LIKE 'Franz Kafka'")
            #expect(try context.count(for: kafka) == 1)
            let kafkasBooks = NSFetchRequest<NSManagedObject>(entityName: "Book")
            kafkasBooks.predicate = NSPredicate(format: "ANY authors.name LIKE 'Franz Kafka'")
            #expect(try context.count(for: kafkasBooks) == 2)
            #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Author")) == 3)
            let users = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "User"))
            #expect(users.count == 3)
            let shelves = users.map { ($0.value(forKey: "books") as? Set<NSManagedObject>)?.count ?? -1 }
            #expect(shelves.sorted() == [0, 0, 4])
        }
    }

    /// BookMigration's Model2 → Model3 runs two mapping models into one destination store, as that project's
    /// migration manager does: first the one without policies, then the one whose Book policy turns each user's copy
    /// of a book into a File. Its tests expect the last user with userId 1 to have the four files, and every file a
    /// book.
    @Test(.enabled(if: SQLiteCorpus.isAvailable)) func bookMigrationsModel3GetsFilesFromTwoMappingModels() throws {
        let directory = SQLiteTestDirectory()
        let source = try directory.copyCorpusStore(MigrationCorpus.BookMigration.store)
        let models = try MigrationCorpus.BookMigration.models()
        let version2 = directory.store("Model2.sqlite")
        try NSMigrationManager(sourceModel: models[0], destinationModel: models[1]).migrateStore(
            from: source, type: .sqlite,
            mapping: try NSMappingModel(
                validatingContentsOf: MigrationCorpus.BookMigration.mapping("Model1_to_Model2")),
            to: version2, type: .sqlite)
        let version3 = directory.store("Model3.sqlite")
        for name in ["Model2_to_Model3_User", "Model2_to_Model3"] {
            try NSMigrationManager(sourceModel: models[1], destinationModel: models[2]).migrateStore(
                from: version2, type: .sqlite,
                mapping: try NSMappingModel(validatingContentsOf: MigrationCorpus.BookMigration.mapping(name)),
                to: version3, type: .sqlite)
        }
        let coordinator = try SQLiteStack.coordinator(models[2], at: version3)
        defer { try? SQLiteStack.close(coordinator) }
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            // Every user of Model1 has userId 1; the policy gives the files to one of them (the project's test
            // takes the last of an unsorted fetch, which depends on the order of unsaved objects in a fetch).
            let request = NSFetchRequest<NSManagedObject>(entityName: "User")
            request.predicate = NSPredicate(format: "userId == 1")
            let shelves = try context.fetch(request).map { ($0.value(forKey: "files") as? Set<NSManagedObject>)?.count }
            #expect(shelves.filter { $0 == 4 }.count == 1)
            #expect(shelves.filter { $0 == 0 }.count == shelves.count - 1)
            let files = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "File"))
            #expect(files.count == 4)
            #expect(files.allSatisfy { $0.value(forKey: "book") != nil })
            let titles = Set(
                files.compactMap { ($0.value(forKey: "book") as? NSManagedObject)?.value(forKey: "title") as? String })
            #expect(titles.count == 4)
        }
    }

    /// A failing policy stops the migration with Core Data's policy error; the source is untouched and no
    /// destination store is left behind.
    @Test func aFailingPolicyLeavesNothingBehind() throws {
        let directory = SQLiteTestDirectory()
        let source = directory.store("People1.sqlite")
        let destination = directory.store("People2.sqlite")
        try Self.writePeople([("ada", 36)], to: source)
        let before = MigrationCorpus.contents(of: source)
        let manager = NSMigrationManager(
            sourceModel: Self.peopleModel(version: 1), destinationModel: Self.peopleModel(version: 2))
        #expect {
            try manager.migrateStore(
                from: source, type: .sqlite, mapping: Self.peopleMapping(policy: "FailingPolicy"), to: destination,
                type: .sqlite)
        } throws: { error in
            let error = error as NSError
            let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError
            return error.code == NSEntityMigrationPolicyError && underlying?.domain == "FailingPolicy"
                && error.localizedDescription.contains("no relationships today")
        }
        #expect(MigrationCorpus.contents(of: source) == before)
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        #expect(!FileManager.default.fileExists(atPath: destination.path + "-wal"))
    }

    /// A process killed half-way through a migration — while it makes the destination objects, or once it has made
    /// them all and is about to save — leaves the source store as it was and nothing at the destination: the
    /// destination is written under another name and takes its own only when complete. Migrating again succeeds.
    @Test(arguments: ["create", "end"])
    func aProcessKilledHalfWayLeavesTheSourceAsItWasAndNoDestination(stage: String) async throws {
        let directory = SQLiteTestDirectory()
        let source = directory.store("People1.sqlite")
        let destination = directory.store("People2.sqlite")
        try Self.writePeople([("ada", 36), ("cleo", 25), ("dan", 41), ("eve", 30)], to: source)
        let before = MigrationCorpus.contents(of: source)
        await #expect(processExitsWith: .signal(SIGKILL)) {
            [source = source.path as String, destination = destination.path as String, stage = stage as String] in
            let mapping = MigrationManagerTests.peopleMapping(policy: "KillingPolicy")
            mapping.entityMappings[0].userInfo = ["killAt": stage]
            let manager = NSMigrationManager(
                sourceModel: MigrationManagerTests.peopleModel(version: 1),
                destinationModel: MigrationManagerTests.peopleModel(version: 2))
            try? manager.migrateStore(
                from: URL(fileURLWithPath: source), type: .sqlite, mapping: mapping,
                to: URL(fileURLWithPath: destination), type: .sqlite)
        }
        #expect(MigrationCorpus.contents(of: source) == before)
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        let old = try SQLiteStack.coordinator(Self.peopleModel(version: 1), at: source)
        let context = SQLiteStack.context(old)
        #expect(
            try context.performAndWait { try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Person")) }
                == 4)
        try SQLiteStack.close(old)

        try NSMigrationManager(
            sourceModel: Self.peopleModel(version: 1), destinationModel: Self.peopleModel(version: 2)
        )
        .migrateStore(
            from: source, type: .sqlite, mapping: Self.peopleMapping(policy: "RecordingPolicy"), to: destination,
            type: .sqlite)
        #expect(try Self.people(at: destination).keys.sorted() == ["ada", "cleo", "dan", "eve"])
    }

    @Test func aCancelledMigrationFailsWithTheCancellationsError() throws {
        let directory = SQLiteTestDirectory()
        let source = directory.store("People1.sqlite")
        try Self.writePeople([("ada", 36)], to: source)
        let manager = NSMigrationManager(
            sourceModel: Self.peopleModel(version: 1), destinationModel: Self.peopleModel(version: 2))
        #expect {
            try manager.migrateStore(
                from: source, type: .sqlite, mapping: Self.peopleMapping(policy: "CancellingPolicy"),
                to: directory.store("People2.sqlite"), type: .sqlite)
        } throws: { ($0 as NSError).domain == "CancellingPolicy" }
        #expect(!FileManager.default.fileExists(atPath: directory.store("People2.sqlite").path))

        // Through Foundation's progress tree: a parent cancelled before the migration starts cancels it.
        let parent = Progress(totalUnitCount: 1)
        parent.cancel()
        parent.becomeCurrent(withPendingUnitCount: 1)
        defer { parent.resignCurrent() }
        #expect {
            try manager.migrateStore(
                from: source, type: .sqlite, mapping: Self.peopleMapping(policy: nil),
                to: directory.store("People3.sqlite"), type: .sqlite)
        } throws: { ($0 as NSError).code == NSMigrationCancelledError }
    }

    /// The default policy cannot make objects of an abstract entity: an error says so (Apple's framework raises).
    @Test func mappingToAnAbstractEntityIsAnError() throws {
        let directory = SQLiteTestDirectory()
        let source = directory.store("People1.sqlite")
        try Self.writePeople([("ada", 36)], to: source)
        let destinationModel = Self.peopleModel(version: 2)
        let person = destinationModel.entities[0]
        person.isAbstract = true
        let student = NSEntityDescription()
        student.name = "Student"
        person.subentities = [student]
        destinationModel.entities = [person, student]
        let manager = NSMigrationManager(sourceModel: Self.peopleModel(version: 1), destinationModel: destinationModel)
        #expect {
            try manager.migrateStore(
                from: source, type: .sqlite, mapping: Self.peopleMapping(policy: "RecordingPolicy"),
                to: directory.store("People2.sqlite"), type: .sqlite)
        } throws: { error in
            (error as NSError).code == NSMigrationError && (error as NSError).localizedDescription.contains("abstract")
        }
    }

    /// A mapping model is checked before anything is migrated: an expression that reads a key the source entity
    /// lacks, calls a method the manager lacks or a policy class that does not exist is an error, not a crash.
    @Test func aMappingModelThatCannotRunIsRefusedWithAnError() throws {
        let directory = SQLiteTestDirectory()
        let source = directory.store("People1.sqlite")
        try Self.writePeople([("ada", 36)], to: source)
        func attempt(_ change: (NSEntityMapping) -> Void) -> NSError? {
            let mapping = Self.peopleMapping(policy: nil)
            change(mapping.entityMappings[0])
            let manager = NSMigrationManager(
                sourceModel: Self.peopleModel(version: 1), destinationModel: Self.peopleModel(version: 2))
            do {
                try manager.migrateStore(
                    from: source, type: .sqlite, mapping: mapping, to: directory.store("Out.sqlite"), type: .sqlite)
                return nil
            } catch {
                return error as NSError
            }
        }
        let unknownKey = attempt { $0.attributeMappings?[0].valueExpression = NSExpression(format: "$source.salary") }
        #expect(unknownKey?.code == NSMigrationError)
        #expect(unknownKey?.localizedDescription.contains("salary") == true)
        let unknownMethod = attempt {
            $0.attributeMappings?[0].valueExpression = NSExpression(format: #"FUNCTION($manager, "explode:", 1)"#)
        }
        #expect(unknownMethod?.code == NSMigrationError)
        let unanswered = attempt { _ in }  // the default policy answers no FUNCTION($entityPolicy, …)
        #expect(unanswered?.code == NSMigrationError)
        #expect(unanswered?.localizedDescription.contains("shout:") == true)
        let missingClass = attempt { $0.entityMigrationPolicyClassName = "MyApp.NoSuchPolicy" }
        #expect(missingClass?.code == NSEntityMigrationPolicyError)
        let otherVersion = attempt { $0.sourceEntityVersionHash = Data(repeating: 1, count: 32) }
        #expect(otherVersion?.code == NSMigrationError)
        let wrongEntity = attempt { $0.destinationEntityName = "Robot" }
        #expect(wrongEntity?.code == NSMigrationError)
        #expect(!FileManager.default.fileExists(atPath: directory.store("Out.sqlite").path))

        let manager = NSMigrationManager(
            sourceModel: Self.peopleModel(version: 1), destinationModel: Self.peopleModel(version: 2))
        #expect {
            try manager.migrateStore(
                from: source, sourceType: NSSQLiteStoreType, with: nil, toDestinationURL: directory.store("Out.sqlite"),
                destinationType: NSSQLiteStoreType)
        } throws: { ($0 as NSError).code == NSMigrationMissingMappingModelError }
    }
}
