import Foundation
import OpenCoreData
import StoreConformance
import Testing

@testable import OpenCoreDataCore
@testable import OpenCoreDataPostgreSQL

/// Lightweight migration of a PostgreSQL store in place, as a store is added with
/// `NSMigratePersistentStoresAutomaticallyOption` and `NSInferMappingModelAutomaticallyOption` (the defaults of
/// `NSPersistentStoreDescription`): in one transaction, so that a failure leaves the schema as it was.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, Comment(rawValue: PostgreSQLTestServer.skipMessage)))
struct PostgreSQLMigrationTests {
    static var migrating: [AnyHashable: Any] {
        [NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true]
    }

    static func attribute(_ name: String, _ type: NSAttributeType, optional: Bool = true, default value: Any? = nil)
        -> NSAttributeDescription
    {
        let attribute = NSAttributeDescription()
        attribute.name = name
        attribute.attributeType = type
        attribute.isOptional = optional
        attribute.defaultValue = value
        return attribute
    }

    static func relationship(_ name: String, to destination: NSEntityDescription, toMany: Bool, ordered: Bool = false)
        -> NSRelationshipDescription
    {
        let relationship = NSRelationshipDescription()
        relationship.name = name
        relationship.destinationEntity = destination
        relationship.maxCount = toMany ? 0 : 1
        relationship.isOrdered = ordered
        return relationship
    }

    /// A library in three versions. 1: authors with books (one author each), books with tags (many-to-many).
    /// 2: Author renamed Writer, `born` widened to 64 bits and `rating` from integer to double, `country` new with a
    /// default, `title` renamed `name` and non-optional with a default, a book's author becomes an ordered to-many,
    /// tags gone, publishers new (and unique by name). 3: version 2 with a new non-optional `isbn` without default.
    static func library(version: Int) -> NSManagedObjectModel {
        let author = NSEntityDescription()
        let book = NSEntityDescription()
        let model = NSManagedObjectModel()
        for entity in [author, book] { entity.managedObjectClassName = "NSManagedObject" }
        if version == 1 {
            author.name = "Author"
            book.name = "Book"
            let tag = NSEntityDescription()
            tag.name = "Tag"
            tag.managedObjectClassName = "NSManagedObject"
            let books = relationship("books", to: book, toMany: true)
            let writtenBy = relationship("author", to: author, toMany: false)
            books.inverseRelationship = writtenBy
            writtenBy.inverseRelationship = books
            let tags = relationship("tags", to: tag, toMany: true)
            let tagged = relationship("books", to: book, toMany: true)
            tags.inverseRelationship = tagged
            tagged.inverseRelationship = tags
            author.properties = [
                attribute("name", .stringAttributeType), attribute("born", .integer16AttributeType),
                attribute("rating", .integer32AttributeType), books,
            ]
            book.properties = [attribute("title", .stringAttributeType), writtenBy, tags]
            tag.properties = [attribute("label", .stringAttributeType), tagged]
            model.entities = [author, book, tag]
            return model
        }
        author.name = "Writer"
        author.renamingIdentifier = "Author"
        book.name = "Book"
        let publisher = NSEntityDescription()
        publisher.name = "Publisher"
        publisher.managedObjectClassName = "NSManagedObject"
        let books = relationship("books", to: book, toMany: true)
        let writtenBy = relationship("authors", to: author, toMany: true, ordered: true)
        writtenBy.renamingIdentifier = "author"
        books.inverseRelationship = writtenBy
        writtenBy.inverseRelationship = books
        let name = attribute("name", .stringAttributeType, optional: false, default: "Untitled")
        name.renamingIdentifier = "title"
        author.properties = [
            attribute("name", .stringAttributeType), attribute("born", .integer64AttributeType),
            attribute("rating", .doubleAttributeType), attribute("country", .stringAttributeType, default: "unknown"),
            books,
        ]
        book.properties = [name, writtenBy]
        if version >= 3 { book.properties.append(attribute("isbn", .stringAttributeType, optional: false)) }
        publisher.properties = [attribute("name", .stringAttributeType)]
        publisher.uniquenessConstraints = [["name"]]
        model.entities = [author, book, publisher]
        return model
    }

