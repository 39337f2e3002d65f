import Foundation
import Testing

@testable import OpenCoreDataCore

/// `Z_MODELCACHE`: a new store caches its model as Apple's stores do (the same table, one row of raw DEFLATE over
/// the model's keyed archive); stores written before Apple kept the cache are left without it; a damaged cache
/// never keeps a store from opening.
@Suite(.enabled(if: SQLiteCorpus.isAvailable, "the corpus of Apple-written stores is not available"))
struct SQLiteModelCacheTests {
    /// The corpus stores that have a model cache, each beside its inflated content (`.modelcache.bplist`).
    static let cachingStores: [String] = SQLiteCorpusModels.cases.map(\.store).filter { store in
        FileManager.default.fileExists(
            atPath: SQLiteCorpus.root.appendingPathComponent(store).deletingPathExtension()
                .appendingPathExtension("modelcache.bplist").path)
    }

    static func cacheFile(of store: String) -> URL {
        SQLiteCorpus.root.appendingPathComponent(store).deletingPathExtension().appendingPathExtension(
            "modelcache.bplist")
    }

    static func cachedModel(_ url: URL) throws -> NSManagedObjectModel? {
        let connection = try SQLiteConnection(path: url.path, readOnly: true, create: false)
        defer { connection.close() }
        return try SQLiteModelCache.readModel(from: connection)
    }

    @Test func nineCorpusStoresHaveACache() {
        #expect(Self.cachingStores.count == 9)
    }

    /// Apple's `Z_CONTENT` is raw DEFLATE of the model archive, with nothing before or after it.
    @Test(arguments: cachingStores)
    func applesCacheIsRawDeflateOfTheModelArchive(_ store: String) throws {
        let directory = SQLiteTestDirectory()
        let url = try directory.copyCorpusStore(store)
        let rows = try RawSQLite.query(url, "SELECT Z_CONTENT FROM Z_MODELCACHE")
        guard rows.count == 1, case .blob(let content) = rows[0][0] else {
            Issue.record("\(store) has \(rows.count) rows in Z_MODELCACHE, not one blob")
            return
        }
        let inflated = try RawDeflate.decompress(Data(content))
        #expect(inflated == (try Data(contentsOf: Self.cacheFile(of: store))))
        let model = try #require(try Self.cachedModel(url))
        #expect(ModelSnapshot.lines(model) == ModelSnapshot.lines(try CompiledModelWriterTests.reread(inflated)))
    }

    /// A new store for the model of an Apple store has Apple's table, in Apple's place among the tables, with one
    /// row whose content is built as Apple's is and holds the model.
    @Test(arguments: cachingStores)
    func aNewStoreCachesItsModelAsApplesDo(_ store: String) throws {
        let model = try SQLiteCorpusModels.storeModel(for: store)
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        try SQLiteStack.close(try SQLiteStack.coordinator(model, at: url))

        #expect(
            try RawSQLite.query(url, "SELECT sql FROM sqlite_master WHERE name = 'Z_MODELCACHE'")
                == [[.text("CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)")]])
        // The tables in the order Apple's framework creates them, the cache last (Apple migrated SampleModel V2
        // from V1, which rebuilt its tables in another order).
        if !store.hasSuffix("/SampleModel_V2.sqlite") {
            let apple = try directory.copyCorpusStore(store)
            let order =
                "SELECT name FROM sqlite_master WHERE type = 'table' "
                + "AND name NOT IN ('ACHANGE', 'ATRANSACTION', 'ATRANSACTIONSTRING') ORDER BY rootpage"
            #expect(try RawSQLite.query(url, order) == (try RawSQLite.query(apple, order)))
        }

