import Foundation
import OpenCoreData
import OpenCoreDataCore

/// The type string of the PostgreSQL store. Reading it registers the store class, so that
/// `addPersistentStore(ofType: PostgreSQLStoreType, …)` finds it.
///
/// ```swift
/// import OpenCoreDataPostgreSQL
///
/// let url = URL(string: "postgres://app@db.internal:5432/inventory?schema=stock&sslmode=require")!
/// try coordinator.addPersistentStore(ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: nil)
/// ```
public let PostgreSQLStoreType: String = {
    NSPersistentStoreCoordinator.registerStoreClass(PostgreSQLStore.self, forStoreType: "PostgreSQL")
    return "PostgreSQL"
}()

/// A Core Data store in a PostgreSQL database: the same model, the same API and the same optimistic locking as the
/// SQLite store, for several processes on several hosts sharing one database.
///
/// The store's URL names the server, the database and a schema (`PostgreSQLConfiguration` lists the forms); the
/// schema holds Core Data's tables in Apple's SQLite layout (`PostgreSQLSchema`), made when the store is first
/// added. Every process that adds a store at the same URL shares its rows: a save checks each changed row's version
/// (`Z_OPT`) in its transaction, so that a row another process changed meanwhile is a merge conflict for the saving
/// context's merge policy, and primary keys come from `Z_PRIMARYKEY`, counted up under the row's lock.
///
/// Bad input gets a Core Data error with the server's message: a URL that names no server, a server that refuses
/// the connection, a schema made for another model (`NSPersistentStoreIncompatibleVersionHashError`), a server
/// that goes away during a save (the transaction is rolled back and the store connects again at its next use).
/// Passwords never appear in errors or descriptions.
public final class PostgreSQLStore: NSIncrementalStore, @unchecked Sendable {
    // @unchecked: the state below is used inside the store's serialization only (the coordinator calls one store
    // from one thread at a time, `NSPersistentStore._serialized`).
    var connection: PostgreSQLConnection?
    var schema: PostgreSQLSchema?
    var configuration: PostgreSQLConfiguration?
    /// The generation of the metadata (`_metadataGeneration`) last read from the server or written to it, so that
    /// saves rewrite it only when it changed.
    var storedMetadataGeneration: Int?
    /// Posts `.NSPersistentStoreRemoteChange` for every commit, with `NSPersistentStoreRemoteChangeNotificationPostOptionKey`.
    var changeListener: PostgreSQLChangeListener?
    /// Whether `lower()` folds case beyond ASCII in the database (see `foldsCase(_:)`), once asked.
    var caseFolding: Bool?
    /// The connections that fetches read through beside the store's other calls (`fetchRowsBesideOtherCalls`).
    let readers = PostgreSQLConnectionPool()
    /// The rows read lately, for faults (`PostgreSQLStore+RowCache.swift`).
    let rowCache = PostgreSQLRowCache()
    /// The store's persistent history, when it was added with `NSPersistentHistoryTrackingKey`
    /// (`PostgreSQLStore+History.swift`).
    var history: PostgreSQLHistory?

    /// Registers the store class for `PostgreSQLStoreType` (reading the constant does the same).
    public static func register() {
        _ = PostgreSQLStoreType
    }

    public override var type: String { PostgreSQLStoreType }

    public required init(
        persistentStoreCoordinator root: NSPersistentStoreCoordinator?, configurationName name: String?, at url: URL,
        options: [AnyHashable: Any]? = nil
    ) {
        super.init(persistentStoreCoordinator: root, configurationName: name, at: url, options: options)
    }

    /// The store's URL without its password.
    var redactedURL: String {
        configuration?.redactedURL ?? url.map(PostgreSQLConfiguration.redact) ?? "(no URL)"
    }

    public override var description: String {
        "<PostgreSQLStore: \(redactedURL)>"
    }

    // MARK: Opening

