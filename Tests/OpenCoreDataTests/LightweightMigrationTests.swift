import Foundation
import OpenCoreDataShim
import Testing

@_spi(Testing) @testable import OpenCoreDataCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Lightweight migration: the inferred mapping model, the options that ask for it when a store is added, and the
/// SQLite store's migration in place.
@Suite struct LightweightMigrationTests {
    // MARK: Models

    /// A library: authors with books, books with tags (many-to-many).
    static func library(version: Int) -> NSManagedObjectModel {
        func attribute(_ name: String, _ type: NSAttributeType, optional: Bool = true, default value: Any? = nil)
            -> NSAttributeDescription
        {
            let attribute = CompanyModel.attribute(name, type, optional: optional)
            attribute.defaultValue = value
            return attribute
        }
        func relationship(_ name: String, to destination: NSEntityDescription, toMany: Bool, ordered: Bool = false)
            -> NSRelationshipDescription
        {
            let relationship = NSRelationshipDescription()
            relationship.name = name
            relationship.destinationEntity = destination
            relationship.maxCount = toMany ? 0 : 1
            relationship.isOrdered = ordered
            return relationship
        }
        let author = NSEntityDescription()
        let book = NSEntityDescription()
        let tag = NSEntityDescription()
        let model = NSManagedObjectModel()
        switch version {
        case 1:
            author.name = "Author"
            book.name = "Book"
            tag.name = "Tag"
            let books = relationship("books", to: book, toMany: true)
            let writtenBy = relationship("author", to: author, toMany: false)
            books.inverseRelationship = writtenBy
            writtenBy.inverseRelationship = books
            let tags = relationship("tags", to: tag, toMany: true)
            let tagged = relationship("books", to: book, toMany: true)
            tags.inverseRelationship = tagged
            tagged.inverseRelationship = tags
            author.properties = [
                attribute("name", .stringAttributeType), attribute("born", .integer16AttributeType), books,
            ]
            book.properties = [attribute("title", .stringAttributeType), writtenBy, tags]
            tag.properties = [attribute("label", .stringAttributeType), tagged]
            model.entities = [author, book, tag]
        default:
            // Author is renamed Writer; born widens to 64 bits; country is new with a default; title is renamed
            // name and becomes non-optional with a default; a book's one author becomes several (many-to-many, in
            // order); tags are gone; publishers are new.
            author.name = "Writer"
            author.renamingIdentifier = "Author"
            book.name = "Book"
            let publisher = NSEntityDescription()
            publisher.name = "Publisher"
            let books = relationship("books", to: book, toMany: true)
            let writtenBy = relationship("authors", to: author, toMany: true, ordered: true)
            writtenBy.renamingIdentifier = "author"
            books.inverseRelationship = writtenBy
            writtenBy.inverseRelationship = books
            let name = attribute("name", .stringAttributeType, optional: false, default: "Untitled")
            name.renamingIdentifier = "title"
            author.properties = [
                attribute("name", .stringAttributeType), attribute("born", .integer64AttributeType),
                attribute("country", .stringAttributeType, default: "unknown"), books,
            ]
            book.properties = [name, writtenBy]
            publisher.properties = [attribute("name", .stringAttributeType)]
            model.entities = [author, book, publisher]
        }
        return model
    }

