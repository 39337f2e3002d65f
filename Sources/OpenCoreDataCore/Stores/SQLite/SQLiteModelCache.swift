import Foundation

/// `Z_MODELCACHE`: the model a store was made with, kept in the store itself, as Apple's framework writes it into
/// every new SQLite store (the corpus stores of framework version 847 and later have it, those of 241 and 419 do
/// not) — one row whose `Z_CONTENT` is the model's keyed archive (`CompiledModelWriter.Style.storeModelCache`)
/// compressed as raw DEFLATE, with no header of its own.
///
/// The cache is written when a store is created. Opening a store never reads it (a store needs only its own tables
/// and its metadata), so a missing or damaged cache cannot keep a store from opening; `readModel(from:)` reads it
/// for those who want the model a store was made with, and reports damage as an error.
package enum SQLiteModelCache {
    /// The table, spelled as Apple's framework creates it.
    static let tableSQL = "CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)"

    /// The content of `Z_CONTENT` for `model`: its archive, compressed.
    static func content(for model: NSManagedObjectModel) throws -> Data {
        let archive = try CompiledModelWriter.data(for: model, style: .storeModelCache)
        do {
            return try RawDeflate.compress(archive)
        } catch {
            throw coreDataError(NSCoreDataError, "Cannot compress the model for the store's cache: \(error)")
        }
    }

    /// The most inherited properties the cache archives again. The cache archives each inherited property once
    /// more in every subentity, so that a hierarchy of depth n holds n²/2 property archives: a chain of 5,000
    /// entities with a property each would take minutes and gigabytes to cache.
    static let inheritedPropertyLimit = 100_000

    /// Fills the table of a new store with `model`. A model that cannot be archived (one with a block predicate,
    /// which Apple's framework cannot archive either), or whose hierarchies hold more than
    /// `inheritedPropertyLimit` inherited properties, leaves the table empty: the store works without its cache.
    static func write(_ model: NSManagedObjectModel, to connection: SQLiteConnection) throws {
        guard let content = cacheableContent(for: model) else { return }
        try connection.statement("INSERT INTO Z_MODELCACHE (Z_CONTENT) VALUES (?)").run([.blob(content)])
    }

    /// The content of the cache for `model`, or `nil` when the model is not cached (see `write(_:to:)`). `package`
    /// for the PostgreSQL store, which keeps the same content in a table of the same name.
    package static func cacheableContent(for model: NSManagedObjectModel) -> Data? {
        // Counted from the declarations (an entity's cache would be made for every entity to count them).
        var inheritedByEntity: [ObjectIdentifier: Int] = [:]
        func inheritedCount(_ entity: NSEntityDescription) -> Int {
            var chain: [NSEntityDescription] = []
            var current = entity._superentity
            var count = 0
            while let ancestor = current {
                if let known = inheritedByEntity[ObjectIdentifier(ancestor)] {
                    count = known + ancestor._ownProperties.count
                    break
                }
                chain.append(ancestor)
                current = ancestor._superentity
            }
            for ancestor in chain.reversed() {
                inheritedByEntity[ObjectIdentifier(ancestor)] = count
                count += ancestor._ownProperties.count
            }
            inheritedByEntity[ObjectIdentifier(entity)] = count
            return count
        }
        var inherited = 0
        for entity in model._entities {
            inherited += inheritedCount(entity)
            if inherited > inheritedPropertyLimit { return nil }
        }
        return try? content(for: model)
    }

    /// The model cached in the store, or `nil` when the store has no cache (stores written before Apple's
    /// framework kept one, or whose model could not be archived). A cache that is not a compressed model archive
    /// fails with `NSFileReadCorruptFileError`.
    static func readModel(from connection: SQLiteConnection) throws -> NSManagedObjectModel? {
        let url = URL(fileURLWithPath: connection.path)
        func damaged(_ reason: String, underlying: (any Error)? = nil) -> NSError {
            var info: [String: Any] = [NSURLErrorKey: url]
            if let underlying { info[NSUnderlyingErrorKey] = underlying }
            return coreDataError(
                CocoaError.Code.fileReadCorruptFile.rawValue,
                "The model cached in the store at \(url.path) (Z_MODELCACHE) is damaged: \(reason)", userInfo: info)
        }
        let content: Data
        do {
            guard try connection.tableNames().contains("Z_MODELCACHE") else { return nil }
            guard try connection.columns(of: "Z_MODELCACHE").contains(where: { $0.name == "Z_CONTENT" }) else {
                throw damaged("the table has no Z_CONTENT column")
            }
            let statement = try connection.statement("SELECT Z_CONTENT FROM Z_MODELCACHE ORDER BY rowid LIMIT 1")
            defer { statement.reset() }
            guard try statement.step(), !statement.isNull(0) else { return nil }
            content = statement.blob(0)
        } catch let error as SQLiteError {
            throw NSSQLiteStore._coreDataError(error, url: url, action: "reading the model cache of")
        }
        return try model(fromContent: content, url: url, damaged: damaged)
    }

    /// The model of a cache's content, or the error `damaged` makes of the reason it is not one.
    package static func model(
        fromContent content: Data, url: URL, damaged: (String, (any Error)?) -> NSError
    ) throws -> NSManagedObjectModel {
        let archive: Data
        do {
            archive = try RawDeflate.decompress(content)
        } catch {
            throw damaged(error.description, nil)
        }
        let model = NSManagedObjectModel()
        do {
            try CompiledModelReader.load(archive, url: url, into: model)
        } catch {
            throw damaged("it is not a model archive", error)
        }
        return model
    }
}
