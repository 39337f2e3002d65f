// The object-by-object migration: open the source store read-only and the destination store, run the entity
// mappings' policies stage by stage, save the destination once. Nothing is written before that save, so a failure
// anywhere leaves the destination store as it was (and removes it if this migration created it). A new SQLite
// destination is written under another name beside it and renamed into place once complete, so that a process killed
// half-way leaves no store at the destination — only a hidden file, never one that opens as a migrated store.

extension NSMigrationManager {
    func _migrate(
        from sourceURL: URL, type sourceType: String, options sourceOptions: [AnyHashable: Any]?,
        mapping: NSMappingModel?, to destinationURL: URL, type destinationType: String,
        options destinationOptions: [AnyHashable: Any]?
    ) throws {
        guard destinationType == NSSQLiteStoreType, destinationURL.isFileURL,
            StoreLocation(destinationURL) == .missing
        else {
            return try _migrate(
                from: sourceURL, type: sourceType, options: sourceOptions, mapping: mapping, to: destinationURL,
                writingTo: destinationURL, type: destinationType, options: destinationOptions)
        }
        let staging = destinationURL.deletingLastPathComponent().appendingPathComponent(
            ".\(destinationURL.lastPathComponent).migrating-\(UUID().uuidString)")
        defer { MigrationFiles.remove(MigrationFiles.companions.map { URL(fileURLWithPath: staging.path + $0) }) }
        try _migrate(
            from: sourceURL, type: sourceType, options: sourceOptions, mapping: mapping, to: destinationURL,
            writingTo: staging, type: destinationType, options: destinationOptions)
        try NSSQLiteStore._moveClosedStore(at: staging, to: destinationURL)
    }