    /// Writes a version-1 library: two authors, three books (one without title), two tags.
    static func writeLibrary(to url: URL) throws {
        let coordinator = try SQLiteStack.coordinator(library(version: 1), at: url)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            @discardableResult func insert(_ entity: String, _ values: [String: Any]) -> NSManagedObject {
                let object = NSEntityDescription.insertNewObject(forEntityName: entity, into: context)
                for (key, value) in values { object.setValue(value, forKey: key) }
                return object
            }
            let ada = insert("Author", ["name": "Ada", "born": 1815])
            let bob = insert("Author", ["name": "Bob", "born": 1970])
            let poetry = insert("Tag", ["label": "poetry"])
            let maths = insert("Tag", ["label": "maths"])
            insert("Book", ["title": "Notes", "author": ada, "tags": Set([maths])])
            insert("Book", ["title": "Verses", "author": ada, "tags": Set([poetry, maths])])
            insert("Book", ["author": bob])
            try context.save()
        }
        try SQLiteStack.close(coordinator)
    }

    // MARK: Inference

    @Test func theInferredMappingFollowsApplesRules() throws {
        let mapping = try NSMappingModel.inferredMappingModel(
            forSourceModel: Self.library(version: 1), destinationModel: Self.library(version: 2))
        let byName = mapping.entityMappingsByName
        #expect(Set(byName.keys) == ["AuthorToWriter", "BookToBook", "Publisher", "Tag"])
        #expect(byName["AuthorToWriter"]?.mappingType == .transformEntityMappingType)
        #expect(byName["Publisher"]?.mappingType == .addEntityMappingType)
        #expect(byName["Tag"]?.mappingType == .removeEntityMappingType)
        let book = try #require(byName["BookToBook"])
        #expect(book.attributeMappings?.first { $0.name == "name" }?.valueExpression?.description == "$source.title")
        #expect(
            book.relationshipMappings?.first { $0.name == "authors" }?.valueExpression?.description
                == #"FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:", "author", "#
                + "$source.author)")
        #expect(
            byName["AuthorToWriter"]?.attributeMappings?.first { $0.name == "country" }?.valueExpression == nil)
        #expect(book.sourceExpression?.description.hasPrefix("FETCH(FUNCTION($manager, ") == true)
        // Unchanged models map each entity by copying.
        let same = try NSMappingModel.inferredMappingModel(
            forSourceModel: Self.library(version: 1), destinationModel: Self.library(version: 1))
        #expect(same.entityMappings.allSatisfy { $0.mappingType == .copyEntityMappingType })
    }

    @Test func changesLightweightMigrationCannotInferAreRefused() throws {
        func model(_ configure: (NSEntityDescription, NSEntityDescription, NSAttributeDescription) -> Void)
            -> NSManagedObjectModel
        {
            let value = CompanyModel.attribute("value", .integer32AttributeType)
            let first = NSEntityDescription()
            first.name = "First"
            first.properties = [value]
            let second = NSEntityDescription()
            second.name = "Second"
            second.properties = [CompanyModel.attribute("other", .stringAttributeType)]
            configure(first, second, value)
            let model = NSManagedObjectModel()
            model.entities = [first, second]
            return model
        }
        let base = model { _, _, _ in }
        #expect(throws: Never.self) {
            try NSMappingModel.inferredMappingModel(
                forSourceModel: base,
                destinationModel: model { _, _, value in value.attributeType = .doubleAttributeType })
        }
        for (change, reason) in [
            (model { _, _, value in value.attributeType = .dateAttributeType }, "Integer 32 to Date"),
            (model { first, second, _ in first.subentities = [second] }, "cannot merge entity hierarchies"),
        ] {
            #expect {
                try NSMappingModel.inferredMappingModel(forSourceModel: base, destinationModel: change)
            } throws: { error in
                let error = error as NSError
                return error.code == NSInferredMappingModelError && error.localizedDescription.contains(reason)
            }
        }
    }

    // MARK: Automatic migration, in place

    static var automatic: [AnyHashable: Any] {
        [NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true]
    }

    @Test func addingAStoreWithTheOptionsMigratesItInPlace() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store("Library.sqlite")
        try Self.writeLibrary(to: url)
        let before = try NSPersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: url)
        let keys = try RawSQLite.query(url, "SELECT Z_PK FROM ZBOOK ORDER BY Z_PK").compactMap { $0[0].integer }
        let recorder = SQLiteStatementRecorder()
        let coordinator = try SQLiteStack.coordinator(Self.library(version: 2), at: url, options: Self.automatic)
        recorder.stop()
        defer { try? SQLiteStack.close(coordinator) }
        // In place: INSERT … SELECT, no row read into objects.
        #expect(recorder.statements.contains { $0.hasPrefix(#"INSERT INTO "ZBOOK""#) && $0.contains("SELECT") })
        let store = try #require(coordinator.persistentStores.first)
        #expect(store.identifier == before[NSStoreUUIDKey] as? String)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            let books = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Book"))
            #expect(
                books.compactMap { ($0.objectID.uriRepresentation().lastPathComponent) }.sorted()
                    == keys.map { "p\($0)" })
            let titles = books.map { $0.value(forKey: "name") as? String }
            #expect(titles.sorted { ($0 ?? "") < ($1 ?? "") } == ["Notes", "Untitled", "Verses"])
            let writers = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Writer"))
            #expect(Set(writers.compactMap { $0.value(forKey: "name") as? String }) == ["Ada", "Bob"])
            #expect(writers.allSatisfy { $0.value(forKey: "country") as? String == "unknown" })
            let ada = try #require(writers.first { $0.value(forKey: "name") as? String == "Ada" })
            #expect((ada.value(forKey: "born") as? NSNumber)?.int64Value == 1815)
            #expect((ada.value(forKey: "books") as? Set<NSManagedObject>)?.count == 2)
            for book in books {
                #expect((book.value(forKey: "authors") as? NSOrderedSet)?.count == 1)
            }
            // New objects get keys after the old ones.
            let added = NSEntityDescription.insertNewObject(forEntityName: "Book", into: context)
            try context.save()
            #expect(added.objectID.uriRepresentation().lastPathComponent == "p\(keys.max()! + 1)")
        }
        try SQLiteStack.close(coordinator)
        // The schema is the one a new store of the destination model has, Core Data's tables included.
        let fresh = directory.store("Fresh.sqlite")
        try SQLiteStack.close(try SQLiteStack.coordinator(Self.library(version: 2), at: fresh))
        #expect(try RawSQLite.schema(url) == RawSQLite.schema(fresh))
        #expect(
            try RawSQLite.query(url, "SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY ORDER BY Z_ENT")
                == RawSQLite.query(fresh, "SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY ORDER BY Z_ENT"))
        let after = try NSPersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: url)
        #expect(Self.library(version: 2).isConfiguration(withName: nil, compatibleWithStoreMetadata: after))
        #expect(try RawSQLite.query(url, "SELECT COUNT(*) FROM Z_MODELCACHE") == [[.integer(1)]])
    }

    /// A migration stopped half-way — here by an injected I/O error after each number of statements in turn — leaves
    /// the store byte for byte as it was, and it still opens with its own model.
    @Test func aMigrationThatFailsHalfWayLeavesTheStoreByteIdentical() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store("Library.sqlite")
        try Self.writeLibrary(to: url)
        let before = MigrationCorpus.contents(of: url)
        let path = url.standardizedFileURL.path
        defer { SQLiteLightweightMigration.injectedFailures.withLock { $0[path] = nil } }
        for failAfter in [0, 3, 7, 12] {
            SQLiteLightweightMigration.injectedFailures.withLock { $0[path] = failAfter }
            #expect {
                try SQLiteStack.coordinator(Self.library(version: 2), at: url, options: Self.automatic)
            } throws: { error in
                let error = error as NSError
                return error.code == NSMigrationError && error.localizedDescription.contains("left as it was")
            }
            #expect(MigrationCorpus.contents(of: url) == before, "failing after \(failAfter) statements")
        }
        try SQLiteStack.close(try SQLiteStack.coordinator(Self.library(version: 1), at: url))
    }

    /// A process killed in the middle of a migration leaves the store as it was: the store file itself untouched
    /// (what the migration wrote is in the log, uncommitted), the data whole with the old model, and the migration
    /// runs again on the next open.
    @Test func aProcessKilledHalfWayThroughAMigrationLeavesTheStoreAsItWas() async throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store("Library.sqlite")
        try Self.writeLibrary(to: url)
        let before = try Data(contentsOf: url)
        await #expect(processExitsWith: .signal(SIGKILL)) { [path = url.path as String] in
            let url = URL(fileURLWithPath: path)
            SQLiteLightweightMigration.injectedKills.withLock { $0[url.standardizedFileURL.path] = 9 }
            _ = try? SQLiteStack.coordinator(
                LightweightMigrationTests.library(version: 2), at: url, options: LightweightMigrationTests.automatic)
        }
        #expect(try Data(contentsOf: url) == before)
        #expect(try RawSQLite.query(url, "PRAGMA integrity_check") == [[.text("ok")]])
        let old = try SQLiteStack.coordinator(Self.library(version: 1), at: url)
        let context = SQLiteStack.context(old)
        let books = try context.performAndWait {
            try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Book"))
        }
        #expect(books == 3)
        try SQLiteStack.close(old)
        try SQLiteStack.close(try SQLiteStack.coordinator(Self.library(version: 2), at: url, options: Self.automatic))
    }

    /// wibosco's version-4 model adds an attribute with a default to version 3: its Apple-written store migrates in
    /// place, every post keeping its color, and needs no migration afterwards (the project's own test).
    @Test(.enabled(if: SQLiteCorpus.isAvailable)) func wiboscosVersion3StoreMigratesInPlaceToVersion4() throws {
        let directory = SQLiteTestDirectory()
        let url = try directory.copyCorpusStore(MigrationCorpus.Wibosco.store("3"))
        let query = "SELECT p.Z_PK, p.ZPOSTID, p.ZDATE, c.Z_PK, c.ZHEX FROM ZPOST p JOIN ZCOLOR c ON c.ZPOST = p.Z_PK"
        let before = try RawSQLite.query(url, query + " ORDER BY p.Z_PK")
        #expect(before.count == 7995)
        let models = try MigrationCorpus.Wibosco.models()
        let description = NSPersistentStoreDescription(url: url)
        #expect(description.shouldMigrateStoreAutomatically && description.shouldInferMappingModelAutomatically)
        let container = NSPersistentContainer(name: "Posts", managedObjectModel: models[3])
        container.persistentStoreDescriptions = [description]
        var loadError: (any Error)?
        container.loadPersistentStores { _, error in loadError = error }
        #expect(loadError == nil)
        for store in container.persistentStoreCoordinator.persistentStores {
            try container.persistentStoreCoordinator.remove(store)
        }
        #expect(try RawSQLite.query(url, query + " ORDER BY p.Z_PK") == before)
        #expect(try RawSQLite.query(url, "SELECT COUNT(*) FROM ZPOST WHERE ZHIDE = 0") == [[.integer(7995)]])
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: url)
        #expect(models[3].isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        #expect(metadata[NSStoreUUIDKey] as? String == "D5151864-19A8-4014-AEC0-0DD1501E4140")
        // The store's schema is what Apple's framework wrote for version 4 (the WAL store of the corpus).
        let apple = try RawSQLite.corpusSchema(
            SQLiteCorpus.root.appendingPathComponent(
                MigrationCorpus.Wibosco.storeFolder + "/CoreDataMigration_Example_WAL.schema.txt"))
        #expect(try RawSQLite.schema(url) == apple)
    }

    /// Without inference, a store whose mapping model is nowhere cannot migrate (134140); with the description's
    /// options off, it does not try (134100). Either way it is left as it was.
    @Test(.enabled(if: SQLiteCorpus.isAvailable)) func withoutInferenceOrMigrationTheStoreIsRefused() throws {
        let directory = SQLiteTestDirectory()
        let url = try directory.copyCorpusStore(MigrationCorpus.Wibosco.store("3"))
        let before = MigrationCorpus.contents(of: url)
        let model = try MigrationCorpus.Wibosco.models()[3]
        for (migrate, infer, code) in [
            (true, false, NSMigrationMissingMappingModelError),
            (false, true, NSPersistentStoreIncompatibleVersionHashError),
        ] {
            let description = NSPersistentStoreDescription(url: url)
            description.shouldMigrateStoreAutomatically = migrate
            description.shouldInferMappingModelAutomatically = infer
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            var loadError: NSError?
            coordinator.addPersistentStore(with: description) { _, error in loadError = error as NSError? }
            #expect(loadError?.code == code)
            #expect(MigrationCorpus.contents(of: url) == before)
        }
    }

    /// The model a store was made with comes from the program's bundles or, for lightweight migration, from the
    /// store's own copy; a store with neither cannot migrate (134130).
    @Test func aStoreWhoseModelIsNowhereCannotMigrate() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store("Library.sqlite")
        try Self.writeLibrary(to: url)
        try RawSQLite.execute(url, "DELETE FROM Z_MODELCACHE")
        #expect {
            try SQLiteStack.coordinator(Self.library(version: 2), at: url, options: Self.automatic)
        } throws: { ($0 as NSError).code == NSMigrationMissingSourceModelError }
    }

    /// A change the SQL migration does not make (here integers becoming decimals) migrates object by object into a
    /// copy, which then replaces the store.
    @Test func aChangeSQLDoesNotMakeMigratesObjectByObject() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store("Library.sqlite")
        try Self.writeLibrary(to: url)
        let decimal = Self.library(version: 1)
        decimal.entitiesByName["Author"]?.attributesByName["born"]?.attributeType = .decimalAttributeType
        let coordinator = try SQLiteStack.coordinator(decimal, at: url, options: Self.automatic)
        defer { try? SQLiteStack.close(coordinator) }
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Author")
            request.predicate = NSPredicate(format: "name == 'Ada'")
            let ada = try #require(try context.fetch(request).first)
            #expect((ada.value(forKey: "born") as? NSDecimalNumber)?.intValue == 1815)
            #expect((ada.value(forKey: "books") as? Set<NSManagedObject>)?.count == 2)
            let tags = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Tag"))
            #expect(tags.map { ($0.value(forKey: "books") as? Set<NSManagedObject>)?.count ?? 0 }.sorted() == [1, 2])
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        #expect(!files.contains { $0.contains("migrating") })
    }
}
