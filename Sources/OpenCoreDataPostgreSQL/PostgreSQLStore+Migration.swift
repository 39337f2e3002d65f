import Foundation
import OpenCoreData
import OpenCoreDataCore

// The PostgreSQL store's part in migration (NSPersistentStoreCoordinator+Migration.swift decides when a store
// migrates and finds the source model): the metadata of a schema read without opening a store, the model kept in
// `Z_MODELCACHE` (the source model when no bundle has it), and lightweight migration in place, with SQL in one
// transaction (PostgreSQLLightweightMigration.swift). PostgreSQL's DDL is transactional, so a migration that fails
// leaves the schema, its rows and its metadata as they were.
//
// A mapping model that is not inferred (from a bundle, a chain of them, custom `NSEntityMigrationPolicy`s) migrates
// object by object, as for every store type, into a new store the coordinator then puts in the old one's place: for
// this store, a new schema in the same database (`stagingURL(for:)`), which takes the old schema's name in one
// transaction under its lock (`replaceSchema(at:withMigratedSchemaAt:)`), keeping the store's UUID.

extension PostgreSQLStore {
    /// The metadata in the schema at `url`, for `metadataForPersistentStore(ofType:at:options:)` and for the
    /// coordinator's question whether the store needs migrating.
    static func schemaMetadata(at url: URL) throws -> [String: Any] {
        let settings: PostgreSQLConfiguration
        do {
            settings = try PostgreSQLConfiguration(url: url)
        } catch {
            throw Self.error(NSPersistentStoreOpenError, error.description)
        }
        do {
            let connection = try PostgreSQLConnection(settings)
            let schema = PostgreSQLSchema(model: NSManagedObjectModel(), configuration: nil, schema: settings.schema)
            let found = try connection.query("SELECT to_regclass($1)", [schema.qualified("Z_METADATA")])
            guard found.text(0, 0) != nil else {
                throw Self.error(
                    CocoaError.Code.fileReadNoSuchFile.rawValue,
                    "There is no PostgreSQL store at \(settings.redactedURL): the schema has no Z_METADATA table")
            }
            return try readMetadata(connection, schema: schema, redactedURL: settings.redactedURL)
        } catch let error as PostgreSQLError {
            throw Self.error(
                NSPersistentStoreOpenError,
                "Could not read the metadata of the PostgreSQL store at \(settings.redactedURL): \(error.description)")
        }
    }

    /// The model the schema at `url` was made or last migrated with, if it keeps one that reads.
    static func cachedModel(at url: URL) -> NSManagedObjectModel? {
        guard let settings = try? PostgreSQLConfiguration(url: url),
            let connection = try? PostgreSQLConnection(settings)
        else { return nil }
        let table = quoted(settings.schema) + ".\"Z_MODELCACHE\""
        guard (try? connection.query("SELECT to_regclass($1)", [table]))?.text(0, 0) != nil,
            let result = try? connection.query("SELECT \"Z_CONTENT\" FROM \(table) LIMIT 1"), result.rowCount == 1,
            let text = result.text(0, 0), let content = PostgreSQLValueCoding.data(text)
        else { return nil }
        return try? SQLiteModelCache.model(fromContent: content, url: url) { reason, _ in
            Self.error(CocoaError.Code.fileReadCorruptFile.rawValue, "Z_MODELCACHE is damaged: \(reason)")
        }
    }

    /// Keeps `model` in the schema's `Z_MODELCACHE` (made if missing), as the SQLite store keeps its model: the
    /// source model of a later migration when the program's bundles do not have it (models built in code). A model
    /// that cannot be archived leaves the table empty.
    static func writeModelCache(
        _ model: NSManagedObjectModel, connection: PostgreSQLConnection, schema: PostgreSQLSchema
    ) throws {
        let table = schema.qualified("Z_MODELCACHE")
        try connection.execute("CREATE TABLE IF NOT EXISTS \(table) (\"Z_CONTENT\" bytea)")
        try connection.execute("DELETE FROM \(table)")
        guard let content = SQLiteModelCache.cacheableContent(for: model) else { return }
        try connection.query(
            "INSERT INTO \(table) (\"Z_CONTENT\") VALUES ($1::bytea)", [PostgreSQLValueCoding.hex(content)])
    }

