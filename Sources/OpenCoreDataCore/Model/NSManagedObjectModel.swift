/// A managed object model: the entities of an object graph, their properties and relationships, grouped in
/// configurations, with named fetch request templates.
///
/// A model is built in code or loaded from an Xcode model bundle, and is editable until a persistent store
/// coordinator uses it. From then on it is immutable, and may be shared by any number of coordinators and
/// threads; to change it, edit a copy.
///
/// ```swift
/// let model = NSManagedObjectModel()
/// model.entities = [company, employee]
/// let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
/// ```
open class NSManagedObjectModel: NSObject, NSCopying, @unchecked Sendable {
    // @unchecked: a model is configured on one thread and then shared; once a coordinator uses it, it is immutable:
    // every setter stops through `_checkEditable`, as Apple's framework raises for a model in use.
    var _entities: [NSEntityDescription] = []
    var _configurations: [String: [NSEntityDescription]] = [:]
    var _configurationOrder: [String] = []
    var _fetchRequestTemplates: [String: NSFetchRequest<NSFetchRequestResult>] = [:]
    var _versionIdentifiers: Set<AnyHashable> = []
    var _localizationDictionary: [String: String]?
    /// False once a coordinator uses the model.
    var _isEditable = true
    /// Where the model was loaded from, for messages.
    var _sourceURL: URL?
    /// The version's name when loaded from a model bundle (`"Model 2"`), for tools and messages.
    var _versionName: String?
    var _entitiesByName: [String: NSEntityDescription]?

    public override init() {
        super.init()
    }

    /// A model made of the entities of several models. Returns `nil` if two of them define an entity with the
    /// same name.
    public convenience init?(byMerging models: [NSManagedObjectModel]?) {
        self.init()
        var seen = Set<String>()
        var entities: [NSEntityDescription] = []
        var configurations: [(String, [String])] = []
        for model in models ?? [] {
            for entity in model._entities {
                guard let name = entity._name, seen.insert(name).inserted else { return nil }
                entities.append(entity.copy() as! NSEntityDescription)
            }
            for name in model._configurationOrder {
                configurations.append((name, model._configurations[name, default: []].compactMap(\.name)))
            }
            for (name, template) in model._fetchRequestTemplates {
                _fetchRequestTemplates[name] = template
            }
            _versionIdentifiers.formUnion(model._versionIdentifiers)
        }
        self.entities = entities
        for (name, entityNames) in configurations {
            let members = entityNames.compactMap { entitiesByName[$0] }
            setEntities((_configurations[name] ?? []) + members, forConfigurationName: name)
        }
    }