    /// Writes a version-1 library at `url`: two authors, three books (one without a title), two tags.
    static func writeLibrary(at url: URL) throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: library(version: 1))
        let store = try coordinator.addPersistentStore(
            ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: nil)
        let context = NSManagedObjectContext.conformance(coordinator)
        try context.run {
            let ada = context.make("Author", ["name": "Ada", "born": 1815, "rating": 5])
            let bob = context.make("Author", ["name": "Bob", "born": 1970])
            let poetry = context.make("Tag", ["label": "poetry"])
            let maths = context.make("Tag", ["label": "maths"])
            context.make("Book", ["title": "Notes", "author": ada, "tags": Set([maths])])
            context.make("Book", ["title": "Verses", "author": ada, "tags": Set([poetry, maths])])
            context.make("Book", ["author": bob])
            try context.save()
        }
        try coordinator.remove(store)
    }

    /// Checks a library migrated to version 2: every row, renamed and converted, with its relationships.
    static func expectMigratedLibrary(_ coordinator: NSPersistentStoreCoordinator) throws {
        let context = NSManagedObjectContext.conformance(coordinator)
        try context.run {
            let writers = try context.objects("Writer", sortedBy: ["name"])
            #expect(writers.map { $0.value(forKey: "name") as? String } == ["Ada", "Bob"])
            #expect(writers.map { ($0.value(forKey: "born") as? NSNumber)?.int64Value } == [1815, 1970])
            #expect(writers.map { ($0.value(forKey: "rating") as? NSNumber)?.doubleValue } == [5, nil])
            #expect(writers.map { $0.value(forKey: "country") as? String } == ["unknown", "unknown"])
            let books = try context.objects("Book", sortedBy: ["name"])
            #expect(books.map { $0.value(forKey: "name") as? String } == ["Notes", "Untitled", "Verses"])
            let authors = books.map { book in
                ((book.value(forKey: "authors") as? NSOrderedSet)?.array ?? []).compactMap {
                    ($0 as? NSManagedObject)?.value(forKey: "name") as? String
                }
            }
            #expect(authors == [["Ada"], ["Bob"], ["Ada"]])
            let adasBooks = (writers[0].value(forKey: "books") as? Set<NSManagedObject>)?.count
            #expect(adasBooks == 2)
            // New objects get keys that do not collide with the migrated ones.
            context.make("Publisher", ["name": "Penguin"])
            context.make("Book", ["name": "Later", "authors": NSOrderedSet(array: [writers[1]])])
            try context.save()
            #expect(try context.objects("Book").count == 4)
        }
    }

    @Test func aStoreOfAnOlderModelVersionMigratesInPlaceWhenAdded() throws {
        let url = try #require(PostgreSQLTestServer.newURL())
        defer { PostgreSQLTestServer.drop(url) }
        try Self.writeLibrary(at: url)
        let version2 = Self.library(version: 2)
        let before = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            ofType: PostgreSQLStoreType, at: url, options: nil)
        #expect(!version2.isConfiguration(withName: nil, compatibleWithStoreMetadata: before))

        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: version2)
        try coordinator.addPersistentStore(
            ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: Self.migrating)
        try Self.expectMigratedLibrary(coordinator)

        let after = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            ofType: PostgreSQLStoreType, at: url, options: nil)
        #expect(version2.isConfiguration(withName: nil, compatibleWithStoreMetadata: after))
        #expect(after[NSStoreUUIDKey] as? String == before[NSStoreUUIDKey] as? String)
    }

    @Test func aContainerMigratesWithTheDescriptionsDefaults() throws {
        let url = try #require(PostgreSQLTestServer.newURL())
        defer { PostgreSQLTestServer.drop(url) }
        try Self.writeLibrary(at: url)
        let container = NSPersistentContainer(name: "Library", managedObjectModel: Self.library(version: 2))
        let description = NSPersistentStoreDescription(url: url)
        description.type = PostgreSQLStoreType
        #expect(description.shouldMigrateStoreAutomatically && description.shouldInferMappingModelAutomatically)
        container.persistentStoreDescriptions = [description]
        var loadError: Error?
        container.loadPersistentStores { _, error in loadError = error }
        #expect(loadError == nil)
        try Self.expectMigratedLibrary(container.persistentStoreCoordinator)
    }

    @Test func withoutMigrationOptionsTheStoreIsRefusedAndLeftAsItWas() throws {
        let url = try #require(PostgreSQLTestServer.newURL())
        defer { PostgreSQLTestServer.drop(url) }
        try Self.writeLibrary(at: url)
        let before = try PostgreSQLSchemaSnapshot(url)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.library(version: 2))
        #expect {
            try coordinator.addPersistentStore(
                ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: nil)
        } throws: { error in
            let error = error as NSError
            return error.domain == NSCocoaErrorDomain && error.code == NSPersistentStoreIncompatibleVersionHashError
        }
        #expect(try PostgreSQLSchemaSnapshot(url) == before)
    }

    @Test func aMigrationThatFailsLeavesTheSchemaRowsAndMetadataAsTheyWere() throws {
        let url = try #require(PostgreSQLTestServer.newURL())
        defer { PostgreSQLTestServer.drop(url) }
        try Self.writeLibrary(at: url)
        let before = try PostgreSQLSchemaSnapshot(url)
        // Version 3 adds a non-optional attribute without a default value: the existing books would have none.
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.library(version: 3))
        #expect {
            try coordinator.addPersistentStore(
                ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: Self.migrating)
        } throws: { error in
            let error = error as NSError
            let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError
            return error.domain == NSCocoaErrorDomain && error.code == NSMigrationError
                && underlying?.code == NSValidationMissingMandatoryPropertyError
                && error.localizedDescription.contains("isbn")
        }
        #expect(coordinator.persistentStores.isEmpty)
        #expect(try PostgreSQLSchemaSnapshot(url) == before)

        // The store still opens with its own model, every row in place.
        let original = NSPersistentStoreCoordinator(managedObjectModel: Self.library(version: 1))
        try original.addPersistentStore(ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: nil)
        let context = NSManagedObjectContext.conformance(original)
        try context.run {
            let counts = try [context.objects("Book").count, context.objects("Tag").count]
            #expect(counts == [3, 2])
        }
    }

    @Test func twoProcessesAddingTheOldSchemaAtOnceMigrateItOnce() throws {
        let url = try #require(PostgreSQLTestServer.newURL())
        defer { PostgreSQLTestServer.drop(url) }
        try Self.writeLibrary(at: url)
        let version2 = Self.library(version: 2)
        // Two coordinators stand for two processes: each reads the old metadata, one migrates under the schema's
        // lock, the other waits for it and finds the schema migrated.
        let coordinators = [
            NSPersistentStoreCoordinator(managedObjectModel: version2),
            NSPersistentStoreCoordinator(managedObjectModel: version2),
        ]
        let errors = PostgreSQLMigrationRecorder()
        DispatchQueue.concurrentPerform(iterations: coordinators.count) { index in
            do {
                try coordinators[index].addPersistentStore(
                    ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: Self.migrating)
            } catch {
                errors.append("\(error)")
            }
        }
        #expect(errors.all.isEmpty, "\(errors.all)")
        let context = NSManagedObjectContext.conformance(coordinators[1])
        try context.run {
            let counts = try [context.objects("Writer").count, context.objects("Book").count]
            #expect(counts == [2, 3])
        }
        try Self.expectMigratedLibrary(coordinators[0])
    }

    /// Where the child processes find the store to migrate: they inherit the test run's environment.
    static let storeVariable = "OPENCOREDATA_POSTGRES_MIGRATING_STORE"

    @Test func threeRealProcessesAddingTheOldSchemaAtOnceAllOpenItMigrated() async throws {
        let url = try #require(PostgreSQLTestServer.newURL())
        defer { PostgreSQLTestServer.drop(url) }
        try Self.writeLibrary(at: url)
        setenv(Self.storeVariable, url.absoluteString, 1)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<3 {
                group.addTask {
                    await #expect(processExitsWith: .success) {
                        try PostgreSQLMigrationTests.addMigratingStore()
                    }
                }
            }
        }
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.library(version: 2))
        try coordinator.addPersistentStore(ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: nil)
        try Self.expectMigratedLibrary(coordinator)
    }

    /// In a child process: adds the store with the migration options and checks that it holds the migrated rows.
    static func addMigratingStore() throws {
        guard let text = ProcessInfo.processInfo.environment[storeVariable], let url = URL(string: text) else {
            exit(2)
        }
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: library(version: 2))
        try coordinator.addPersistentStore(
            ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: migrating)
        let context = NSManagedObjectContext.conformance(coordinator)
        try context.run {
            guard try context.objects("Writer").count == 2, try context.objects("Book").count == 3 else { exit(3) }
        }
    }

    @Test func stagedMigrationRunsItsLightweightStagesInPlace() throws {
        let url = try #require(PostgreSQLTestServer.newURL())
        defer { PostgreSQLTestServer.drop(url) }
        try Self.writeLibrary(at: url)
        let version1 = Self.library(version: 1)
        let version2 = Self.library(version: 2)
        // Version 2 with a rating that became an integer again, and a nickname.
        let version3 = Self.library(version: 2)
        let writer = try #require(version3.entitiesByName["Writer"])
        writer.properties =
            writer.properties.filter { $0.name != "rating" } + [
                Self.attribute("rating", .integer64AttributeType), Self.attribute("nickname", .stringAttributeType),
            ]
        let calls = PostgreSQLMigrationRecorder()
        let first = NSCustomMigrationStage(
            migratingFrom: NSManagedObjectModelReference(model: version1, versionChecksum: version1.versionChecksum),
            to: NSManagedObjectModelReference(model: version2, versionChecksum: version2.versionChecksum))
        first.didMigrateHandler = { manager, _ in
            let context = try #require(manager.container).newBackgroundContext()
            try context.run {
                for writer in try context.objects("Writer") {
                    writer.setValue(
                        (writer.value(forKey: "rating") as? NSNumber).map { $0.doubleValue + 0.75 }, forKey: "rating")
                }
                try context.save()
            }
            calls.append("did migrate")
        }
        let second = NSLightweightMigrationStage([version2.versionChecksum, version3.versionChecksum])
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: version3)
        try coordinator.addPersistentStore(
            ofType: PostgreSQLStoreType, configurationName: nil, at: url,
            options: [NSPersistentStoreStagedMigrationManagerOptionKey: NSStagedMigrationManager([first, second])])
        #expect(calls.all.count == 1)
        let context = NSManagedObjectContext.conformance(coordinator)
        try context.run {
            let writers = try context.objects("Writer", sortedBy: ["name"])
            // 5 + 0.75 after the first stage, truncated to an integer by the second.
            #expect(writers.map { ($0.value(forKey: "rating") as? NSNumber)?.int64Value } == [5, nil])
            #expect(writers.map { $0.value(forKey: "nickname") as? String } == [nil, nil])
            #expect(try context.objects("Book").count == 3)
        }
    }
}