    public override func loadMetadata() throws {
        guard let url else {
            throw Self.error(
                NSPersistentStoreOpenError,
                "A PostgreSQL store needs a URL: postgres://user@host:5432/database?schema=name")
        }
        let configuration: PostgreSQLConfiguration
        do {
            configuration = try PostgreSQLConfiguration(url: url)
        } catch {
            throw Self.error(NSPersistentStoreOpenError, error.description)
        }
        self.configuration = configuration
        guard let model = persistentStoreCoordinator?.managedObjectModel else {
            throw Self.error(NSPersistentStoreOpenError, "A PostgreSQL store is added to a coordinator with a model")
        }
        let schema = PostgreSQLSchema(model: model, configuration: configurationName, schema: configuration.schema)
        if let name = schema.overlongIdentifier {
            throw Self.error(
                NSPersistentStoreOpenError,
                """
                The store at \(configuration.redactedURL) cannot be made: the table or column name \(name) is longer \
                than the \(PostgreSQLConfiguration.maximumIdentifierLength) bytes PostgreSQL keeps; shorten the \
                entity or property name
                """)
        }
        let connection: PostgreSQLConnection
        do {
            connection = try PostgreSQLConnection(configuration)
        } catch {
            throw Self.error(
                NSPersistentStoreOpenError,
                "Could not connect to the PostgreSQL server of \(configuration.redactedURL): \(error.description)")
        }
        let loaded: [String: Any]
        do {
            loaded = try connection.transaction {
                // Two processes adding a new store at once: the second waits, then finds the first one's tables.
                try connection.query("SELECT pg_advisory_xact_lock(hashtext($1))", ["OpenCoreData " + schema.schema])
                let found = try connection.query("SELECT to_regclass($1)", [schema.qualified("Z_METADATA")])
                if found.text(0, 0) != nil {
                    return try Self.readMetadata(connection, schema: schema, redactedURL: redactedURL)
                }
                return try createStore(connection, schema: schema, model: model)
            }
        } catch let error as PostgreSQLError {
            throw Self.error(
                NSPersistentStoreOpenError,
                "Could not open the PostgreSQL store at \(configuration.redactedURL): \(error.description)")
        }
        self.connection = connection
        self.schema = schema
        // What was read from the schema, or written to the new one.
        metadata = loaded
        storedMetadataGeneration = _metadataGeneration
        try prepareHistory()
        try startReading(configuration: configuration, schema: schema)
        if Self.flag(options?[NSPersistentStoreRemoteChangeNotificationPostOptionKey]),
            let identifier = loaded[NSStoreUUIDKey] as? String
        {
            try startListening(configuration: configuration, identifier: identifier, url: url)
        }
    }

    static func flag(_ value: Any?) -> Bool {
        switch value {
        case let flag as Bool: return flag
        case let number as NSNumber: return number.boolValue
        case let text as String: return ["yes", "true", "1"].contains(text.lowercased())
        default: return false
        }
    }

    /// Listens for the commits of every process to this store, and posts `.NSPersistentStoreRemoteChange` for each.
    private func startListening(configuration: PostgreSQLConfiguration, identifier: String, url: URL) throws {
        weak let coordinator = persistentStoreCoordinator
        let userInfo: [AnyHashable: Any] = [NSPersistentStoreURLKey: url, NSStoreUUIDKey: identifier]
        let info = UncheckedUserInfo(userInfo)
        let rowCache = rowCache
        do {
            changeListener = try PostgreSQLChangeListener(
                configuration: configuration, channel: PostgreSQLChangeListener.channel(forStore: identifier)
            ) { [recordsHistory = history != nil] payload in
                // The notice does not say which rows changed.
                rowCache.forgetAll()
                NotificationCenter.default.post(
                    name: .NSPersistentStoreRemoteChange, object: coordinator,
                    userInfo: Self.remoteChangeUserInfo(info.value, payload: payload, recordsHistory: recordsHistory))
            }
        } catch {
            throw Self.error(
                NSPersistentStoreOpenError,
                "Could not listen for the commits to the PostgreSQL store at \(configuration.redactedURL): \(error)")
        }
    }

    deinit {
        changeListener?.cancel()
    }