    /// A model made by merging `models`, if the result matches the store whose metadata is given; `nil`
    /// otherwise.
    public convenience init?(byMerging models: [NSManagedObjectModel], forStoreMetadata metadata: [String: Any]) {
        self.init(byMerging: models)
        guard isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) else { return nil }
    }

    /// The model's entities. Setting it makes the model their owner and resolves, by name, superentities,
    /// relationship destinations and inverses that were given by name (as in loaded or copied models).
    open var entities: [NSEntityDescription] {
        get { _entities }
        set {
            _checkEditable("entities")
            var names = Set<String>()
            for entity in newValue {
                guard let name = entity._name, !name.isEmpty else {
                    preconditionFailure("An entity of the model has no name; name every entity before adding it")
                }
                precondition(names.insert(name).inserted, "The model has two entities named '\(name)'")
            }
            for entity in _entities where entity._model === self {
                entity._model = nil
            }
            _entities = newValue
            for entity in newValue {
                entity._model = self
            }
            _invalidateCaches()
            _resolveReferencesByName()
        }
    }

    /// The entities by name.
    open var entitiesByName: [String: NSEntityDescription] {
        if let cached = _entitiesByName { return cached }
        var byName: [String: NSEntityDescription] = [:]
        for entity in _entities {
            if let name = entity._name { byName[name] = entity }
        }
        _entitiesByName = byName
        return byName
    }

    // MARK: Configurations

    /// The names of the model's configurations (the default configuration has no name and is not listed).
    open var configurations: [String] { _configurationOrder }

    /// The entities of a configuration; all entities for `nil` (the default configuration); `nil` for an unknown
    /// name.
    open func entities(forConfigurationName configuration: String?) -> [NSEntityDescription]? {
        guard let configuration, configuration != "PF_DEFAULT_CONFIGURATION_NAME" else { return _entities }
        return _configurations[configuration]
    }

    /// Makes `entities` the members of the configuration named `configuration`.
    open func setEntities(_ entities: [NSEntityDescription], forConfigurationName configuration: String) {
        _checkEditable("configurations")
        for entity in entities {
            precondition(
                entity._model === self,
                "Entity '\(entity._name ?? "")' is not part of this model; add it to `entities` before configuration '\(configuration)'"
            )
        }
        if _configurations[configuration] == nil { _configurationOrder.append(configuration) }
        _configurations[configuration] = entities
    }

    // MARK: Version identifiers and hashes

    /// The identifiers of this model version (Xcode's "Model Version Identifier"), for the developer's use.
    open var versionIdentifiers: Set<AnyHashable> {
        get { _versionIdentifiers }
        set {
            _checkEditable("versionIdentifiers")
            _versionIdentifiers = newValue
        }
    }

    /// The version hash of every entity, by entity name; stores record these to recognise their model.
    open var entityVersionHashesByName: [String: Data] {
        let computed = _isEditable ? ModelVersionHasher.versionHashes(of: _entities) : [:]
        var hashes: [String: Data] = [:]
        for entity in _entities {
            if let name = entity._name { hashes[name] = computed[ObjectIdentifier(entity)] ?? entity.versionHash }
        }
        return hashes
    }

    /// Whether the entities of the configuration have the version hashes recorded in a store's metadata, i.e.
    /// whether this model can open that store without migration. The sets are compared whole: an entity the store
    /// records and the model lacks makes them incompatible too, as its rows would be out of reach. (A store records
    /// the hashes of its whole model, so a named configuration's store may record entities of other
    /// configurations of the same model.)
    ///
    /// ```swift
    /// let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: url)
    /// if !model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) { /* migrate */ }
    /// ```
    open func isConfiguration(withName configuration: String?, compatibleWithStoreMetadata metadata: [String: Any])
        -> Bool
    {
        guard let stored = metadata[NSStoreModelVersionHashesKey] as? [String: Any],
            let entities = entities(forConfigurationName: configuration)
        else { return false }
        for entity in entities {
            guard let name = entity._name, let hash = ModelVersionHasher.storedHash(stored[name]),
                hash == entity.versionHash
            else {
                return false
            }
        }
        let names = entitiesByName
        return stored.keys.allSatisfy { names[$0] != nil }
    }

    /// Strings to localise entity and property names in messages, keyed as Apple documents
    /// (`"Entity/Employee"`, `"Property/firstName/Entity/Employee"`, `"ErrorString/…"`).
    open var localizationDictionary: [String: String]? {
        get { _localizationDictionary }
        set {
            _checkEditable("localizationDictionary")
            _localizationDictionary = newValue
        }
    }

    // MARK: Copying

    /// A deep, editable copy: new entity and property descriptions, references resolved within the copy.
    open func copy(with zone: NSZone? = nil) -> Any {
        let copy = NSManagedObjectModel()
        copy.entities = _entities.map { $0.copy() as! NSEntityDescription }
        for name in _configurationOrder {
            let members = _configurations[name, default: []].compactMap { entity in
                entity._name.flatMap { copy.entitiesByName[$0] }
            }
            copy.setEntities(members, forConfigurationName: name)
        }
        copy._fetchRequestTemplates = _fetchRequestTemplates
        copy._versionIdentifiers = _versionIdentifiers
        copy._localizationDictionary = _localizationDictionary
        copy._sourceURL = _sourceURL
        copy._versionName = _versionName
        return copy
    }

    // MARK: Editability

    var _debugName: String {
        if let url = _sourceURL { return "the model at \(url.path)" }
        let names = _entities.compactMap(\.name).sorted().prefix(4).joined(separator: ", ")
        return "the model with entities (\(names)\(_entities.count > 4 ? ", …" : ""))"
    }

    func _checkEditable(_ key: String) {
        precondition(
            _isEditable,
            """
            Can't modify an immutable model: '\(key)' of \(_debugName) — the model is in use by a persistent \
            store coordinator. Copy the model (model.copy()) to edit it.
            """)
    }

    func _invalidateCaches() {
        _entitiesByName = nil
        // Every entity is in the list: each drops its own cache only (through its subentities, a chain of n
        // entities would be visited n²/2 times).
        for entity in _entities {
            entity._dropCache()
        }
    }

    /// Resolves superentities, relationship destinations and inverses that are known only by name.
    func _resolveReferencesByName() {
        let byName = entitiesByName
        // The subentities each parent lists already, looked up once per parent rather than searched per child.
        var listed: [ObjectIdentifier: Set<ObjectIdentifier>] = [:]
        for entity in _entities {
            if entity._superentity == nil, let parentName = entity._superentityName, let parent = byName[parentName] {
                let key = ObjectIdentifier(parent)
                if listed[key] == nil { listed[key] = Set(parent._subentities.map(ObjectIdentifier.init)) }
                if listed[key, default: []].insert(ObjectIdentifier(entity)).inserted {
                    parent._subentities.append(entity)
                }
                entity._superentity = parent
            }
        }
        for entity in _entities {
            for case let relationship as NSRelationshipDescription in entity._ownProperties {
                if relationship._destinationEntity?._model !== self, let name = relationship._destinationEntityName {
                    relationship._destinationEntity = byName[name]
                }
                if relationship._inverseRelationship?._entity?._model !== self,
                    let inverseName = relationship._inverseName,
                    let destination = relationship._destinationEntity
                {
                    relationship._inverseRelationship = destination._caches.relationshipsByName[inverseName]
                }
            }
        }
        _invalidateCaches()
    }

    /// Serializes freezing: coordinators of one model may be made on several threads at once (test suites running
    /// in parallel do), and the first freezes it while the others wait to see it frozen.
    private static let freezing = NSLock()

    /// Makes the model immutable and checks that it is complete. Called when a coordinator starts using it.
    func _freeze() {
        NSManagedObjectModel.freezing.lock()
        defer { NSManagedObjectModel.freezing.unlock() }
        guard _isEditable else { return }
        for entity in _entities {
            let name = entity._name ?? ""
            for case let relationship as NSRelationshipDescription in entity._ownProperties {
                guard let destination = relationship._destinationEntity else {
                    preconditionFailure(
                        """
                        The relationship '\(relationship._name)' of entity '\(name)' in \(_debugName) has no \
                        destination entity; set destinationEntity before using the model
                        """)
                }
                precondition(
                    destination._model === self,
                    """
                    The relationship '\(relationship._name)' of entity '\(name)' leads to entity \
                    '\(destination._name ?? "")', which is not part of \(_debugName)
                    """)
            }
        }
        _isEditable = false
        _ = entitiesByName
        // Nothing that enters a version hash can change from now on: each is computed once, here.
        let hashes = ModelVersionHasher.versionHashes(of: _entities)
        for entity in _entities { entity._frozenVersionHash = hashes[ObjectIdentifier(entity)] }
    }

    /// Two models are equal when they describe the same data: the same entities with the same version hashes (every
    /// property, relationship and setting that decides what a store holds) and the same configurations, whichever
    /// file or code made them — as Apple's models compare by content.
    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSManagedObjectModel else { return false }
        if other === self { return true }
        return _entities.count == other._entities.count && configurations.sorted() == other.configurations.sorted()
            && entityVersionHashesByName == other.entityVersionHashesByName
    }

    open override var hash: Int {
        var hasher = Hasher()
        for name in _entities.compactMap(\.name).sorted() { hasher.combine(name) }
        return hasher.finalize()
    }

    open override var description: String {
        "(<NSManagedObjectModel: \(Unmanaged.passUnretained(self).toOpaque())>) isEditable \(_isEditable), "
            + "entities {" + _entities.compactMap(\.name).joined(separator: ", ") + "}"
    }
}

/// The metadata key of the store's entity version hashes (`[String: Data]`).
public let NSStoreModelVersionHashesKey = "NSStoreModelVersionHashes"
/// The metadata key of the version identifiers of the store's model.
public let NSStoreModelVersionIdentifiersKey = "NSStoreModelVersionIdentifiers"
/// The metadata key of the store's unique identifier.
public let NSStoreUUIDKey = "NSStoreUUID"
/// The metadata key of the store's type (`NSSQLiteStoreType`…).
public let NSStoreTypeKey = "NSStoreType"
/// The metadata key of the version of the framework that wrote the store.
public let NSPersistenceFrameworkVersionKey = "NSPersistenceFrameworkVersion"
/// The metadata key of the format version of the store's version hashes.
public let NSStoreModelVersionHashesVersionKey = "NSStoreModelVersionHashesVersion"
/// The metadata key of the checksum of the store's model.
public let NSStoreModelVersionChecksumKey = "NSStoreModelVersionChecksumKey"