extension PostgreSQLMigrationTests {
    /// People with vehicles, vehicles a hierarchy. 1: Person, Vehicle with Bike and Car. 2: a new root entity (Garage)
    /// renumbers every entity, Truck joins the hierarchy, Bike leaves it for a table of its own, and vehicles get a
    /// fetch index on their name.
    static func garage(version: Int) -> NSManagedObjectModel {
        func entity(_ name: String, _ properties: [NSPropertyDescription]) -> NSEntityDescription {
            let entity = NSEntityDescription()
            entity.name = name
            entity.managedObjectClassName = "NSManagedObject"
            entity.properties = properties
            return entity
        }
        let name = attribute("name", .stringAttributeType)
        let vehicle = entity("Vehicle", [name])
        let car = entity("Car", [attribute("wheels", .integer16AttributeType)])
        let bike = entity("Bike", [attribute("name", .stringAttributeType)])
        let person = entity("Person", [attribute("name", .stringAttributeType)])
        let drives = relationship("vehicle", to: vehicle, toMany: false)
        let drivers = relationship("drivers", to: person, toMany: true)
        drives.inverseRelationship = drivers
        drivers.inverseRelationship = drives
        person.properties.append(drives)
        vehicle.properties.append(drivers)
        let model = NSManagedObjectModel()
        if version == 1 {
            bike.properties = []
            vehicle.subentities = [bike, car]
            model.entities = [person, vehicle, bike, car]
            return model
        }
        let truck = entity("Truck", [attribute("load", .doubleAttributeType)])
        vehicle.subentities = [car, truck]
        vehicle.indexes = [
            NSFetchIndexDescription(
                name: "byName", elements: [NSFetchIndexElementDescription(property: name, collationType: .binary)])
        ]
        model.entities = [
            entity("Garage", [attribute("city", .stringAttributeType)]), person, vehicle, bike, car, truck,
        ]
        return model
    }

