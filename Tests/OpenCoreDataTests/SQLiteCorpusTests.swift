import Foundation
import OpenCoreDataShim
import Testing

/// The stores Apple's Core Data wrote (shared/corpus/stores) are the reference for the SQLite format: a store created
/// here for the same model has the same schema, and every corpus store opens and reads back what `sqlite3` shows.
@Suite(.enabled(if: SQLiteCorpus.isAvailable, "the corpus of Apple-written stores is not available"))
struct SQLiteCorpusTests {
    @Test(arguments: SQLiteCorpusModels.cases)
    func schemaCreatedForTheModelIsApples(_ corpus: SQLiteCorpusModels.Case) throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let coordinator = try SQLiteStack.coordinator(corpus.makeModel(), at: url)
        try SQLiteStack.close(coordinator)

        let created = try RawSQLite.schema(url)
        let apple = try SQLiteCorpusModels.appleSchema(corpus)
        #expect(created.subtracting(apple).sorted() == [], "statements Apple does not write")
        #expect(apple.subtracting(created).sorted() == [], "statements Apple writes that were not created")

        // The entities are numbered as Apple numbers them.
        let copy = try directory.copyCorpusStore(corpus.store)
        let entities = try RawSQLite.query(url, "SELECT Z_ENT, Z_SUPER FROM Z_PRIMARYKEY ORDER BY Z_ENT")
        let appleEntities = try RawSQLite.query(
            copy, "SELECT Z_ENT, Z_SUPER FROM Z_PRIMARYKEY WHERE Z_ENT < 16000 ORDER BY Z_ENT")
        #expect(entities == appleEntities)
    }

    @Test(arguments: SQLiteCorpusModels.cases)
    func storeOpensAndReadsBackWhatSQLiteShows(_ corpus: SQLiteCorpusModels.Case) throws {
        let directory = SQLiteTestDirectory()
        let url = try directory.copyCorpusStore(corpus.store)
        let model = try corpus.storeModel()
        let coordinator = try SQLiteStack.coordinator(model, at: url)
        defer { try? SQLiteStack.close(coordinator) }
        let store = try #require(coordinator.persistentStores.first)
        let uuid = try RawSQLite.query(url, "SELECT Z_UUID FROM Z_METADATA")
        #expect(store.identifier == uuid.first?.first?.text)
        #expect(store.metadata[NSStoreTypeKey] as? String == NSSQLiteStoreType)
        #expect(store.metadata[NSStoreModelVersionHashesKey] is [String: Any])

        let numbers = Dictionary(
            try RawSQLite.query(url, "SELECT Z_NAME, Z_ENT FROM Z_PRIMARYKEY").compactMap { row in
                row[0].text.flatMap { name in row[1].integer.map { (name, $0) } }
            }, uniquingKeysWith: { first, _ in first })
        let context = SQLiteStack.context(coordinator)
        var checked = 0
        try context.performAndWait {
            for entity in model.entities where !entity.isAbstract {
                let name = entity.name!
                let number = try #require(numbers[name] ?? entity.renamingIdentifier.flatMap { numbers[$0] })
                let table = "Z" + Self.root(of: entity).name!.uppercased()
                let raw = try RawSQLite.rowsByKey(url, table: table).filter { $0.value["Z_ENT"]?.integer == number }
                let request = NSFetchRequest<NSManagedObject>(entityName: name)
                request.includesSubentities = false
                let objects = try context.fetch(request)
                #expect(objects.count == raw.count, "\(name): objects fetched vs rows in \(table)")
                for object in objects {
                    let key = try Self.primaryKey(object.objectID)
                    let row = try #require(raw[key], "\(name) \(key) has no row")
                    try Self.verify(object, against: row, store: url)
                    checked += 1
                }
            }
        }
        #expect(checked > 0)
    }

    /// The corpus stores whose Xcode model is in the corpus, with the model version each was written with.
    static let xcodeModels: [(store: String, model: String)] = [
        ("BookMigration Model1", "stores/hwaxxer__BookMigration/Model.xcdatamodeld/Model1.xcdatamodel"),
        ("CoreDataMigration-Example 1", migrationModel("CoreDataMigration_Example.xcdatamodel")),
        ("CoreDataMigration-Example 2", migrationModel("CoreDataMigration_Example 2.xcdatamodel")),
        ("CoreDataMigration-Example 3", migrationModel("CoreDataMigration_Example 3.xcdatamodel")),
        ("CoreDataMigration-Example WAL", migrationModel("CoreDataMigration_Example 4.xcdatamodel")),
        (
            "CoreDataPlus SampleModel V1",
            "models/alemar11__CoreDataPlus/SampleModel/SampleModel.xcdatamodeld/SampleModel.xcdatamodel"
        ),
        (
            "CoreDataPlus SampleModel V2",
            "models/alemar11__CoreDataPlus/SampleModel/SampleModel.xcdatamodeld/SampleModel2.xcdatamodel"
        ),
        (
            "CoreDataPlus SampleModel3 V1",
            "models/alemar11__CoreDataPlus/SampleModel3/SampleModel3.xcdatamodeld/SampleModel3.xcdatamodel"
        ),
    ]

    static func migrationModel(_ version: String) -> String {
        "stores/wibosco__CoreDataMigration-Example/CoreDataMigration-Example/CoreData/Model/"
            + "CoreDataMigration_Example.xcdatamodeld/" + version
    }

    #if !canImport(CoreData)
    // Apple's framework loads compiled models only; OpenCoreData also loads Xcode's source models.
    @Test(arguments: xcodeModels)
    func storesOpenWithTheirXcodeModelByVersionHashAndThoseModelsMakeApplesSchema(
        _ pair: (store: String, model: String)
    ) throws {
        let corpus = try #require(SQLiteCorpusModels.cases.first { $0.name == pair.store })
        let model = try NSManagedObjectModel(
            validatingContentsOf: SQLiteCorpus.root.appendingPathComponent(pair.model))
        let directory = SQLiteTestDirectory()
        let url = try directory.copyCorpusStore(corpus.store)
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        // This release computes Apple's version hashes: the store matches its model by hash, not only by structure.
        #expect(model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        let coordinator = try SQLiteStack.coordinator(model, at: url)
        try SQLiteStack.close(coordinator)

        let created = directory.store("Created.sqlite")
        try SQLiteStack.close(try SQLiteStack.coordinator(model, at: created))
        let apple = try SQLiteCorpusModels.appleSchema(corpus)
        #expect(try RawSQLite.schema(created) == apple)
        let hashes = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: created)
        #expect(
            NSDictionary(dictionary: hashes[NSStoreModelVersionHashesKey] as? [String: Any] ?? [:]).isEqual(
                to: metadata[NSStoreModelVersionHashesKey] as? [String: Any] ?? [:]))
    }
    #endif

    @Test func aStoreOfAnotherModelVersionIsRefusedUntouched() throws {
        let directory = SQLiteTestDirectory()
        let url = try directory.copyCorpusStore(
            "stores/alemar11__CoreDataPlus/SampleModel/Fixtures/SampleModel_V1.sqlite")
        let before = try Data(contentsOf: url)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: SQLiteCorpusModels.sampleModel(version: 2))
        #expect {
            try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
        } throws: { error in
            let error = error as NSError
            return error.domain == NSCocoaErrorDomain && error.code == NSPersistentStoreIncompatibleVersionHashError
        }
        #expect(coordinator.persistentStores.isEmpty)
        #expect(try Data(contentsOf: url) == before)
    }

    @Test func savingToAnAppleStoreKeepsItsFormatAndItsTriggers() throws {
        let directory = SQLiteTestDirectory()
        let url = try directory.copyCorpusStore(
            "stores/alemar11__CoreDataPlus/SampleModel2/Fixtures/SampleModel2_V1.sqlite")
        let plist = try RawSQLite.query(url, "SELECT Z_PLIST FROM Z_METADATA")
        let (bookKey, pages) = try #require(
            try RawSQLite.query(url, "SELECT Z_PK, ZPAGESCOUNT FROM ZBOOK WHERE Z_ENT = 1 ORDER BY Z_PK LIMIT 1").first
                .flatMap { row in row[0].integer.flatMap { key in row[1].integer.map { (key, $0) } } })
        let pageMax = try #require(
            try RawSQLite.query(url, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = 4").first?[0].integer)

        // The store records persistent history: Apple's framework (and this one) opens it read-only without the key.
        let coordinator = try SQLiteStack.coordinator(
            try SQLiteCorpusModels.storeModel(
                for: "stores/alemar11__CoreDataPlus/SampleModel2/Fixtures/SampleModel2_V1.sqlite"),
            at: url, options: [NSPersistentHistoryTrackingKey: true])
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Book")
            request.predicate = NSPredicate(
                format: "SELF == %@",
                coordinator.managedObjectID(
                    forURIRepresentation: coordinator.persistentStores[0].identifier.map {
                        URL(string: "x-coredata://\($0)/Book/p\(bookKey)")!
                    }!)!)
            let book = try #require(try context.fetch(request).first)
            #expect(book.value(forKey: "pagesCount") as? Int64 == pages)
            let page = NSEntityDescription.insertNewObject(forEntityName: "Page", into: context)
            page.setValue(Int32(9999), forKey: "number")
            page.setValue(false, forKey: "isBookmarked")
            page.setValue(Data([1, 2, 3]), forKey: "content")
            page.setValue(book, forKey: "book")
            try context.save()
        }
        // Apple's derived-attribute trigger counted the new page; Apple's metadata was left as it was.
        #expect(
            try RawSQLite.query(url, "SELECT ZPAGESCOUNT FROM ZBOOK WHERE Z_PK = \(bookKey)") == [[.integer(pages + 1)]]
        )
        #expect(try RawSQLite.query(url, "SELECT Z_PLIST FROM Z_METADATA") == plist)
        #expect(
            try RawSQLite.query(
                url, "SELECT Z_ENT, Z_OPT, ZBOOK, Z1_BOOK, ZNUMBER FROM ZPAGE WHERE Z_PK = \(pageMax + 1)")
                == [[.integer(4), .integer(1), .integer(bookKey), .integer(1), .integer(9999)]])
        #expect(try RawSQLite.query(url, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = 4") == [[.integer(pageMax + 1)]])
        let fresh = SQLiteStack.context(coordinator)
        try fresh.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Book")
            request.predicate = NSPredicate(format: "pages.@count == %d", Int(pages + 1))
            let book = try #require(try fresh.fetch(request).first)
            #expect(book.value(forKey: "pagesCount") as? Int64 == pages + 1)
        }
    }

    @Test func walFramesAreRead() throws {
        // This store's data is in its -wal file; the main file alone has no posts.
        let directory = SQLiteTestDirectory()
        let url = try directory.copyCorpusStore(
            "stores/wibosco__CoreDataMigration-Example/CoreDataMigration-ExampleTests/Resources/SQLite/"
                + "CoreDataMigration_Example_WAL.sqlite")
        let coordinator = try SQLiteStack.coordinator(
            try SQLiteCorpusModels.storeModel(
                for: "stores/wibosco__CoreDataMigration-Example/CoreDataMigration-ExampleTests/Resources/SQLite/"
                    + "CoreDataMigration_Example_WAL.sqlite"),
            at: url)
        defer { try? SQLiteStack.close(coordinator) }
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            let posts = try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Post"))
            #expect(posts == 84)
            let request = NSFetchRequest<NSManagedObject>(entityName: "Post")
            request.predicate = NSPredicate(format: "color.hex != nil AND hide == NO")
            let colored = try context.count(for: request)
            #expect(colored > 0)
        }
    }

    // MARK: Checking objects against rows

    static func root(of entity: NSEntityDescription) -> NSEntityDescription {
        var root = entity
        while let parent = root.superentity { root = parent }
        return root
    }

    static func primaryKey(_ objectID: NSManagedObjectID) throws -> Int64 {
        let last = objectID.uriRepresentation().lastPathComponent
        return try #require(Int64(last.dropFirst()), "\(objectID) is not a SQLite object ID")
    }

    /// Checks every stored property of `object` against the row Apple wrote, read independently of the store:
    /// columns are `Z<NAME>`, to-one relationships hold the destination's `Z_PK`, to-many ones are the rows of the
    /// destination table whose inverse column holds this object's key.
    static func verify(_ object: NSManagedObject, against row: [String: RawSQLite.Value], store: URL) throws {
        let entity = object.entity.name!
        for (name, attribute) in object.entity.attributesByName where !attribute.isTransient {
            let raw = row["Z" + name.uppercased()] ?? .null
            let value = object.value(forKey: name)
            let context = "\(entity).\(name) of \(object.objectID)"
            switch (attribute.attributeType, raw) {
            case (_, .null):
                #expect(value == nil, "\(context)")
            case (.integer16AttributeType, .integer(let number)), (.integer32AttributeType, .integer(let number)),
                (.integer64AttributeType, .integer(let number)):
                #expect((value as? NSNumber)?.int64Value == number, "\(context)")
            case (.booleanAttributeType, .integer(let number)):
                #expect((value as? NSNumber)?.boolValue == (number != 0), "\(context)")
            case (.doubleAttributeType, .real(let number)), (.floatAttributeType, .real(let number)):
                #expect((value as? NSNumber)?.doubleValue == number, "\(context)")
            case (.decimalAttributeType, .real(let number)):
                // The column holds a double; the decimal is the shortest decimal that reads back as it.
                #expect((value as? NSDecimalNumber)?.decimalValue == Decimal(string: "\(number)"), "\(context)")
            case (.dateAttributeType, .real(let seconds)):
                #expect((value as? Date)?.timeIntervalSinceReferenceDate == seconds, "\(context)")
            case (.stringAttributeType, .text(let text)):
                #expect(value as? String == text, "\(context)")
            case (.URIAttributeType, .text(let text)):
                #expect((value as? URL)?.absoluteString == text, "\(context)")
            case (.UUIDAttributeType, .blob(let bytes)):
                let uuid = try #require(value as? UUID, "\(context)")
                #expect(withUnsafeBytes(of: uuid.uuid) { Array($0) } == bytes, "\(context)")
            case (.binaryDataAttributeType, .blob(let bytes)):
                #expect((value as? Data).map(Array.init) == bytes, "\(context)")
            case (.transformableAttributeType, .blob(let bytes)):
                // The unarchived value where this platform can unarchive it, else the stored bytes themselves.
                if let data = value as? Data {
                    #expect(Array(data) == bytes, "\(context)")
                } else {
                    let decoded = NSSecureUnarchiveFromDataTransformer().transformedValue(Data(bytes))
                    #expect(decoded.map { "\($0)" } == value.map { "\($0)" }, "\(context)")
                }
            default:
                Issue.record("\(context): unexpected column value \(raw) for type \(attribute.attributeType)")
            }
        }
        for (name, relationship) in object.entity.relationshipsByName {
            let destination = try #require(relationship.destinationEntity)
            if !relationship.isToMany {
                let raw = row["Z" + name.uppercased()] ?? .null
                let related = object.value(forKey: name) as? NSManagedObject
                if let key = raw.integer {
                    let target = try #require(related, "\(entity).\(name) should point to row \(key)")
                    #expect(try primaryKey(target.objectID) == key, "\(entity).\(name)")
                    #expect(target.entity.isKindOf(entity: destination))
                } else {
                    #expect(related == nil, "\(entity).\(name) should be nil")
                }
                continue
            }
            let inverse = try #require(relationship.inverseRelationship, "corpus to-many relationships have inverses")
            guard !inverse.isToMany else { continue }
            let table = "Z" + root(of: destination).name!.uppercased()
            let key = try primaryKey(object.objectID)
            let expected = Set(
                try RawSQLite.query(store, "SELECT Z_PK FROM \(table) WHERE Z\(inverse.name.uppercased()) = \(key)")
                    .compactMap { $0[0].integer })
            let related = object.value(forKey: name) as? Set<NSManagedObject> ?? []
            #expect(Set(try related.map { try primaryKey($0.objectID) }) == expected, "\(entity).\(name)")
        }
    }
}