    /// Migrates the schema at `url` from `sourceModel` to `destinationModel` with the inferred `mapping`, in one
    /// transaction under the store's advisory lock (the lock opening takes): a second process migrating the same
    /// schema waits, then finds it migrated and does nothing.
    static func migrateSchema(
        at url: URL, configuration: String?, sourceModel: NSManagedObjectModel,
        destinationModel: NSManagedObjectModel, mapping: NSMappingModel
    ) throws {
        let settings: PostgreSQLConfiguration
        do {
            settings = try PostgreSQLConfiguration(url: url)
        } catch {
            throw Self.error(NSMigrationError, error.description)
        }
        let where_ = settings.redactedURL
        func failure(_ reason: String, underlying: Error? = nil) -> NSError {
            var info: [String: Any] = [:]
            if let underlying { info[NSUnderlyingErrorKey] = underlying }
            return Self.error(
                NSMigrationError,
                "The PostgreSQL store at \(where_) could not be migrated and is left as it was: \(reason)",
                userInfo: info)
        }
        let connection: PostgreSQLConnection
        do {
            connection = try PostgreSQLConnection(settings)
        } catch {
            throw failure("could not connect: \(error.description)")
        }
        let source = PostgreSQLSchema(model: sourceModel, configuration: configuration, schema: settings.schema)
        let destination = PostgreSQLSchema(
            model: destinationModel, configuration: configuration, schema: settings.schema)
        if let name = destination.overlongIdentifier {
            throw failure(
                "the table or column name \(name) is longer than the \(PostgreSQLConfiguration.maximumIdentifierLength)"
                    + " bytes PostgreSQL keeps; shorten the entity or property name")
        }
        do {
            try connection.transaction {
                try connection.query(
                    "SELECT pg_advisory_xact_lock(hashtext($1))", ["OpenCoreData " + settings.schema])
                var metadata = try readMetadata(connection, schema: destination, redactedURL: where_)
                // Another process migrated the schema while this one waited for the lock.
                if destinationModel.isConfiguration(withName: configuration, compatibleWithStoreMetadata: metadata) {
                    return
                }
                guard sourceModel.isConfiguration(withName: configuration, compatibleWithStoreMetadata: metadata)
                else {
                    throw failure("another process changed its model version meanwhile; add the store again")
                }
                var migration = PostgreSQLLightweightMigration(
                    source: source, destination: destination, mapping: mapping, connection: connection)
                try migration.run()
                let hashes = destinationModel.entityVersionHashesByName
                metadata[NSStoreModelVersionHashesKey] = hashes
                metadata[NSStoreModelVersionIdentifiersKey] = Array(destinationModel.versionIdentifiers)
                metadata[NSStoreModelVersionHashesVersionKey] = 3
                try writeMetadata(metadata, connection: connection, schema: destination, redactedURL: where_)
                try writeModelCache(destinationModel, connection: connection, schema: destination)
            }
        } catch let error as PostgreSQLLightweightMigration.Unsupported {
            throw failure(
                "\(error.reason). The PostgreSQL store migrates in place only what lightweight migration changes in "
                    + "the tables' layout")
        } catch let error as PostgreSQLError {
            throw failure(error.description, underlying: Self.error(NSMigrationError, error.description))
        }
    }

    // MARK: Migration through a new schema

    /// The URL of a new schema beside the store's, in the same database, for a migration object by object.
    static func stagingURL(for url: URL) -> URL? {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return nil }
        let name = "ocd_migrating_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16)
        components.percentEncodedQueryItems =
            (components.percentEncodedQueryItems ?? []).filter { $0.name != "schema" }
            + [URLQueryItem(name: "schema", value: String(name))]
        return components.url
    }

    /// Puts the schema a migration wrote at `staging` in the place of the store's schema at `url`, in one
    /// transaction under the store's lock: the old schema is dropped and the new one takes its name, with the
    /// store's UUID. If another process put a schema of the same model version there meanwhile, that one stays.
    static func replaceSchema(at url: URL, withMigratedSchemaAt staging: URL) throws {
        let settings: PostgreSQLConfiguration
        let stagingSettings: PostgreSQLConfiguration
        do {
            settings = try PostgreSQLConfiguration(url: url)
            stagingSettings = try PostgreSQLConfiguration(url: staging)
        } catch {
            throw Self.error(NSMigrationError, error.description)
        }
        let where_ = settings.redactedURL
        let empty = NSManagedObjectModel()
        let target = PostgreSQLSchema(model: empty, configuration: nil, schema: settings.schema)
        let migrated = PostgreSQLSchema(model: empty, configuration: nil, schema: stagingSettings.schema)
        do {
            let connection = try PostgreSQLConnection(settings)
            try connection.transaction {
                try connection.query(
                    "SELECT pg_advisory_xact_lock(hashtext($1))", ["OpenCoreData " + settings.schema])
                let current = try readMetadata(connection, schema: target, redactedURL: where_)
                var incoming = try readMetadata(connection, schema: migrated, redactedURL: where_)
                let currentHashes = current[NSStoreModelVersionHashesKey] as? [String: Any] ?? [:]
                let incomingHashes = incoming[NSStoreModelVersionHashesKey] as? [String: Any] ?? [:]
                if NSDictionary(dictionary: currentHashes).isEqual(to: incomingHashes) { return }
                // The whole schema is replaced: anything in it that is not the store's would go with it.
                let foreign = try connection.query(
                    """
                    SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE \
                    n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND left(c.relname, 1) NOT IN ('Z', 'A') \
                    UNION ALL SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace \
                    WHERE n.nspname = $1 LIMIT 1
                    """, [settings.schema])
                if let name = foreign.text(0, 0) {
                    throw Self.error(
                        NSMigrationError,
                        """
                        The PostgreSQL store at \(where_) could not be migrated with a mapping model and is left as it \
                        was: such a migration replaces the store's schema \(settings.schema), which also holds \
                        \(name), not the store's. Give the store a schema of its own (?schema=…)
                        """)
                }
                incoming[NSStoreUUIDKey] = current[NSStoreUUIDKey] ?? incoming[NSStoreUUIDKey]
                try writeMetadata(incoming, connection: connection, schema: migrated, redactedURL: where_)
                try connection.execute("DROP SCHEMA \(quoted(settings.schema)) CASCADE")
                try connection.execute(
                    "ALTER SCHEMA \(quoted(stagingSettings.schema)) RENAME TO \(quoted(settings.schema))")
            }
        } catch let error as PostgreSQLError {
            throw Self.error(
                NSMigrationError,
                "The migrated PostgreSQL store could not take the place of the store at \(where_), which is left as it "
                    + "was: \(error.description)")
        }
    }
}