    @Test func entitiesMoveInAndOutOfHierarchiesAndKeepTheirKeys() throws {
        let url = try #require(PostgreSQLTestServer.newURL())
        defer { PostgreSQLTestServer.drop(url) }
        let old = NSPersistentStoreCoordinator(managedObjectModel: Self.garage(version: 1))
        let store = try old.addPersistentStore(
            ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: nil)
        var keys: [String: String] = [:]
        let writer = NSManagedObjectContext.conformance(old)
        try writer.run {
            let mini = writer.make("Car", ["name": "Mini", "wheels": 4])
            let bike = writer.make("Bike", ["name": "Brompton"])
            writer.make("Person", ["name": "Ann", "vehicle": mini])
            writer.make("Person", ["name": "Ben"])
            try writer.save()
            keys = [
                "Mini": mini.objectID.uriRepresentation().lastPathComponent,
                "Brompton": bike.objectID.uriRepresentation().lastPathComponent,
            ]
        }
        try old.remove(store)

        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.garage(version: 2))
        try coordinator.addPersistentStore(
            ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: Self.migrating)
        let context = NSManagedObjectContext.conformance(coordinator)
        try context.run {
            let ann = try #require(try context.objects("Person", "name == %@", ["Ann"]).first)
            let mini = try #require(ann.value(forKey: "vehicle") as? NSManagedObject)
            #expect(mini.entity.name == "Car")
            #expect((mini.value(forKey: "wheels") as? NSNumber)?.intValue == 4)
            #expect(mini.objectID.uriRepresentation().lastPathComponent == keys["Mini"])
            let bikes = try context.objects("Bike")
            #expect(bikes.map { $0.value(forKey: "name") as? String } == ["Brompton"])
            #expect(bikes.first?.objectID.uriRepresentation().lastPathComponent == keys["Brompton"])
            let vehicles = try context.objects("Vehicle")
            #expect(vehicles.map { $0.objectID } == [mini.objectID])
            let drivers = try context.objects("Person", "vehicle.name == %@", ["Mini"])
            #expect(drivers.map { $0.value(forKey: "name") as? String } == ["Ann"])
            context.make("Truck", ["name": "Unimog", "load": 2.5, "drivers": Set([ann])])
            context.make("Garage", ["city": "Leeds"])
            context.make("Bike", ["name": "Moulton"])
            try context.save()
        }
        let reader = NSManagedObjectContext.conformance(coordinator)
        try reader.run {
            let ann = try #require(try reader.objects("Person", "name == %@", ["Ann"]).first)
            #expect((ann.value(forKey: "vehicle") as? NSManagedObject)?.entity.name == "Truck")
            #expect(try reader.objects("Bike").count == 2)
        }
        let indexes = try PostgreSQLSchemaSnapshot(url).indexes
        #expect(indexes.contains { $0.contains("ON \(Self.schema(of: url)).\"ZVEHICLE\" USING btree (\"ZNAME\")") })
    }

    @Test func theMigratedSchemaHasTheNewVersionsUniquenessConstraints() throws {
        let url = try #require(PostgreSQLTestServer.newURL())
        defer { PostgreSQLTestServer.drop(url) }
        try Self.writeLibrary(at: url)
        let coordinators = [
            NSPersistentStoreCoordinator(managedObjectModel: Self.library(version: 2)),
            NSPersistentStoreCoordinator(managedObjectModel: Self.library(version: 2)),
        ]
        for coordinator in coordinators {
            try coordinator.addPersistentStore(
                ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: Self.migrating)
        }
        // Two writers that each checked the name against what was saved: the database's unique index stops the
        // second.
        let contexts = coordinators.map(NSManagedObjectContext.conformance)
        for context in contexts {
            try context.run { context.make("Publisher", ["name": "Penguin"]) }
        }
        try contexts[0].run { try contexts[0].save() }
        #expect {
            try contexts[1].run { try contexts[1].save() }
        } throws: { error in
            (error as NSError).code == NSManagedObjectConstraintMergeError
        }
    }

    /// A mapping model that is not inferred: `$source.born + 100`, and a book without a title named so.
    static func customMapping(from source: NSManagedObjectModel, to destination: NSManagedObjectModel, naming: Bool)
        throws -> NSMappingModel
    {
        let mapping = NSMappingModel()
        mapping.entityMappings = try NSMappingModel.inferredMappingModel(
            forSourceModel: source, destinationModel: destination
        ).entityMappings
        let writer = try #require(mapping.entityMappings.first { $0.destinationEntityName == "Writer" })
        let born = try #require(writer.attributeMappings?.first { $0.name == "born" })
        born.valueExpression = NSExpression(format: "$source.born + 100")
        if naming {
            let book = try #require(mapping.entityMappings.first { $0.destinationEntityName == "Book" })
            let name = try #require(book.attributeMappings?.first { $0.name == "name" })
            name.valueExpression = NSExpression(format: "TERNARY($source.title != nil, $source.title, 'No title')")
        }
        return mapping
    }

    /// The schemas a migration object by object writes before they take a store's place.
    static func stagingSchemas(at url: URL) throws -> [String] {
        let connection = try PostgreSQLConnection(try PostgreSQLConfiguration(url: url))
        let result = try connection.query("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'ocd_migrating_%'")
        return (0..<result.rowCount).compactMap { result.text($0, 0) }
    }

    /// A migration whose connection the server ends half-way (as when the process is killed, or the server
    /// restarts): a table was renamed already when it happened, and the transaction takes that back with the rest.
    @Test func aMigrationCutOffHalfWayLeavesTheSchemaAsItWas() throws {
        let url = try #require(PostgreSQLTestServer.newURL())
        defer { PostgreSQLTestServer.drop(url) }
        try Self.writeLibrary(at: url)
        let before = try PostgreSQLSchemaSnapshot(url)
        let schema = Self.schema(of: url)
        // The migration renames ZAUTHOR, then waits for ZBOOK, which this connection holds.
        let blocker = try PostgreSQLConnection(try PostgreSQLConfiguration(url: url))
        try blocker.execute("BEGIN")
        try blocker.execute("LOCK TABLE \(quoted(schema)).\"ZBOOK\" IN ACCESS EXCLUSIVE MODE")
        let errors = PostgreSQLMigrationRecorder()
        let done = DispatchGroup()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.library(version: 2))
        DispatchQueue.global().async(group: done) {
            do {
                try coordinator.addPersistentStore(
                    ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: Self.migrating)
            } catch {
                let error = error as NSError
                errors.append("\(error.domain) \(error.code)")
            }
        }
        // Watched from a connection of its own: a transaction sees the server's activity as it was at its start.
        let watcher = try PostgreSQLConnection(try PostgreSQLConfiguration(url: url))
        var terminated = false
        for _ in 0..<300 where !terminated {
            let result = try watcher.query(
                """
                SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE wait_event_type = 'Lock' \
                AND query LIKE '%' || $1 || '%ZBOOK%RENAME%'
                """, [schema])
            terminated = result.rowCount > 0
            if !terminated { Thread.sleep(forTimeInterval: 0.05) }
        }
        try blocker.execute("ROLLBACK")
        done.wait()
        #expect(terminated)
        #expect(errors.all == ["\(NSCocoaErrorDomain) \(NSMigrationError)"])
        #expect(coordinator.persistentStores.isEmpty)
        #expect(try PostgreSQLSchemaSnapshot(url) == before)
    }

    /// White-box: a table whose rows and columns the new version keeps as they are is not copied (its identity in
    /// the catalog stays), while the tables that change are rebuilt.
    @Test func tablesTheNewVersionKeepsAreNotCopied() throws {
        let url = try #require(PostgreSQLTestServer.newURL())
        defer { PostgreSQLTestServer.drop(url) }
        try Self.writeLibrary(at: url)
        let version = Self.library(version: 1)
        let book = try #require(version.entitiesByName["Book"])
        book.properties.append(Self.attribute("pages", .integer32AttributeType, optional: false, default: 0))
        try #require(version.entitiesByName["Author"]).uniquenessConstraints = [["name"]]
        let zine = NSEntityDescription()
        zine.name = "Zine"
        zine.managedObjectClassName = "NSManagedObject"
        zine.properties = [Self.attribute("title", .stringAttributeType)]
        version.entities.append(zine)
        let tables = ["ZAUTHOR", "ZBOOK", "Z_2TAGS"]
        let before = try Self.tableIdentities(tables, at: url)
        #expect(before.count == tables.count)

        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: version)
        try coordinator.addPersistentStore(
            ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: Self.migrating)
        let after = try Self.tableIdentities(tables, at: url)
        #expect(after["ZAUTHOR"] == before["ZAUTHOR"])
        #expect(after["Z_2TAGS"] == before["Z_2TAGS"])
        #expect(after["ZBOOK"] != before["ZBOOK"])
        // The kept table has the new version's indexes: its uniqueness constraint is a unique index.
        let indexes = try PostgreSQLSchemaSnapshot(url).indexes
        #expect(
            indexes.contains {
                $0.contains("CREATE UNIQUE INDEX") && $0.contains("\"ZAUTHOR\" USING btree (\"ZNAME\")")
            })
        let context = NSManagedObjectContext.conformance(coordinator)
        try context.run {
            let books = try context.objects("Book", sortedBy: ["title"])
            #expect(books.map { ($0.value(forKey: "pages") as? NSNumber)?.intValue } == [0, 0, 0])
            let tags = books.map { (($0.value(forKey: "tags") as? Set<NSManagedObject>) ?? []).count }
            #expect(tags == [0, 1, 2])
            #expect(
                books.map { ($0.value(forKey: "author") as? NSManagedObject)?.value(forKey: "name") as? String }
                    == ["Bob", "Ada", "Ada"])
            context.make("Zine", ["title": "Zap"])
            try context.save()
        }
    }

    /// The catalog's identity (oid) of each of `tables` in the store's schema.
    static func tableIdentities(_ tables: [String], at url: URL) throws -> [String: String] {
        let connection = try PostgreSQLConnection(try PostgreSQLConfiguration(url: url))
        var identities: [String: String] = [:]
        for table in tables {
            let result = try connection.query(
                "SELECT to_regclass($1)::oid::text", [quoted(schema(of: url)) + "." + quoted(table)])
            identities[table] = result.text(0, 0)
        }
        return identities
    }

    /// Many rows migrate set-based, every one accounted for (with `com.apple.CoreData.MigrationDebug=1` the log says
    /// how long the migration took).
    @Test func manyRowsMigrateWithEveryValueConverted() throws {
        let url = try #require(PostgreSQLTestServer.newURL())
        defer { PostgreSQLTestServer.drop(url) }
        let count = 50_000
        let old = NSPersistentStoreCoordinator(managedObjectModel: Self.library(version: 1))
        let store = try old.addPersistentStore(
            ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: nil)
        let writer = NSManagedObjectContext.conformance(old)
        try writer.run {
            var index = 0
            let insert = NSBatchInsertRequest(entityName: "Author") { (author: NSMutableDictionary) in
                guard index < count else { return true }
                author["name"] = "Author \(index)"
                author["born"] = index % 2000
                author["rating"] = index % 10
                index += 1
                return false
            }
            _ = try writer.execute(insert)
        }
        try old.remove(store)

        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.library(version: 2))
        try coordinator.addPersistentStore(
            ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: Self.migrating)
        let context = NSManagedObjectContext.conformance(coordinator)
        try context.run {
            let all = NSFetchRequest<NSManagedObject>(entityName: "Writer")
            let converted = NSFetchRequest<NSManagedObject>(entityName: "Writer")
            converted.predicate = NSPredicate(format: "rating == 7.0 AND country == 'unknown'")
            let counts = try [context.count(for: all), context.count(for: converted)]
            #expect(counts == [count, count / 10])
        }
    }

    @Test func historyRecordedBeforeTheMigrationNamesTheMigratedEntitiesAndProperties() throws {
        let url = try #require(PostgreSQLTestServer.newURL())
        defer { PostgreSQLTestServer.drop(url) }
        let tracking: [AnyHashable: Any] = [NSPersistentHistoryTrackingKey: true]
        let old = NSPersistentStoreCoordinator(managedObjectModel: Self.library(version: 1))
        let store = try old.addPersistentStore(
            ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: tracking)
        let writer = NSManagedObjectContext.conformance(old)
        try writer.run {
            let ada = writer.make("Author", ["name": "Ada", "born": 1815])
            let tag = writer.make("Tag", ["label": "maths"])
            try writer.save()
            ada.setValue("Ada L.", forKey: "name")
            try writer.save()
            writer.delete(tag)
            try writer.save()
        }
        try old.remove(store)

        // Author becomes Writer under another entity number, and its properties move (country and rating are new,
        // and sort among them); Tag goes, and its changes with it.
        let coordinator = NSPersistentStoreCoordinator(
            managedObjectModel: Self.library(version: 2))
        try coordinator.addPersistentStore(
            ofType: PostgreSQLStoreType, configurationName: nil, at: url,
            options: Self.migrating.merging(tracking) { first, _ in first })
        let context = NSManagedObjectContext.conformance(coordinator)
        let transactions = try HistoryStack.transactions(context)
        #expect(transactions.count == 3)
        let changes = transactions.flatMap { $0.changes ?? [] }
        #expect(changes.map(\.changeType) == [.insert, .update])
        #expect(Set(changes.map { $0.changedObjectID.entity.name ?? "" }) == ["Writer"])
        #expect(changes.last?.updatedProperties?.map(\.name) == ["name"])
        try context.run {
            let ada = try context.existingObject(with: try #require(changes.first?.changedObjectID))
            #expect(ada.value(forKey: "name") as? String == "Ada L.")
        }
    }

    /// What a mapping model that is not inferred can do with a PostgreSQL store: `NSMigrationManager` migrates it
    /// object by object into another schema (or another store), and the source is left as it was.
    @Test func theMigrationManagerMigratesObjectByObjectIntoAnotherSchema() throws {
        let url = try #require(PostgreSQLTestServer.newURL())
        let destinationURL = try #require(PostgreSQLTestServer.newURL())
        defer {
            PostgreSQLTestServer.drop(url)
            PostgreSQLTestServer.drop(destinationURL)
        }
        try Self.writeLibrary(at: url)
        let before = try PostgreSQLSchemaSnapshot(url)
        let source = Self.library(version: 1)
        let destination = Self.library(version: 2)
        let mapping = NSMappingModel()
        mapping.entityMappings = try NSMappingModel.inferredMappingModel(
            forSourceModel: source, destinationModel: destination
        ).entityMappings
        let writer = try #require(mapping.entityMappings.first { $0.destinationEntityName == "Writer" })
        let born = try #require(writer.attributeMappings?.first { $0.name == "born" })
        born.valueExpression = NSExpression(format: "$source.born + 100")
        let book = try #require(mapping.entityMappings.first { $0.destinationEntityName == "Book" })
        let name = try #require(book.attributeMappings?.first { $0.name == "name" })
        name.valueExpression = NSExpression(format: "TERNARY($source.title != nil, $source.title, 'No title')")
        let manager = NSMigrationManager(sourceModel: source, destinationModel: destination)
        try manager.migrateStore(
            from: url, type: NSPersistentStore.StoreType(rawValue: PostgreSQLStoreType), mapping: mapping,
            to: destinationURL, type: NSPersistentStore.StoreType(rawValue: PostgreSQLStoreType))
        #expect(try PostgreSQLSchemaSnapshot(url) == before)

        // The new store continues the old one: the same UUID.
        let identifiers = try [url, destinationURL].map {
            try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: PostgreSQLStoreType, at: $0)[
                NSStoreUUIDKey] as? String
        }
        #expect(identifiers[0] != nil && identifiers[0] == identifiers[1])
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: destination)
        try coordinator.addPersistentStore(
            ofType: PostgreSQLStoreType, configurationName: nil, at: destinationURL, options: nil)
        let context = NSManagedObjectContext.conformance(coordinator)
        try context.run {
            let writers = try context.objects("Writer", sortedBy: ["name"])
            #expect(writers.map { ($0.value(forKey: "born") as? NSNumber)?.int64Value } == [1915, 2070])
            let books = try context.objects("Book", sortedBy: ["name"])
            #expect(books.map { $0.value(forKey: "name") as? String } == ["No title", "Notes", "Verses"])
            #expect(books.map { (($0.value(forKey: "authors") as? NSOrderedSet)?.count ?? 0) } == [1, 1, 1])
        }
    }

    static func schema(of url: URL) -> String {
        URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "schema" }?.value ?? ""
    }
}

