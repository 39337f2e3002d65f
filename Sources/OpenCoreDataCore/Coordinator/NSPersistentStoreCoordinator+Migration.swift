// Migration when a store is added with `NSMigratePersistentStoresAutomaticallyOption` (which
// `NSPersistentStoreDescription` sets by default): a store of another model version is migrated to the
// coordinator's model before it opens. The source model is the model version in the program's bundles whose
// version hashes the store records (or, failing that, the model the store keeps a copy of); the mapping model is
// one found in the bundles, or, with `NSInferMappingModelAutomaticallyOption`, inferred. An inferred mapping
// migrates a SQLite store in place with SQL; anything else migrates object by object into a new file beside the
// store, which then replaces the store's content in one step. Either way, a failure leaves the store as it was.

extension NSPersistentStoreCoordinator {
    static func _isSet(_ value: Any?) -> Bool {
        switch value {
        case let flag as Bool: return flag
        case let number as NSNumber: return number.boolValue
        case let text as String: return (text as NSString).boolValue
        default: return false
        }
    }

    /// Migrates the store at `url` to the coordinator's model if its metadata names another model version.
    func _migrateStoreIfNeeded(
        _ storeClass: NSPersistentStore.Type, type: String, at url: URL, configuration: String?,
        options: [AnyHashable: Any]?
    ) throws {
        // A store that is not there, or not a store, is for opening to judge.
        guard let metadata = try? storeClass.metadataForPersistentStore(with: url),
            metadata[NSStoreModelVersionHashesKey] != nil,
            !_managedObjectModel.isConfiguration(withName: configuration, compatibleWithStoreMetadata: metadata),
            !Self._isSet(options?[NSReadOnlyPersistentStoreOption])
        else { return }
        let destinationModel = _managedObjectModel
        guard let sourceModel = Self._sourceModel(forStoreMetadata: metadata, storeClass: storeClass, at: url) else {
            throw coreDataError(
                NSMigrationMissingSourceModelError,
                """
                Cannot migrate the store at \(url.path): no model in the program's bundles has the version hashes \
                the store records, and the store keeps no copy of its model. Add the model version the store was \
                made with to the bundle
                """,
                userInfo: ["metadata": metadata, NSURLErrorKey: url])
        }
        var mapping = NSMappingModel(from: nil, forSourceModel: sourceModel, destinationModel: destinationModel)
        if mapping == nil, Self._isSet(options?[NSInferMappingModelAutomaticallyOption]) {
            do {
                mapping = try NSMappingModel.inferredMappingModel(
                    forSourceModel: sourceModel, destinationModel: destinationModel)
            } catch {
                throw coreDataError(
                    NSMigrationMissingMappingModelError,
                    "Cannot migrate the store at \(url.path): there is no mapping model for its model version, and "
                        + "none can be inferred: \((error as NSError).localizedDescription)",
                    userInfo: [NSUnderlyingErrorKey: error, NSURLErrorKey: url])
            }
        }
        guard let mapping else {
            throw coreDataError(
                NSMigrationMissingMappingModelError,
                "Cannot migrate the store at \(url.path): there is no mapping model from its model version to the "
                    + "coordinator's; add one to the bundle, or add the store with "
                    + "NSInferMappingModelAutomaticallyOption for lightweight migration",
                userInfo: [NSURLErrorKey: url])
        }
        do {
            if mapping._isInferred,
                try storeClass._migrateInPlace(
                    at: url, configuration: configuration, options: options, sourceModel: sourceModel,
                    destinationModel: destinationModel, mapping: mapping)
            {
                return
            }
            try Self._migrateThroughCopy(
                storeClass, type: type, at: url, options: options, sourceModel: sourceModel,
                destinationModel: destinationModel, mapping: mapping)
        } catch let error as NSError
            where error.domain == NSCocoaErrorDomain && (134_110...134_190).contains(error.code)
        {
            throw error
        } catch {
            throw coreDataError(
                NSMigrationError,
                "The store at \(url.path) could not be migrated and is left as it was: "
                    + (error as NSError).localizedDescription,
                userInfo: [NSUnderlyingErrorKey: error, NSURLErrorKey: url])
        }
    }

    /// The model version the store was made with: from the program's bundles, else the store's own copy.
    static func _sourceModel(
        forStoreMetadata metadata: [String: Any], storeClass: NSPersistentStore.Type, at url: URL
    ) -> NSManagedObjectModel? {
        if let model = NSManagedObjectModel.mergedModel(
            from: ModelBundleLocator.candidateBundles(), forStoreMetadata: metadata)
        {
            return model
        }
        guard let cached = storeClass._cachedModel(at: url),
            cached.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata)
        else { return nil }
        return cached
    }

    /// Migrates object by object into a new store beside the original, then copies it over the original.
    static func _migrateThroughCopy(
        _ storeClass: NSPersistentStore.Type, type: String, at url: URL, options: [AnyHashable: Any]?,
        sourceModel: NSManagedObjectModel, destinationModel: NSManagedObjectModel, mapping: NSMappingModel
    ) throws {
        let migrated = url.deletingLastPathComponent().appendingPathComponent(
            ".\(url.lastPathComponent).migrating-\(UUID().uuidString)")
        defer { MigrationFiles.remove(MigrationFiles.companions.map { URL(fileURLWithPath: migrated.path + $0) }) }
        let manager = NSMigrationManager(sourceModel: sourceModel, destinationModel: destinationModel)
        var destinationOptions = options ?? [:]
        destinationOptions[NSMigratePersistentStoresAutomaticallyOption] = false
        try manager.migrateStore(
            from: url, sourceType: type, options: options, with: mapping, toDestinationURL: migrated,
            destinationType: type, destinationOptions: destinationOptions)
        try storeClass._replaceStore(at: url, withStoreAt: migrated)
    }
}
