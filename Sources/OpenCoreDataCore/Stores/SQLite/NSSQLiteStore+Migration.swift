// The SQLite store's part in migration: lightweight migration in place with SQL (see SQLiteLightweightMigration),
// the migration manager's store-specific path (a copy of the file, migrated in place), and the model cached in the
// store as the source model of last resort.

extension NSSQLiteStore {
    static func _timeout(_ options: [AnyHashable: Any]?) -> Double {
        switch options?[NSPersistentStoreTimeoutOption] {
        case let seconds as Double: return seconds
        case let seconds as Int: return Double(seconds)
        case let number as NSNumber: return number.doubleValue
        default: return 240
        }
    }

    /// Migrates the store at `url` in place; `false` (nothing written) when the mapping needs the object-by-object
    /// migration.
    static func _migrateStoreInPlace(
        at url: URL, configuration: String?, options: [AnyHashable: Any]?, sourceModel: NSManagedObjectModel,
        destinationModel: NSManagedObjectModel, mapping: NSMappingModel
    ) throws -> Bool {
        let url = try _fileURL(url)
        guard case .regularFile(let size) = StoreLocation(url), size > 0 else { return false }
        do {
            try SQLiteLightweightMigration.migrate(
                storeAt: url, configuration: configuration, sourceModel: sourceModel,
                destinationModel: destinationModel, mapping: mapping, timeout: _timeout(options))
            return true
        } catch is SQLiteLightweightMigration.Unsupported {
            return false
        } catch {
            throw coreDataError(
                NSMigrationError,
                "The SQLite store at \(url.path) could not be migrated in place and is left as it was: "
                    + ((_coreDataError(error, url: url, action: "migrating") as NSError).localizedDescription),
                userInfo: [
                    NSUnderlyingErrorKey: _coreDataError(error, url: url, action: "migrating"), NSURLErrorKey: url,
                ])
        }
    }

    /// The migration manager's store-specific path: the source copied to a new destination file, which is then
    /// migrated in place. `false` (no destination left) when the destination exists already or the mapping needs the
    /// object-by-object migration.
    static func _migrateCopyInPlace(
        from sourceURL: URL, to destinationURL: URL, options: [AnyHashable: Any]?,
        sourceModel: NSManagedObjectModel, destinationModel: NSManagedObjectModel, mapping: NSMappingModel
    ) throws -> Bool {
        let destinationURL = try _fileURL(destinationURL)
        guard case .missing = StoreLocation(destinationURL) else { return false }
        let created = MigrationFiles.absent(at: destinationURL)
        var done = false
        defer { if !done { MigrationFiles.remove(created) } }
        try _replaceStore(at: destinationURL, withStoreAt: sourceURL)
        done = try _migrateStoreInPlace(
            at: destinationURL, configuration: nil, options: options, sourceModel: sourceModel,
            destinationModel: destinationModel, mapping: mapping)
        return done
    }

    /// Gives the closed store at `staging`, which a migration wrote, the name `destination`, where there is no file:
    /// its WAL folded into the file first, so that the one file is the whole store, then a hard link made and the
    /// staging name removed — a link, unlike a rename, never replaces a file that appeared at `destination` meanwhile.
    static func _moveClosedStore(at staging: URL, to destination: URL) throws {
        if FileManager.default.fileExists(atPath: staging.path + "-wal") {
            let connection = try _connect(staging, readOnly: false, create: false, timeout: 240)
            defer { connection.close() }
            do {
                try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            } catch {
                throw error.coreDataError(url: destination, action: "finishing the migration of")
            }
        }
        if link(staging.path, destination.path) == 0 {
            unlink(staging.path)
            return
        }
        let reason = errno
        // A file system without hard links: rename, the file having been missing a moment ago.
        if reason != EEXIST, StoreLocation(destination) == .missing, rename(staging.path, destination.path) == 0 {
            return
        }
        throw coreDataError(
            NSMigrationManagerDestinationStoreError,
            reason == EEXIST
                ? "A file appeared at \(destination.path) while the store was being migrated there; it was left as "
                    + "it is and the migrated store discarded: migrate again to a location no other process writes"
                : "The migrated store cannot be put at \(destination.path): \(String(cString: strerror(reason)))",
            userInfo: [NSURLErrorKey: destination])
    }

    /// The model in the store's `Z_MODELCACHE`, if it has one that reads.
    static func _readCachedModel(at url: URL) -> NSManagedObjectModel? {
        guard let url = try? _fileURL(url), case .regularFile(let size) = StoreLocation(url), size > 0,
            let connection = try? _inspectionConnection(url)
        else { return nil }
        defer { connection.close() }
        return (try? SQLiteModelCache.readModel(from: connection)) ?? nil
    }
}