extension PostgreSQLMigrationTests {
    /// Migrations with a mapping model that is not inferred, one at a time: each checks that no staging schema (of
    /// any name) is left in the database.
    @Suite(.serialized) struct MappingModels {
        /// Migrates the library at `url` from version 1 to version 2 with the custom mapping model (`naming`: whether
        /// it names the books), through the coordinator's migration step, and returns version 2.
        @discardableResult
        static func migrateLibrary(at url: URL, naming: Bool) throws -> NSManagedObjectModel {
            let source = PostgreSQLMigrationTests.library(version: 1)
            let destination = PostgreSQLMigrationTests.library(version: 2)
            try NSPersistentStoreCoordinator._migrate(
                PostgreSQLStore.self, type: PostgreSQLStoreType, at: url, configuration: nil, options: nil,
                from: source, to: destination,
                mapping: try PostgreSQLMigrationTests.customMapping(from: source, to: destination, naming: naming))
            return destination
        }

        /// White-box: a mapping model that is not inferred comes only from the program's bundles, which a test target
        /// that builds its models in code does not have; the coordinator's migration step is called with one directly.
        @Test func aMappingModelMigratesObjectByObjectIntoASchemaThatTakesTheStoresPlace() throws {
            let url = try #require(PostgreSQLTestServer.newURL())
            defer { PostgreSQLTestServer.drop(url) }
            try PostgreSQLMigrationTests.writeLibrary(at: url)
            let identifier =
                try NSPersistentStoreCoordinator.metadataForPersistentStore(
                    ofType: PostgreSQLStoreType, at: url, options: nil)[NSStoreUUIDKey] as? String
            let destination = try Self.migrateLibrary(at: url, naming: true)
            #expect(try PostgreSQLMigrationTests.stagingSchemas(at: url).isEmpty)

            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: destination)
            let store = try coordinator.addPersistentStore(
                ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: nil)
            #expect(store.identifier == identifier)
            let context = NSManagedObjectContext.conformance(coordinator)
            try context.run {
                let writers = try context.objects("Writer", sortedBy: ["name"])
                #expect(writers.map { ($0.value(forKey: "born") as? NSNumber)?.int64Value } == [1915, 2070])
                let books = try context.objects("Book", sortedBy: ["name"])
                #expect(books.map { $0.value(forKey: "name") as? String } == ["No title", "Notes", "Verses"])
                let authors = books.map { book in
                    ((book.value(forKey: "authors") as? NSOrderedSet)?.array ?? []).compactMap {
                        ($0 as? NSManagedObject)?.value(forKey: "name") as? String
                    }
                }
                #expect(authors == [["Bob"], ["Ada"], ["Ada"]])
            }
        }