        let rows = try RawSQLite.query(url, "SELECT Z_CONTENT FROM Z_MODELCACHE")
        guard rows.count == 1, case .blob(let content) = rows[0][0] else {
            Issue.record("the new store has \(rows) in Z_MODELCACHE, not one blob")
            return
        }
        let archive = try RawDeflate.decompress(Data(content))
        let differences = ArchiveStructure.differences(
            written: try ArchiveStructure.classKeys(archive),
            apple: try ArchiveStructure.classKeys(Data(contentsOf: Self.cacheFile(of: store))))
        #expect(differences.isEmpty, "\(differences.joined(separator: "\n"))")
        let cached = try #require(try Self.cachedModel(url))
        #expect(ModelSnapshot.lines(cached) == ModelSnapshot.lines(model))
        #expect(cached.entityVersionHashesByName == model.entityVersionHashesByName)
    }

    /// Apple's frameworks before the cache (Recipes: 241, BookMigration: 419) wrote none; opening and saving such a
    /// store does not add one.
    @Test(arguments: [
        ("stores/magicalpanda__MagicalRecord/Samples/iOS/Resources/RecipeData/Recipes.sqlite", "RecipeType"),
        ("stores/hwaxxer__BookMigration/Model1.sqlite", "User"),
    ])
    func storesWrittenBeforeTheCacheStayWithoutIt(_ store: String, entity: String) throws {
        let directory = SQLiteTestDirectory()
        let url = try directory.copyCorpusStore(store)
        let tables = "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
        let before = try RawSQLite.query(url, tables)
        #expect(!before.contains([.text("Z_MODELCACHE")]))
        let coordinator = try SQLiteStack.coordinator(try SQLiteCorpusModels.storeModel(for: store), at: url)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            _ = NSEntityDescription.insertNewObject(forEntityName: entity, into: context)
            try context.save()
        }
        try SQLiteStack.close(coordinator)
        #expect(try RawSQLite.query(url, tables) == before)
        #expect(try Self.cachedModel(url) == nil)
    }

    /// Ways a cache can be damaged.
    static let damages = [
        "not compressed", "truncated", "empty", "text", "a number", "compressed text",
        "compressed property list of no archive", "compressed archive of no model", "inflating without end", "null",
        "no row", "two rows", "no table", "another column",
    ]

    /// The SQL that damages a cache in the way `damage` names.
    static func damageSQL(_ damage: String) -> String {
        func set(_ data: Data) -> String {
            let content = (try? RawDeflate.compress(data)) ?? Data()
            return "UPDATE Z_MODELCACHE SET Z_CONTENT = x'\(content.map { String(format: "%02x", $0) }.joined())'"
        }
        switch damage {
        case "not compressed": return "UPDATE Z_MODELCACHE SET Z_CONTENT = x'00112233445566778899'"
        case "truncated": return "UPDATE Z_MODELCACHE SET Z_CONTENT = substr(Z_CONTENT, 1, length(Z_CONTENT) / 2)"
        case "empty": return "UPDATE Z_MODELCACHE SET Z_CONTENT = x''"
        case "text": return "UPDATE Z_MODELCACHE SET Z_CONTENT = 'a model'"
        case "a number": return "UPDATE Z_MODELCACHE SET Z_CONTENT = 42"
        case "compressed text": return set(Data("not a property list".utf8))
        case "compressed property list of no archive": return set(BinaryPropertyListWriter.data(.array([.integer(1)])))
        case "compressed archive of no model": return set(KeyedArchiveWriter().data(root: .uid(0)))
        case "inflating without end": return set(Data(count: 80 << 20))
        case "null": return "UPDATE Z_MODELCACHE SET Z_CONTENT = NULL"
        case "no row": return "DELETE FROM Z_MODELCACHE"
        case "two rows": return "INSERT INTO Z_MODELCACHE (Z_CONTENT) VALUES (x'ffff')"
        case "no table": return "DROP TABLE Z_MODELCACHE"
        default: return "DROP TABLE Z_MODELCACHE; CREATE TABLE Z_MODELCACHE (Z_OTHER BLOB)"
        }
    }

    @Test(arguments: damages)
    func aDamagedCacheNeverKeepsAStoreFromOpening(_ damage: String) throws {
        let store = "stores/alemar11__CoreDataPlus/SampleModel3/Fixtures/SampleModel3_V1.sqlite"
        let directory = SQLiteTestDirectory()
        let url = try directory.copyCorpusStore(store)
        try RawSQLite.execute(url, Self.damageSQL(damage))

        let coordinator = try SQLiteStack.coordinator(try SQLiteCorpusModels.storeModel(for: store), at: url)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "User")) == 12)
            let user = NSEntityDescription.insertNewObject(forEntityName: "User", into: context)
            user.setValue("Ada", forKey: "name")
            try context.save()
        }
        try SQLiteStack.close(coordinator)
        #expect(try RawSQLite.query(url, "SELECT count(*) FROM ZUSER") == [[.integer(13)]])

        // Reading the cache reports the damage, or no cache where there is none.
        do {
            let model = try Self.cachedModel(url)
            let readable = ["null", "no row", "no table", "two rows"]
            #expect(readable.contains(damage), "a damaged cache was read as \(String(describing: model))")
            if damage == "two rows" { #expect(model?.entitiesByName["User"] != nil) }
        } catch let error as NSError {
            #expect(error.domain == NSCocoaErrorDomain, "\(error)")
            #expect(error.code == CocoaError.Code.fileReadCorruptFile.rawValue, "\(error)")
        }
    }

    /// A model that cannot be archived (a block predicate) still makes a working store, whose cache stays empty.
    @Test func aModelThatCannotBeArchivedLeavesTheCacheEmpty() throws {
        let model = CompiledModelWriterTests.everySettingModel()
        let name = try #require(model.entitiesByName["Child"]?.attributesByName["name"])
        name._setValidationPredicates([NSPredicate { _, _ in true }], warnings: ["blocked"])
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        try SQLiteStack.close(try SQLiteStack.coordinator(model, at: url))
        #expect(try RawSQLite.query(url, "SELECT count(*) FROM Z_MODELCACHE") == [[.integer(0)]])
        #expect(try Self.cachedModel(url) == nil)
        let reopened = try SQLiteStack.coordinator(model, at: url)
        try SQLiteStack.close(reopened)
    }
}