    static func readMetadata(_ connection: PostgreSQLConnection, schema: PostgreSQLSchema, redactedURL: String)
        throws -> [String: Any]
    {
        let result = try connection.query(
            "SELECT \"Z_PLIST\" FROM \(schema.qualified("Z_METADATA")) ORDER BY \"Z_VERSION\" DESC LIMIT 1")
        guard result.rowCount == 1, let text = result.text(0, 0), let data = PostgreSQLValueCoding.data(text),
            let plist = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any],
            plist[NSStoreUUIDKey] is String
        else {
            throw Self.error(
                CocoaError.Code.fileReadCorruptFile.rawValue,
                """
                The schema \(schema.schema) at \(redactedURL) holds no readable Core Data metadata (Z_METADATA); \
                it is not a store, or it was damaged
                """)
        }
        return plist
    }

    private func createStore(_ connection: PostgreSQLConnection, schema: PostgreSQLSchema, model: NSManagedObjectModel)
        throws -> [String: Any]
    {
        for statement in schema.createStatements {
            try connection.execute(statement)
        }
        for entity in schema.entities {
            try connection.query(
                "INSERT INTO \(schema.qualified("Z_PRIMARYKEY")) VALUES ($1, $2, $3, 0)",
                [String(entity.number), entity.entity.name ?? "", String(entity.superNumber)])
        }
        let metadata: [String: Any] = [
            NSStoreTypeKey: PostgreSQLStoreType,
            NSStoreUUIDKey: UUID().uuidString,
            NSStoreModelVersionHashesKey: model.entityVersionHashesByName,
        ]
        try writeMetadata(metadata, connection: connection, schema: schema)
        try Self.writeModelCache(model, connection: connection, schema: schema)
        return metadata
    }

    func writeMetadata(_ metadata: [String: Any], connection: PostgreSQLConnection, schema: PostgreSQLSchema) throws {
        try Self.writeMetadata(metadata, connection: connection, schema: schema, redactedURL: redactedURL)
    }

    static func writeMetadata(
        _ metadata: [String: Any], connection: PostgreSQLConnection, schema: PostgreSQLSchema, redactedURL: String
    ) throws {
        let data: Data
        do {
            data = try PropertyListSerialization.data(fromPropertyList: metadata, format: .binary, options: 0)
        } catch {
            throw Self.error(
                NSPersistentStoreSaveError,
                "The metadata of the store at \(redactedURL) holds a value a property list cannot: \(error)")
        }
        try connection.query(
            """
            INSERT INTO \(schema.qualified("Z_METADATA")) ("Z_VERSION", "Z_UUID", "Z_PLIST") VALUES (1, $1, $2) \
            ON CONFLICT ("Z_VERSION") DO UPDATE SET "Z_UUID" = EXCLUDED."Z_UUID", "Z_PLIST" = EXCLUDED."Z_PLIST"
            """,
            [metadata[NSStoreUUIDKey] as? String, PostgreSQLValueCoding.hex(data)])
    }

    /// Deletes the store at `url`: drops its schema and everything in it, as
    /// `NSPersistentStoreCoordinator.destroyPersistentStore(at:ofType:options:)` does for this store's type.
    ///
    /// ```swift
    /// try coordinator.destroyPersistentStore(at: url, type: NSPersistentStore.StoreType(rawValue: PostgreSQLStoreType))
    /// ```
    public static func dropSchema(at url: URL) throws {
        let configuration: PostgreSQLConfiguration
        do {
            configuration = try PostgreSQLConfiguration(url: url)
        } catch {
            throw Self.error(NSPersistentStoreOperationError, error.description)
        }
        do {
            let connection = try PostgreSQLConnection(configuration)
            try connection.execute("DROP SCHEMA IF EXISTS \(quoted(configuration.schema)) CASCADE")
        } catch {
            throw Self.error(
                NSPersistentStoreOperationError,
                "Could not drop the PostgreSQL store at \(configuration.redactedURL): \(error)")
        }
    }

    /// What `destroyPersistentStore(at:ofType:options:)` does for a `postgres://` URL: drops the store's schema.
    public override class func _destroyStore(at url: URL) throws {
        try dropSchema(at: url)
    }

    // MARK: Migration (PostgreSQLStore+Migration.swift)

    public override class func metadataForPersistentStore(with url: URL) throws -> [String: Any] {
        try schemaMetadata(at: url)
    }

    public override class func _migrateInPlace(
        at url: URL, configuration: String?, options: [AnyHashable: Any]?, sourceModel: NSManagedObjectModel,
        destinationModel: NSManagedObjectModel, mapping: NSMappingModel
    ) throws -> Bool {
        try migrateSchema(
            at: url, configuration: configuration, sourceModel: sourceModel, destinationModel: destinationModel,
            mapping: mapping)
        return true
    }

    public override class func _cachedModel(at url: URL) -> NSManagedObjectModel? {
        cachedModel(at: url)
    }

    public override class func _migrationStagingURL(for url: URL) -> URL? {
        stagingURL(for: url)
    }

    public override class func _replaceStore(at destination: URL, withMigratedStoreAt staging: URL) throws {
        try replaceSchema(at: destination, withMigratedSchemaAt: staging)
    }

    public override func didAdd(to coordinator: NSPersistentStoreCoordinator) {
        // The coordinator records the model in the metadata of a new store; keep that at once.
        let generation = _metadataGeneration
        guard let connection, let schema, let metadata, storedMetadataGeneration != generation else { return }
        if (try? writeMetadata(metadata, connection: connection, schema: schema)) != nil {
            storedMetadataGeneration = generation
        }
    }

    public override func willRemove(from coordinator: NSPersistentStoreCoordinator?) {
        changeListener?.cancel()
        changeListener = nil
        readers.stop()
        rowCache.forgetAll()
        connection = nil
    }

    /// The open connection and mapping, or the error that the store is not open.
    func open() throws -> (PostgreSQLConnection, PostgreSQLSchema) {
        guard let connection, let schema else {
            throw Self.error(NSPersistentStoreOperationError, "The PostgreSQL store at \(redactedURL) is not open")
        }
        return (connection, schema)
    }

    // MARK: Errors

    static func error(_ code: Int, _ message: String, userInfo: [String: Any] = [:]) -> NSError {
        var info = userInfo
        info[NSLocalizedDescriptionKey] = message
        return NSError(domain: NSCocoaErrorDomain, code: code, userInfo: info)
    }

    /// A failure talking to the server while `action` (“fetching from”, “saving to”), as a Core Data error.
    func error(_ failure: Error, code: Int, action: String) -> Error {
        switch failure {
        case let error as PostgreSQLError where error.isUniqueViolation:
            // Another process saved the same constrained values since this context checked them.
            return Self.error(
                NSManagedObjectConstraintMergeError,
                """
                Failed \(action) the PostgreSQL store at \(redactedURL): another writer saved the values of a \
                uniqueness constraint first: \(error.description)
                """, userInfo: ["PostgreSQLSQLState": error.sqlState ?? ""])
        case let error as PostgreSQLError:
            return Self.error(
                code, "Failed \(action) the PostgreSQL store at \(redactedURL): \(error.description)",
                userInfo: error.sqlState.map { ["PostgreSQLSQLState": $0] } ?? [:])
        case let error as PostgreSQLValueCoding.UnstorableValue:
            return Self.error(code, "Failed \(action) the PostgreSQL store at \(redactedURL): a value \(error.reason)")
        default:
            return failure
        }
    }

    // MARK: Object IDs

    /// The ID of row `key` of `entity` in this store.
    func objectID(_ entity: NSEntityDescription, key: Int64) -> NSManagedObjectID {
        newObjectID(for: entity, referenceObject: key)
    }

    /// The primary key of an ID of this store; `nil` for another store's or a temporary ID.
    func key(of objectID: NSManagedObjectID) -> Int64? {
        guard !objectID.isTemporaryID, objectID.persistentStore === self else { return nil }
        return (referenceObject(for: objectID) as? NSNumber)?.int64Value
    }
}

/// The store keeps no record of which objects contexts hold (it does not override the registration notices), so
/// contexts need not tell it of each.
extension PostgreSQLStore: PersistentStoreIgnoringRegistration {}

/// The user info of the store's remote change notifications: a URL and a string, made once and only read.
struct UncheckedUserInfo: @unchecked Sendable {
    // @unchecked: made once, then only read; it holds a URL and a string.
    let value: [AnyHashable: Any]
    init(_ value: [AnyHashable: Any]) { self.value = value }
}