        @Test func aMappingModelMigrationThatFailsLeavesTheSchemaAsItWas() throws {
            let url = try #require(PostgreSQLTestServer.newURL())
            defer { PostgreSQLTestServer.drop(url) }
            try PostgreSQLMigrationTests.writeLibrary(at: url)
            let before = try PostgreSQLSchemaSnapshot(url)
            // The book without a title gets no name, which version 2 requires: the destination's save fails.
            #expect {
                try Self.migrateLibrary(at: url, naming: false)
            } throws: { error in
                (error as NSError).code == NSMigrationError
            }
            #expect(try PostgreSQLSchemaSnapshot(url) == before)
            #expect(try PostgreSQLMigrationTests.stagingSchemas(at: url).isEmpty)
        }

        @Test func aMappingModelMigrationDoesNotReplaceASchemaThatHoldsOtherTables() throws {
            let url = try #require(PostgreSQLTestServer.newURL())
            defer { PostgreSQLTestServer.drop(url) }
            try PostgreSQLMigrationTests.writeLibrary(at: url)
            let connection = try PostgreSQLConnection(try PostgreSQLConfiguration(url: url))
            try connection.execute(
                "CREATE TABLE \(quoted(PostgreSQLMigrationTests.schema(of: url))).orders (id bigint)")
            let before = try PostgreSQLSchemaSnapshot(url)
            #expect {
                try Self.migrateLibrary(at: url, naming: true)
            } throws: { error in
                let error = error as NSError
                return error.code == NSMigrationError && error.localizedDescription.contains("orders")
            }
            #expect(try PostgreSQLSchemaSnapshot(url) == before)
            #expect(try PostgreSQLMigrationTests.stagingSchemas(at: url).isEmpty)
        }
    }
}