    /// Migrates into the store at `workURL`, which is `destinationURL` or the file that will become it (the errors
    /// name `destinationURL`).
    private func _migrate(
        from sourceURL: URL, type sourceType: String, options sourceOptions: [AnyHashable: Any]?,
        mapping: NSMappingModel?, to destinationURL: URL, writingTo workURL: URL, type destinationType: String,
        options destinationOptions: [AnyHashable: Any]?
    ) throws {
        guard let mapping else {
            throw coreDataError(
                NSMigrationMissingMappingModelError,
                "No mapping model was given to migrate the store at \(sourceURL.path); load one with "
                    + "NSMappingModel(from:forSourceModel:destinationModel:) or infer one with "
                    + "NSMappingModel.inferredMappingModel(forSourceModel:destinationModel:)",
                userInfo: [NSURLErrorKey: sourceURL])
        }
        reset()
        _mappingModel = mapping
        let progress = Progress(totalUnitCount: 1)
        _progress = progress
        try MappingModelValidator(manager: self, mapping: mapping).validate()

        if usesStoreSpecificMigrationManager, mapping._isInferred, sourceType == destinationType,
            let storeClass = NSPersistentStoreCoordinator.storeClass(forType: sourceType),
            try storeClass._migrateInferred(
                from: sourceURL, options: sourceOptions, to: workURL, options: destinationOptions,
                sourceModel: _sourceModel, destinationModel: _destinationModel, mapping: mapping)
        {
            _totalUnits = 1
            _completedUnits = 1
            progress.completedUnitCount = 1
            return
        }

        var readOnly = sourceOptions ?? [:]
        readOnly[NSReadOnlyPersistentStoreOption] = true
        readOnly[NSMigratePersistentStoresAutomaticallyOption] = false
        let sourceCoordinator = NSPersistentStoreCoordinator(managedObjectModel: _sourceModel)
        do {
            try sourceCoordinator.addPersistentStore(
                ofType: sourceType, configurationName: nil, at: sourceURL, options: readOnly)
        } catch {
            throw coreDataError(
                NSMigrationManagerSourceStoreError,
                "The source store at \(sourceURL.path) cannot be opened with the migration's source model: "
                    + (error as NSError).localizedDescription,
                userInfo: [NSUnderlyingErrorKey: error, NSURLErrorKey: sourceURL])
        }
        defer { Self._removeStores(of: sourceCoordinator) }

        let createdFiles = MigrationFiles.absent(at: workURL)
        // A store that is not a file (a server's schema) is new if there is no store there to read metadata from.
        let isNew =
            workURL.isFileURL
            ? createdFiles.contains(where: { $0.path == workURL.path })
            : (try? NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: destinationType, at: workURL))
                == nil
        var writable = destinationOptions ?? [:]
        writable[NSMigratePersistentStoresAutomaticallyOption] = false
        let destinationCoordinator = NSPersistentStoreCoordinator(managedObjectModel: _destinationModel)
        var succeeded = false
        defer {
            Self._removeStores(of: destinationCoordinator)
            if !succeeded { MigrationFiles.remove(createdFiles) }
        }
        do {
            try destinationCoordinator.addPersistentStore(
                ofType: destinationType, configurationName: nil, at: workURL, options: writable)
        } catch {
            throw coreDataError(
                NSMigrationManagerDestinationStoreError,
                "The destination store at \(destinationURL.path) cannot be opened with the migration's destination "
                    + "model: " + (error as NSError).localizedDescription,
                userInfo: [NSUnderlyingErrorKey: error, NSURLErrorKey: destinationURL])
        }
        // A new destination store continues the source store: its UUID and the user's own metadata carry over, as
        // Apple's framework carries them.
        if isNew, let sourceMetadata = sourceCoordinator.persistentStores.first?.metadata,
            let destinationStore = destinationCoordinator.persistentStores.first
        {
            var metadata = destinationStore.metadata ?? [:]
            for (key, value) in sourceMetadata where !key.hasPrefix("NS") && !key.hasPrefix("_NS") {
                metadata[key] = value
            }
            metadata[NSStoreUUIDKey] = sourceMetadata[NSStoreUUIDKey] ?? metadata[NSStoreUUIDKey]
            destinationCoordinator.setMetadata(metadata, for: destinationStore)
        }
        let sourceContext = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        sourceContext.persistentStoreCoordinator = sourceCoordinator
        sourceContext.undoManager = nil
        let destinationContext = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        destinationContext.persistentStoreCoordinator = destinationCoordinator
        destinationContext.undoManager = nil
        _sourceContext = sourceContext
        _destinationContext = destinationContext
        try _runStages(mapping)
        succeeded = true
    }

    static func _removeStores(of coordinator: NSPersistentStoreCoordinator) {
        for store in coordinator.persistentStores { try? coordinator.remove(store) }
    }

    // MARK: Stages

    func _runStages(_ mapping: NSMappingModel) throws {
        let mappings = mapping._entityMappings
        var policies: [NSEntityMigrationPolicy] = []
        for entityMapping in mappings {
            let policy = try _makePolicy(for: entityMapping)
            policies.append(policy)
            _policies[entityMapping.name ?? ""] = policy
        }
        for (entityMapping, policy) in zip(mappings, policies) {
            try _stage("begin", entityMapping, policy) { try policy.begin(entityMapping, with: self) }
        }
        var sources: [[NSManagedObject]] = []
        for entityMapping in mappings {
            _currentEntityMapping = entityMapping
            sources.append(try _sourceObjects(of: entityMapping))
        }
        _totalUnits = Int64(sources.reduce(0) { $0 + $1.count }) * 2 + Int64(mappings.count) + 1
        _progress?.totalUnitCount = _totalUnits

        // 1. Destination objects.
        for (index, entityMapping) in mappings.enumerated() {
            _currentEntityMapping = entityMapping
            let policy = policies[index]
            if entityMapping.mappingType != .removeEntityMappingType {
                for source in sources[index] {
                    try _checkCancelled()
                    try _stage("createDestinationInstances(forSource:in:manager:)", entityMapping, policy) {
                        try policy.createDestinationInstances(forSource: source, in: entityMapping, manager: self)
                    }
                    _advance()
                }
            } else {
                _advance(by: Int64(sources[index].count))
            }
            try _stage("endInstanceCreation(forMapping:manager:)", entityMapping, policy) {
                try policy.endInstanceCreation(forMapping: entityMapping, manager: self)
            }
        }
        // 2. Relationships.
        for (index, entityMapping) in mappings.enumerated() {
            _currentEntityMapping = entityMapping
            let policy = policies[index]
            let destinations = destinationInstances(forEntityMappingName: entityMapping.name, sourceInstances: nil)
            for destination in destinations {
                try _checkCancelled()
                try _stage("createRelationships(forDestination:in:manager:)", entityMapping, policy) {
                    try policy.createRelationships(forDestination: destination, in: entityMapping, manager: self)
                }
                _advance()
            }
            _advance(by: Int64(sources[index].count - min(destinations.count, sources[index].count)))
            try _stage("endRelationshipCreation(forMapping:manager:)", entityMapping, policy) {
                try policy.endRelationshipCreation(forMapping: entityMapping, manager: self)
            }
        }
        // 3. Validation, the end of each mapping, and the one save.
        for (index, entityMapping) in mappings.enumerated() {
            _currentEntityMapping = entityMapping
            try _checkCancelled()
            try _stage("performCustomValidation(forMapping:manager:)", entityMapping, policies[index]) {
                try policies[index].performCustomValidation(forMapping: entityMapping, manager: self)
            }
            _advance()
        }
        for (index, entityMapping) in mappings.enumerated() {
            _currentEntityMapping = entityMapping
            try _stage("end(_:manager:)", entityMapping, policies[index]) {
                try policies[index].end(entityMapping, manager: self)
            }
        }
        try _checkCancelled()
        do {
            try destinationContext.save()
        } catch {
            throw coreDataError(
                NSMigrationError,
                "The migrated objects cannot be saved to the destination store: "
                    + (error as NSError).localizedDescription,
                userInfo: [NSUnderlyingErrorKey: error])
        }
        _advance()
        _currentEntityMapping = nil
    }

    func _makePolicy(for mapping: NSEntityMapping) throws -> NSEntityMigrationPolicy {
        guard let name = mapping.entityMigrationPolicyClassName, !name.isEmpty else { return NSEntityMigrationPolicy() }
        guard let policyClass = MigrationPolicyClassRegistry.policyClass(named: name) else {
            throw coreDataError(
                NSEntityMigrationPolicyError,
                "The entity mapping '\(mapping.name ?? "")' names the migration policy class '\(name)', which is "
                    + "not a loaded NSEntityMigrationPolicy subclass; check the name, or register the class with "
                    + "NSEntityMigrationPolicy.register(_:)",
                userInfo: ["entityMapping": mapping.name ?? "", "className": name])
        }
        return policyClass.init()
    }

    /// Runs one stage of a policy; an error it throws becomes `NSEntityMigrationPolicyError` (Core Data's own
    /// migration errors, and a cancellation's error, pass as they are).
    func _stage(
        _ stage: String, _ mapping: NSEntityMapping, _ policy: NSEntityMigrationPolicy, _ body: () throws -> Void
    ) throws {
        do {
            try body()
        } catch {
            if let cancellation = _cancellation { throw cancellation }
            let error = error as NSError
            if error.domain == NSCocoaErrorDomain, (134_000..<135_000).contains(error.code) { throw error }
            throw coreDataError(
                NSEntityMigrationPolicyError,
                "The migration policy \(String(describing: type(of: policy))) of entity mapping "
                    + "'\(mapping.name ?? "")' failed in \(stage): \(error.localizedDescription)",
                userInfo: [NSUnderlyingErrorKey: error, "entityMapping": mapping.name ?? ""])
        }
    }

    func _checkCancelled() throws {
        if let cancellation = _cancellation { throw cancellation }
        if _progress?.isCancelled == true {
            throw coreDataError(NSMigrationCancelledError, "The migration was cancelled through its progress")
        }
    }

    func _advance(by units: Int64 = 1) {
        _completedUnits += units
        _progress?.completedUnitCount = _completedUnits
    }

    // MARK: Evaluating mapping expressions

    /// The variables of a mapping expression.
    func _scope(
        _ mapping: NSEntityMapping, source: NSManagedObject?, destination: NSManagedObject?
    ) -> PredicateScope {
        var variables: [String: Any] = [
            NSMigrationManagerKey: self, NSMigrationEntityMappingKey: mapping,
        ]
        if let policy = _policies[mapping.name ?? ""] { variables[NSMigrationEntityPolicyKey] = policy }
        if let source { variables[NSMigrationSourceObjectKey] = source }
        if let destination { variables[NSMigrationDestinationObjectKey] = destination }
        return PredicateScope(variables: variables, context: nil)
    }

    /// Evaluates `expression`, turning what evaluation could only note (a method nobody answers, a bad fetch) into
    /// an error naming the mapping and property.
    func _evaluate(_ expression: NSExpression, in scope: PredicateScope, what: @autoclosure () -> String) throws
        -> Any?
    {
        _expressionError = nil
        let (value, unanswered) = PredicateFunctionDispatch.reportingUnansweredCalls {
            expression.value(nil, in: scope)
        }
        if let problem = _expressionError ?? unanswered.map({ coreDataError(NSMigrationError, $0) }) {
            _expressionError = nil
            throw coreDataError(
                NSMigrationError,
                "The expression \(expression.expressionFormat) of \(what()) failed: \(problem.localizedDescription)",
                userInfo: [NSUnderlyingErrorKey: problem])
        }
        return value
    }

    /// The objects an entity mapping migrates: what its source expression evaluates to (a `FETCH` is run here so
    /// that a failing fetch is an error), or every object of its source entity, subentities excluded.
    func _sourceObjects(of mapping: NSEntityMapping) throws -> [NSManagedObject] {
        switch mapping.mappingType {
        case .addEntityMappingType, .removeEntityMappingType:
            return []
        default:
            break
        }
        guard let sourceName = mapping.sourceEntityName else { return [] }
        let what = "the source of entity mapping '\(mapping.name ?? "")'"
        let scope = _scope(mapping, source: nil, destination: nil)
        let request: NSFetchRequest<NSFetchRequestResult>
        var context = sourceContext
        switch mapping.sourceExpression?.kind {
        case nil:
            request = _fetchRequest(forSourceEntityNamed: sourceName, predicateString: nil, includesSubentities: false)
        case .fetch(let requestExpression, let contextExpression, _)?:
            guard let made = try _evaluate(requestExpression, in: scope, what: what) as? any NSFetchRequestUntyping
            else {
                throw coreDataError(
                    NSMigrationError,
                    "The source expression of entity mapping '\(mapping.name ?? "")' does not make "
                        + "a fetch request: \(requestExpression.expressionFormat)")
            }
            request = made._untypedRequest
            if let given = try _evaluate(contextExpression, in: scope, what: what) as? NSManagedObjectContext {
                context = given
            }
        default:
            let value = try _evaluate(mapping.sourceExpression!, in: scope, what: what)
            return MigrationAssociations.objects(value) ?? []
        }
        request.resultType = .managedObjectResultType
        do {
            return try context.fetch(request).compactMap { $0 as? NSManagedObject }
        } catch {
            throw coreDataError(
                NSMigrationError,
                "The source objects of entity mapping '\(mapping.name ?? "")' cannot be fetched: "
                    + (error as NSError).localizedDescription,
                userInfo: [NSUnderlyingErrorKey: error])
        }
    }

    /// The default policy's first stage: one destination object, with the values of the attribute mappings.
    func _createDestinationInstance(
        forSource source: NSManagedObject, in mapping: NSEntityMapping, policy: NSEntityMigrationPolicy
    ) throws {
        guard let entity = destinationEntity(for: mapping), let entityName = entity._name else {
            throw coreDataError(
                NSMigrationError,
                "The entity mapping '\(mapping.name ?? "")' has no destination entity in the destination model")
        }
        guard !entity._isAbstract else {
            throw coreDataError(
                NSMigrationError,
                "The entity mapping '\(mapping.name ?? "")' makes objects of abstract entity '\(entityName)'; map to "
                    + "one of its subentities, or create them in an entity migration policy")
        }
        let destination = NSEntityDescription.insertNewObject(forEntityName: entityName, into: destinationContext)
        let scope = _scope(mapping, source: source, destination: destination)
        let attributes = entity._caches.attributesByName
        for propertyMapping in mapping.attributeMappings ?? [] {
            guard let name = propertyMapping.name, let expression = propertyMapping.valueExpression,
                let attribute = attributes[name], !(attribute is NSDerivedAttributeDescription)
            else { continue }
            _currentPropertyMapping = propertyMapping
            scope.variables[NSMigrationPropertyMappingKey] = propertyMapping
            let value = try _evaluate(expression, in: scope, what: "attribute '\(entityName).\(name)'")
            guard StoredValue.attributeValue(value, type: attribute._attributeType) != nil else {
                throw coreDataError(
                    NSMigrationError,
                    "The value expression \(expression.expressionFormat) of attribute '\(entityName).\(name)' gave "
                        + "a \(type(of: value!)), which a \(attribute._attributeType.modelEditorName) attribute cannot "
                        + "hold", userInfo: ["entityMapping": mapping.name ?? "", "property": name])
            }
            destination.setValue(value, forKey: name)
        }
        _currentPropertyMapping = nil
        associate(sourceInstance: source, withDestinationInstance: destination, for: mapping)
    }

    /// The default policy's second stage: the relationships of a destination object, from the relationship
    /// mappings evaluated with the source object it was made from.
    func _createRelationships(
        forDestination destination: NSManagedObject, in mapping: NSEntityMapping, policy: NSEntityMigrationPolicy
    ) throws {
        let entity = destination._entity
        let entityName = entity._name ?? ""
        let source = sourceInstances(forEntityMappingName: mapping.name, destinationInstances: [destination]).first
        let scope = _scope(mapping, source: source, destination: destination)
        let relationships = entity._caches.relationshipsByName
        for propertyMapping in mapping.relationshipMappings ?? [] {
            guard let name = propertyMapping.name, let expression = propertyMapping.valueExpression,
                let relationship = relationships[name]
            else { continue }
            _currentPropertyMapping = propertyMapping
            scope.variables[NSMigrationPropertyMappingKey] = propertyMapping
            let value = try _evaluate(expression, in: scope, what: "relationship '\(entityName).\(name)'")
            let objects = MigrationAssociations.objects(value) ?? []
            for object in objects {
                guard object.managedObjectContext === destinationContext,
                    relationship._destinationEntity.map({ object._entity.isKindOf(entity: $0) }) ?? false
                else {
                    throw coreDataError(
                        NSMigrationError,
                        "The value expression \(expression.expressionFormat) of relationship '\(entityName).\(name)' "
                            + "gave \(object._entity._name ?? "an object") objects "
                            + (object.managedObjectContext === destinationContext
                                ? "" : "of the source store ")
                            + "where migrated '\(relationship._destinationEntity?._name ?? "")' objects belong",
                        userInfo: ["entityMapping": mapping.name ?? "", "property": name])
                }
            }
            if relationship.isToMany {
                destination.setValue(
                    relationship._isOrdered ? NSOrderedSet(array: objects) as Any : Set(objects) as Any, forKey: name)
            } else {
                destination.setValue(objects.first, forKey: name)
            }
        }
        _currentPropertyMapping = nil
    }
}

/// Store files a migration creates, so that a failed migration can remove them and nothing else.
enum MigrationFiles {
    static let companions = ["", "-wal", "-shm", "-journal"]

    /// The files of a store at `url` that do not exist yet.
    static func absent(at url: URL) -> [URL] {
        guard url.isFileURL, url.path != "/dev/null" else { return [] }
        return companions.map { URL(fileURLWithPath: url.path + $0) }.filter {
            !FileManager.default.fileExists(atPath: $0.path)
        }
    }

    static func remove(_ files: [URL]) {
        for file in files where FileManager.default.fileExists(atPath: file.path) {
            try? FileManager.default.removeItem(at: file)
        }
    }
}
