// Migration when a store is added with `NSMigratePersistentStoresAutomaticallyOption` (which
// `NSPersistentStoreDescription` sets by default): a store of another model version is migrated to the
// coordinator's model before it opens. The source model is the model version in the program's bundles whose
// version hashes the store records (or, failing that, the model the store keeps a copy of); the mapping model is
// one found in the bundles, or, with `OpenCoreDataMigrateThroughModelVersionsOption`, a chain of them through the
// bundles' model versions (NSPersistentStoreCoordinator+MigrationChain.swift), or, with
// `NSInferMappingModelAutomaticallyOption`, inferred. An inferred mapping
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

    /// Migrates the store at `url` to the coordinator's model if its metadata names another model version: through
    /// the stages of a staged migration manager if the options give one, then, if the store still needs it and the
    /// options ask for it, with a mapping model from the bundles or an inferred one.
    func _migrateStoreIfNeeded(
        _ storeClass: NSPersistentStore.Type, type: String, at url: URL, configuration: String?,
        options: [AnyHashable: Any]?
    ) throws {
        // A store that is not there, or not a store, is for opening to judge.
        guard var metadata = try? storeClass.metadataForPersistentStore(with: url),
            metadata[NSStoreModelVersionHashesKey] != nil,
            !_managedObjectModel.isConfiguration(withName: configuration, compatibleWithStoreMetadata: metadata),
            !Self._isSet(options?[NSReadOnlyPersistentStoreOption])
        else { return }
        CoreDataLogging.migrationStep(
            "the store at \(url.path) was made with a model version other than the coordinator's")
        if let staged = options?[NSPersistentStoreStagedMigrationManagerOptionKey] as? NSStagedMigrationManager {
            CoreDataLogging.migrationStep("running the \(staged.stages.count) stages of the staged migration manager")
            try _runStages(
                of: staged, storeClass, type: type, at: url, configuration: configuration, metadata: metadata)
            guard let updated = try? storeClass.metadataForPersistentStore(with: url),
                !_managedObjectModel.isConfiguration(withName: configuration, compatibleWithStoreMetadata: updated)
            else { return }
            metadata = updated
        }
        guard Self._isSet(options?[NSMigratePersistentStoresAutomaticallyOption]) else {
            CoreDataLogging.migrationStep("not migrating: NSMigratePersistentStoresAutomaticallyOption is not set")
            return
        }
        let destinationModel = _managedObjectModel
        guard let sourceModel = Self._sourceModel(forStoreMetadata: metadata, storeClass: storeClass, at: url) else {
            // Another process may have migrated the store since its metadata was read (a store shared between
            // processes, whose model copy is then the new version's): it opens as it is.
            if let current = try? storeClass.metadataForPersistentStore(with: url),
                _managedObjectModel.isConfiguration(withName: configuration, compatibleWithStoreMetadata: current)
            {
                return
            }
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
        CoreDataLogging.migrationStep(
            "source model version \(sourceModel.versionChecksum), "
                + (mapping == nil ? "no mapping model in the bundles" : "a mapping model from the bundles"))
        if mapping == nil, Self._isSet(options?[OpenCoreDataMigrateThroughModelVersionsOption]),
            let steps = Self._migrationChain(
                from: sourceModel, to: destinationModel, in: ModelBundleLocator.candidateBundles(),
                inferringLastStep: Self._isSet(options?[NSInferMappingModelAutomaticallyOption]))
        {
            CoreDataLogging.migrationStep("migrating in \(steps.count) steps through the model versions of the bundles")
            try Self._migrateThroughChain(storeClass, type: type, at: url, options: options, steps: steps)
            return
        }
        if mapping == nil, Self._isSet(options?[NSInferMappingModelAutomaticallyOption]) {
            CoreDataLogging.migrationStep("inferring a mapping model (lightweight migration)")
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
        try Self._migrate(
            storeClass, type: type, at: url, configuration: configuration, options: options, from: sourceModel,
            to: destinationModel, mapping: mapping)
    }

    /// Migrates the store at `url` with `mapping`: in place when the store type can (an inferred mapping, SQLite),
    /// else object by object through a copy. Errors are Core Data's migration errors.
    static func _migrate(
        _ storeClass: NSPersistentStore.Type, type: String, at url: URL, configuration: String?,
        options: [AnyHashable: Any]?, from sourceModel: NSManagedObjectModel, to destinationModel: NSManagedObjectModel,
        mapping: NSMappingModel
    ) throws {
        let started = DispatchTime.now().uptimeNanoseconds
        CoreDataLogging.migrationStep(
            "migrating the store at \(url.path) with \(mapping.entityMappings.count) entity mappings"
                + (mapping._isInferred ? " (inferred)" : ""))
        try _reportingMigrationErrors(at: url) {
            if mapping._isInferred,
                try storeClass._migrateInPlace(
                    at: url, configuration: configuration, options: options, sourceModel: sourceModel,
                    destinationModel: destinationModel, mapping: mapping)
            {
                CoreDataLogging.migrationStep(
                    "migrated in place with SQL in \(CoreDataLogging.seconds(since: started))")
                return
            }
            try _migrateThroughCopy(
                storeClass, type: type, at: url, options: options, sourceModel: sourceModel,
                destinationModel: destinationModel, mapping: mapping)
            CoreDataLogging.migrationStep(
                "migrated object by object through a copy in \(CoreDataLogging.seconds(since: started))")
        }
    }

    /// Runs `body`, passing Core Data's migration errors through and turning any other into `NSMigrationError`
    /// (134110) that says the store at `url` is left as it was.
    static func _reportingMigrationErrors(at url: URL, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as NSError
            where error.domain == NSCocoaErrorDomain && (134_110...134_190).contains(error.code)
        {
            CoreDataLogging.migrationStep("failed: \(error.localizedDescription)")
            throw error
        } catch {
            CoreDataLogging.migrationStep("failed: \((error as NSError).localizedDescription)")
            throw coreDataError(
                NSMigrationError,
                "The store at \(url.path) could not be migrated and is left as it was: "
                    + (error as NSError).localizedDescription,
                userInfo: [NSUnderlyingErrorKey: error, NSURLErrorKey: url])
        }
    }

    // MARK: Staged migration

    /// Runs the stages that apply to the store, in order, each a lightweight migration (with a custom stage's
    /// handlers around it).
    func _runStages(
        of manager: NSStagedMigrationManager, _ storeClass: NSPersistentStore.Type, type: String, at url: URL,
        configuration: String?, metadata: [String: Any]
    ) throws {
        var models: [String: NSManagedObjectModel] = [:]
        func know(_ model: NSManagedObjectModel) {
            models[model.versionChecksum] = models[model.versionChecksum] ?? model
        }
        for case let stage as NSCustomMigrationStage in manager.stages {
            know(try stage.currentModel._resolve())
            know(try stage.nextModel._resolve())
        }
        know(_managedObjectModel)
        if let cached = storeClass._cachedModel(at: url) { know(cached) }
        var searchedBundles = false
        func model(_ checksum: String, stage: NSMigrationStage) throws -> NSManagedObjectModel {
            if models[checksum] == nil, !searchedBundles {
                searchedBundles = true
                for modelURL in ModelBundleLocator.modelURLs(in: ModelBundleLocator.candidateBundles()) {
                    for version in (try? NSManagedObjectModel.versionsOfModel(at: modelURL)) ?? [] {
                        know(version.model)
                    }
                }
            }
            guard let found = models[checksum] else {
                throw coreDataError(
                    NSMigrationMissingSourceModelError,
                    "The migration stage \(stage.label.map { "'\($0)' " } ?? "")names the model version with checksum "
                        + "\(checksum), which no model reference, bundle or the store has",
                    userInfo: [NSURLErrorKey: url])
            }
            return found
        }
        var hashes: [String: Data] = [:]
        for (name, value) in metadata[NSStoreModelVersionHashesKey] as? [String: Any] ?? [:] {
            if let hash = ModelVersionHasher.storedHash(value) { hashes[name] = hash }
        }
        var checksum = ModelVersionHasher.versionChecksum(of: hashes)
        for stage in manager.stages {
            switch stage {
            case let lightweight as NSLightweightMigrationStage:
                guard let position = lightweight.versionChecksums.firstIndex(of: checksum),
                    position < lightweight.versionChecksums.count - 1, let target = lightweight.versionChecksums.last
                else { continue }
                CoreDataLogging.migrationStep(
                    "lightweight stage \(lightweight.label.map { "'\($0)' " } ?? "")from checksum \(checksum) to "
                        + target)
                try _migrateInferred(
                    storeClass, type: type, at: url, configuration: configuration,
                    from: try model(checksum, stage: stage), to: try model(target, stage: stage))
                checksum = target
            case let custom as NSCustomMigrationStage:
                guard custom.currentModel.versionChecksum == checksum else { continue }
                CoreDataLogging.migrationStep(
                    "custom stage \(custom.label.map { "'\($0)' " } ?? "")from checksum \(checksum) to "
                        + custom.nextModel.versionChecksum)
                let current = try custom.currentModel._resolve()
                let next = try custom.nextModel._resolve()
                if let handler = custom.willMigrateHandler {
                    try _withContainer(current, manager, type: type, at: url, configuration: configuration) {
                        try handler(manager, custom)
                    }
                }
                try _migrateInferred(
                    storeClass, type: type, at: url, configuration: configuration, from: current, to: next)
                checksum = next.versionChecksum
                if let handler = custom.didMigrateHandler {
                    try _withContainer(next, manager, type: type, at: url, configuration: configuration) {
                        try handler(manager, custom)
                    }
                }
            default:
                continue
            }
        }
    }

    private func _migrateInferred(
        _ storeClass: NSPersistentStore.Type, type: String, at url: URL, configuration: String?,
        from source: NSManagedObjectModel, to destination: NSManagedObjectModel
    ) throws {
        let mapping = try NSMappingModel.inferredMappingModel(forSourceModel: source, destinationModel: destination)
        try Self._migrate(
            storeClass, type: type, at: url, configuration: configuration, options: nil, from: source,
            to: destination, mapping: mapping)
    }

    /// Runs a custom stage's handler with the manager's container loaded on the store at `model`.
    private func _withContainer(
        _ model: NSManagedObjectModel, _ manager: NSStagedMigrationManager, type: String, at url: URL,
        configuration: String?, _ body: () throws -> Void
    ) throws {
        let container = NSPersistentContainer(name: "StagedMigration", managedObjectModel: model)
        let description = NSPersistentStoreDescription(url: url)
        description.type = type
        description.configuration = configuration
        description.shouldMigrateStoreAutomatically = false
        description.shouldInferMappingModelAutomatically = false
        container.persistentStoreDescriptions = [description]
        var loadError: (any Error)?
        container.loadPersistentStores { _, error in loadError = error }
        defer {
            manager._container = nil
            for store in container.persistentStoreCoordinator.persistentStores {
                try? container.persistentStoreCoordinator.remove(store)
            }
        }
        if let loadError { throw loadError }
        manager._container = container
        do {
            try body()
        } catch {
            throw coreDataError(
                NSMigrationError,
                "A custom migration stage's handler failed: \((error as NSError).localizedDescription)",
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
        let migrated = _stagingURL(storeClass, for: url, step: nil)
        defer { _discardStaging(storeClass, at: migrated) }
        let manager = NSMigrationManager(sourceModel: sourceModel, destinationModel: destinationModel)
        var destinationOptions = options ?? [:]
        destinationOptions[NSMigratePersistentStoresAutomaticallyOption] = false
        try manager.migrateStore(
            from: url, sourceType: type, options: options, with: mapping, toDestinationURL: migrated,
            destinationType: type, destinationOptions: destinationOptions)
        try storeClass._replaceStore(at: url, withMigratedStoreAt: migrated)
    }

    /// Where a migration object by object writes the store that replaces the one at `url`: the store type's place,
    /// or a hidden file beside it.
    static func _stagingURL(_ storeClass: NSPersistentStore.Type, for url: URL, step: Int?) -> URL {
        if let staging = storeClass._migrationStagingURL(for: url) { return staging }
        return url.deletingLastPathComponent().appendingPathComponent(
            ".\(url.lastPathComponent).migrating-\(step.map { "\($0)-" } ?? "")\(UUID().uuidString)")
    }

    /// Removes what a migration left at `staging`, whatever happened.
    static func _discardStaging(_ storeClass: NSPersistentStore.Type, at staging: URL) {
        if staging.isFileURL {
            MigrationFiles.remove(MigrationFiles.companions.map { URL(fileURLWithPath: staging.path + $0) })
        } else {
            try? storeClass._destroyStore(at: staging)
        }
    }
}

// MARK: Moving a store to another location or type

extension NSPersistentStoreCoordinator {
    /// Copies the objects of `store` into a new store of `storeType` at `URL`, which takes its place in the
    /// coordinator: `store` is removed (its file, if any, is left as it is) and the new store is returned. This is how
    /// a store moves between locations and types — an in-memory store saved to a SQLite file, a SQLite store turned
    /// into an in-memory one.
    ///
    /// ```swift
    /// let onDisk = try coordinator.migratePersistentStore(
    ///     memoryStore, to: fileURL, options: nil, withType: NSSQLiteStoreType)
    /// ```
    ///
    /// The objects get new object IDs, of the new store; the store's own metadata keys carry over. If the copy fails,
    /// the coordinator keeps `store`, and the new store's files are removed.
    @discardableResult
    public func migratePersistentStore(
        _ store: NSPersistentStore, to URL: URL, options: [AnyHashable: Any]? = nil, withType storeType: String
    ) throws -> NSPersistentStore {
        guard persistentStores.contains(where: { $0 === store }) else {
            throw coreDataError(
                NSPersistentStoreOperationError,
                "Cannot migrate the store \(store): it is not a store of this coordinator")
        }
        if let current = store._url, storeType != NSInMemoryStoreType, !StoreLocation.isDevNull(URL),
            current.standardizedFileURL == URL.standardizedFileURL
        {
            throw coreDataError(
                NSPersistentStoreOperationError,
                "Cannot migrate the store at \(URL.path) onto itself; give another location",
                userInfo: [NSURLErrorKey: URL])
        }
        let created = MigrationFiles.absent(at: URL)
        var copyOptions = options ?? [:]
        copyOptions[NSMigratePersistentStoresAutomaticallyOption] = false
        let configuration = store._configurationName == "PF_DEFAULT_CONFIGURATION_NAME" ? nil : store._configurationName
        let destination = try addPersistentStore(
            ofType: storeType, configurationName: configuration, at: URL, options: copyOptions)
        do {
            try _copyObjects(of: store, to: destination)
            try remove(store)
            return destination
        } catch {
            try? remove(destination)
            MigrationFiles.remove(created)
            throw coreDataError(
                NSPersistentStoreOperationError,
                "The store could not be migrated to \(URL.path): " + (error as NSError).localizedDescription,
                userInfo: [NSUnderlyingErrorKey: error, NSURLErrorKey: URL])
        }
    }

    /// Copies the objects of `store` to a new store of `type` at `URL` (Swift-style spelling of
    /// `migratePersistentStore(_:to:options:withType:)`).
    @discardableResult
    public func migratePersistentStore(
        _ store: NSPersistentStore, to URL: URL, options: [AnyHashable: Any]? = nil,
        type storeType: NSPersistentStore.StoreType
    ) throws -> NSPersistentStore {
        try migratePersistentStore(store, to: URL, options: options, withType: storeType.rawValue)
    }

    /// Copies every object of `store`, with its attributes and its relationships within the store, into
    /// `destination`, in one save.
    func _copyObjects(of store: NSPersistentStore, to destination: NSPersistentStore) throws {
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = self
        context.undoManager = nil
        let entities = _managedObjectModel.entities(forConfigurationName: store._configurationName) ?? []
        var copies: [NSManagedObjectID: NSManagedObject] = [:]
        var originals: [NSManagedObject] = []
        for entity in entities where !entity._isAbstract {
            let request = NSFetchRequest<NSManagedObject>(entityName: entity._name ?? "")
            request.entity = entity
            request.includesSubentities = false
            request.affectedStores = [store]
            request.returnsObjectsAsFaults = false
            request.includesPendingChanges = false
            let objectClass = ManagedObjectClassRegistry.objectClass(for: entity)
            var made: [NSManagedObject] = []
            for original in try context.fetch(request) {
                let copy = objectClass.init(entity: entity, insertInto: context)
                for attribute in entity._caches.attributesByName.values
                where !attribute._isTransient && !(attribute is NSDerivedAttributeDescription) {
                    copy.setPrimitiveValue(original.primitiveValue(forKey: attribute._name), forKey: attribute._name)
                }
                copies[original.objectID] = copy
                originals.append(original)
                made.append(copy)
            }
            try context._assign(made, to: destination)
        }
        for original in originals {
            guard let copy = copies[original.objectID] else { continue }
            for relationship in original._entity._caches.relationshipsByName.values where !relationship._isTransient {
                let name = relationship._name
                if relationship.isToMany {
                    let targets = MigrationAssociations.objects(original.value(forKey: name)) ?? []
                    let mapped = targets.compactMap { copies[$0.objectID] }
                    copy.setPrimitiveValue(
                        relationship._isOrdered ? NSOrderedSet(array: mapped) as Any : Set(mapped) as Any, forKey: name)
                } else if let target = original.value(forKey: name) as? NSManagedObject,
                    let mapped = copies[target.objectID]
                {
                    copy.setPrimitiveValue(mapped, forKey: name)
                }
            }
        }
        if let metadata = store.metadata {
            var carried = destination.metadata ?? [:]
            for (key, value) in metadata where !key.hasPrefix("NS") && !key.hasPrefix("_NS") { carried[key] = value }
            setMetadata(carried, for: destination)
        }
        try context.save()
    }
}