/// Lines (errors, calls) recorded from several threads.
final class PostgreSQLMigrationRecorder: @unchecked Sendable {
    // @unchecked: behind a lock.
    private let lock = NSLock()
    private var lines: [String] = []
    func append(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
}

/// Everything in a store's schema that a failed migration must leave as it was: the tables with their columns and
/// types, the indexes, and every row of every table (`Z_METADATA` and `Z_PRIMARYKEY` included), as text.
struct PostgreSQLSchemaSnapshot: Equatable {
    var columns: [String] = []
    var indexes: [String] = []
    var rows: [String] = []

    init(_ url: URL) throws {
        let configuration = try PostgreSQLConfiguration(url: url)
        let connection = try PostgreSQLConnection(configuration)
        func lines(_ sql: String, _ parameters: [String?] = []) throws -> [String] {
            let result = try connection.query(sql, parameters)
            return (0..<result.rowCount).map { row in
                (0..<result.columnCount).map { result.text(row, $0) ?? "NULL" }.joined(separator: "|")
            }
        }
        let schema = configuration.schema
        columns = try lines(
            """
            SELECT table_name, column_name, data_type, ordinal_position::text FROM information_schema.columns \
            WHERE table_schema = $1 ORDER BY table_name, ordinal_position
            """, [schema])
        indexes = try lines(
            "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 ORDER BY indexname", [schema])
        for table in try lines("SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY tablename", [schema]) {
            rows.append(table)
            rows += try lines("SELECT t::text FROM \(quoted(schema)).\(quoted(table)) t ORDER BY 1")
        }
    }
}
