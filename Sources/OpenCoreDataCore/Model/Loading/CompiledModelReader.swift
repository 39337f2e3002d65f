/// Reads compiled models: `.mom` files, which are `NSKeyedArchiver` archives of an `NSManagedObjectModel`. The
/// archive's object graph is decoded from its property list by key and class name, without Apple's classes.
struct CompiledModelReader {
    let archive: KeyedArchive
    /// The file, for messages.
    let url: URL

    /// Reads the `.mom` file at `url` into `model` (new and empty).
    static func load(_ url: URL, into model: NSManagedObjectModel) throws {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            let missing = !FileManager.default.fileExists(atPath: url.path)
            throw ModelLoadingError.error(
                missing ? NSFileReadNoSuchFileError : NSFileReadUnknownError, url: url,
                message: missing ? "no compiled model exists at this path" : "the file cannot be read",
                underlying: error)
        }
        try load(data, url: url, into: model)
        model._versionName = url.deletingPathExtension().lastPathComponent
    }

    /// Reads a keyed archive of a model (a `.mom` file's content, or a store's cached model) into `model`.
    static func load(_ data: Data, url: URL, into model: NSManagedObjectModel) throws {
        let archive: KeyedArchive
        do {
            archive = try KeyedArchive(data: data)
        } catch {
            throw ModelLoadingError.invalid(url: url, "the file is not a compiled model: \(error)")
        }
        do {
            try CompiledModelReader(archive: archive, url: url).decode(into: model)
        } catch let error as NSError where error.domain == NSCocoaErrorDomain {
            throw error
        } catch {
            throw ModelLoadingError.invalid(url: url, "the compiled model is damaged: \(error)")
        }
        model._sourceURL = url
    }

    private typealias Object = KeyedArchive.Object

    private func fail(_ message: String, entity: String? = nil, property: String? = nil) -> NSError {
        ModelLoadingError.invalid(url: url, entity: entity, property: property, message)
    }

    private func decode(into model: NSManagedObjectModel) throws {
        let root = try archive.rootObject()
        guard root.className == "NSManagedObjectModel" else {
            throw fail("the archive holds an \(root.className), not an NSManagedObjectModel")
        }
        var entityObjects: [Object] = []
        for entry in try archive.entries(root["NSEntities"]) {
            guard let object = try archive.object(entry.value), object.className == "NSEntityDescription" else {
                throw fail("an entry of NSEntities is not an entity description")
            }
            entityObjects.append(object)
        }
        var namesByIndex: [Int: String] = [:]
        for object in entityObjects {
            guard let name = try archive.string(object["NSEntityName"]), !name.isEmpty else {
                throw fail("an entity has no name")
            }
            namesByIndex[object.index] = name
        }
        var entities: [NSEntityDescription] = []
        for object in entityObjects {
            entities.append(try entity(object, namesByIndex: namesByIndex))
        }
        try LoadedModelChecks.checkEntities(entities.map { ($0._name ?? "", $0._superentityName) }, url: url)
        model.entities = entities
        // A model cache (`Z_MODELCACHE`) archives each subentity with copies of its inherited properties that name
        // the subentity as their owner; the superentity's declaration is the one that counts.
        for entity in entities {
            guard let parent = entity._superentity else { continue }
            let inherited = parent._caches.propertiesByName
            let own = entity._ownProperties.filter { inherited[$0._name] == nil }
            if own.count != entity._ownProperties.count { entity.properties = own }
        }
        try LoadedModelChecks.checkDestinations(of: model, url: url)
        try LoadedModelChecks.checkDerivations(of: model, url: url)
        let byName = model.entitiesByName
        for entry in try archive.entries(root["NSConfigurations"]) {
            guard let name = try archive.string(entry.key) else { continue }
            let members = try archive.elements(entry.value).compactMap { element in
                try archive.object(element).flatMap { namesByIndex[$0.index] }.flatMap { byName[$0] }
            }
            model.setEntities(members, forConfigurationName: name)
        }
        for entry in try archive.entries(root["NSFetchRequestTemplates"]) {
            guard let name = try archive.string(entry.key), let object = try archive.object(entry.value) else {
                continue
            }
            model._fetchRequestTemplates[name] = try fetchRequest(object, entityNames: namesByIndex, model: model)
        }
        for entity in entityObjects {
            guard let name = namesByIndex[entity.index], let description = byName[name] else { continue }
            for entry in try archive.entries(entity["NSProperties"]) {
                guard let object = try archive.object(entry.value), object.className == "NSFetchedPropertyDescription",
                    try owner(of: object) == entity.index,
                    let propertyName = try archive.string(object["NSPropertyName"]),
                    let fetched = description._caches.propertiesByName[propertyName] as? NSFetchedPropertyDescription,
                    let requestObject = try archive.object(object["NSFetchRequest"])
                else { continue }
                let request = try fetchRequest(requestObject, entityNames: namesByIndex, model: model)
                if request.entityName == nil, let target = try archive.string(object["_NSFetchRequestEntityName"]) {
                    request.entity = byName[target]
                }
                fetched._fetchRequest = request
            }
        }
        var identifiers = Set<AnyHashable>()
        for element in try archive.elements(root["NSVersionIdentifiers"]) {
            if let value = try archive.plainValue(element) as? AnyHashable { identifiers.insert(value) }
        }
        model._versionIdentifiers = identifiers
    }

    private func owner(of property: Object) throws -> Int? {
        try archive.object(property["NSEntity"])?.index
    }

    private func entity(_ object: Object, namesByIndex: [Int: String]) throws -> NSEntityDescription {
        let name = namesByIndex[object.index] ?? ""
        let entity = NSEntityDescription()
        entity._name = name
        entity._managedObjectClassName = try archive.string(object["NSClassNameForEntity"])
        if let parent = try archive.object(object["NSSuperentity"]) {
            guard let parentName = namesByIndex[parent.index] else {
                throw fail("the superentity is not an entity of the model", entity: name)
            }
            entity._superentityName = parentName
        }
        entity._isAbstract = object["NSIsAbstract"]?.bool ?? false
        entity._versionHashModifier = try archive.string(object["NSVersionHashModifier"]).flatMap {
            $0.isEmpty ? nil : $0
        }
        let renaming = try archive.string(object["NSRenamingIdentifier"])
        entity._renamingIdentifier = renaming == name ? nil : renaming
        entity._userInfo = try userInfo(object["NSUserInfo"])
        var properties: [NSPropertyDescription] = []
        for entry in try archive.entries(object["NSProperties"]) {
            guard let propertyObject = try archive.object(entry.value) else {
                throw fail("a property is not an archived object", entity: name)
            }
            // Subentities archive their inherited properties too; each belongs to the entity that declares it.
            guard try owner(of: propertyObject) ?? object.index == object.index else { continue }
            properties.append(try property(propertyObject, entity: name, namesByIndex: namesByIndex))
        }
        try LoadedModelChecks.checkProperties(properties.map(\._name), entity: name, url: url)
        entity.properties = properties
        entity._uniquenessConstraints = try nameLists(object["NSUniqueTuples"])
        entity._compoundIndexes = try nameLists(object["NSCompoundIndexes"])
        var indexes: [NSFetchIndexDescription] = []
        for element in try archive.elements(object["NSFetchIndexDescriptions"]) {
            guard let index = try archive.object(element) else { continue }
            var elements: [NSFetchIndexElementDescription] = []
            for item in try archive.elements(index["NSIndexElements"]) {
                guard let itemObject = try archive.object(item),
                    let propertyName = try archive.string(itemObject["NSPropertyName"])
                else { continue }
                let type = NSFetchIndexElementType(
                    rawValue: UInt(exactly: itemObject["NSFetchIndexElementType"]?.integer ?? 0) ?? 0)
                let description = NSFetchIndexElementDescription(
                    propertyName: propertyName, collationType: type ?? .binary)
                description._isAscending = itemObject["NSAscending"]?.bool ?? true
                elements.append(description)
            }
            let indexName = try archive.string(index["NSIndexName"]) ?? ""
            try LoadedModelChecks.checkIndexName(indexName, entity: name, url: url)
            let description = NSFetchIndexDescription(name: indexName, elements: elements)
            if let predicate = try archive.object(index["NSPartialIndexPredicate"]) {
                description._partialIndexPredicate = try ArchivedPredicateDecoder(archive: archive).predicate(predicate)
            }
            indexes.append(description)
        }
        entity.indexes = indexes
        return entity
    }

    /// Lists of property names (uniqueness constraints, compound indexes); an element may be an archived
    /// property description, which stands for its name.
    private func nameLists(_ value: PropertyListValue?) throws -> [[Any]] {
        try archive.elements(value).map { list in
            try archive.elements(list).compactMap { element -> Any? in
                if let name = try archive.string(element) { return name }
                return try archive.object(element).flatMap { try archive.string($0["NSPropertyName"]) }
            }
        }
    }

    private func userInfo(_ value: PropertyListValue?) throws -> [AnyHashable: Any]? {
        let entries = try archive.entries(value)
        guard !entries.isEmpty else { return nil }
        var info: [AnyHashable: Any] = [:]
        for entry in entries {
            guard let key = try archive.string(entry.key) else { continue }
            info[key] = try archive.plainValue(entry.value) ?? NSNull()
        }
        return info
    }

    private func property(_ object: Object, entity: String, namesByIndex: [Int: String]) throws
        -> NSPropertyDescription
    {
        guard let name = try archive.string(object["NSPropertyName"]), !name.isEmpty else {
            throw fail("a property has no name", entity: entity)
        }
        let property: NSPropertyDescription
        switch object.className {
        case "NSAttributeDescription":
            property = try attribute(object, into: NSAttributeDescription(), entity: entity, name: name)
        case "NSDerivedAttributeDescription":
            let derived = NSDerivedAttributeDescription()
            if let expression = try archive.object(object["NSDerivationExpression"]) {
                derived._derivationExpression = try derivation(expression)
            }
            property = try attribute(object, into: derived, entity: entity, name: name)
        case "NSCompositeAttributeDescription":
            let composite = NSCompositeAttributeDescription()
            composite._elements = try archive.elements(object["NSCompositeElements"]).compactMap { element in
                guard let elementObject = try archive.object(element) else { return nil }
                return try self.property(elementObject, entity: entity, namesByIndex: namesByIndex)
                    as? NSAttributeDescription
            }
            property = try attribute(object, into: composite, entity: entity, name: name)
        case "NSRelationshipDescription":
            let relationship = NSRelationshipDescription()
            if let destination = try archive.string(object["_NSDestinationEntityName"]) {
                relationship._destinationEntityName = destination
            } else if let destination = try archive.object(object["NSDestinationEntity"]) {
                relationship._destinationEntityName = namesByIndex[destination.index]
            }
            guard relationship._destinationEntityName != nil else {
                throw fail("the relationship has no destination entity", entity: entity, property: name)
            }
            if let inverse = try archive.string(object["_NSInverseRelationshipName"]) {
                relationship._inverseName = inverse
            } else if let inverse = try archive.object(object["NSInverseRelationship"]) {
                relationship._inverseName = try archive.string(inverse["NSPropertyName"])
            }
            relationship._minCount = Int(object["NSMinCount"]?.integer ?? 0)
            relationship._maxCount = Int(object["NSMaxCount"]?.integer ?? 1)
            relationship._deleteRule =
                NSDeleteRule(rawValue: UInt(exactly: object["NSDeleteRule"]?.integer ?? 1) ?? 1) ?? .nullifyDeleteRule
            property = relationship
        case "NSFetchedPropertyDescription":
            property = NSFetchedPropertyDescription()
        default:
            throw fail("unknown property class \(object.className)", entity: entity, property: name)
        }
        property._name = name
        try applyCommon(object, to: property)
        return property
    }

    /// Flags of `_P` as Core Data encodes them: 2 optional, 8 transient, 0x10 no predicates, 0x20 no warnings,
    /// 0x40 no user info, 0x80 no modifier, 0x100 indexed by Spotlight, 0x200 stored in an external record,
    /// 0x400 ordered; without `_P`, the Boolean keys.
    private func applyCommon(_ object: Object, to property: NSPropertyDescription) throws {
        let flags = object["_P"]?.integer ?? 0
        if flags != 0 {
            property._isOptional = flags & 0x2 != 0
            property._isTransient = flags & 0x8 != 0
            property._isIndexedBySpotlight = flags & 0x100 != 0
            property._isStoredInExternalRecord = flags & 0x200 != 0
            (property as? NSRelationshipDescription)?._isOrdered = flags & 0x400 != 0
            (property as? NSAttributeDescription)?._allowsCloudEncryption = flags & 0x800 != 0
        } else {
            property._isOptional = object["NSIsOptional"]?.bool ?? false
            property._isTransient = object["NSIsTransient"]?.bool ?? false
            property._isIndexedBySpotlight = object["NSIndexedBySpotlight"]?.bool ?? false
            property._isStoredInExternalRecord = object["NSIsStoredInTruth"]?.bool ?? false
            (property as? NSRelationshipDescription)?._isOrdered = object["NSIsOrdered"]?.bool ?? false
            (property as? NSAttributeDescription)?._allowsCloudEncryption =
                object["NSAllowsCloudEncryption"]?.bool ?? false
        }
        property._isIndexed = object["NSIsIndexed"]?.bool ?? false
        property._versionHashModifier = try archive.string(object["NSVersionHashModifier"]).flatMap {
            $0.isEmpty ? nil : $0
        }
        let renaming = try archive.string(object["NSRenamingIdentifier"])
        property._renamingIdentifier = renaming == property._name ? nil : renaming
        property._userInfo = try userInfo(object["NSUserInfo"])
        let predicates = try archive.elements(object["NSValidationPredicates"])
        let warnings = try archive.elements(object["NSValidationWarnings"])
        if !predicates.isEmpty {
            let decoder = ArchivedPredicateDecoder(archive: archive)
            property._validationPredicates = try predicates.compactMap { try archive.object($0) }.map {
                try decoder.predicate($0)
            }
            property._validationWarnings = try warnings.map { try archive.plainValue($0) ?? "" }
            guard property._validationPredicates.count == property._validationWarnings.count else {
                throw fail(
                    "the property has \(predicates.count) validation predicates for \(warnings.count) warnings",
                    property: property._name)
            }
        }
    }

    /// `NSFlagsKey` of an attribute: 4 external binary storage, 0x10 preserved in history on deletion.
    private func attribute(_ object: Object, into attribute: NSAttributeDescription, entity: String, name: String)
        throws -> NSAttributeDescription
    {
        let rawType = UInt(exactly: object["NSAttributeType"]?.integer ?? 0) ?? UInt.max
        guard let type = NSAttributeType(rawValue: rawType) else {
            throw fail("unknown attribute type \(rawType)", entity: entity, property: name)
        }
        attribute._attributeType = type
        let className = try archive.string(object["NSAttributeValueClassName"])
        if className != type.defaultValueClassName { attribute._attributeValueClassName = className }
        attribute._valueTransformerName = try archive.string(object["NSValueTransformerName"])
        let flags = object["NSFlagsKey"]?.integer ?? 0
        attribute._allowsExternalBinaryDataStorage = flags & 0x4 != 0
        attribute._preservesValueInHistoryOnDeletion = flags & 0x10 != 0
        attribute._defaultValue = try archive.plainValue(object["NSDefaultValue"])
        return attribute
    }

    /// A derivation expression. Besides what predicate formats express, derivations call functions only stores
    /// evaluate, such as `canonical:(title)`: such a call becomes a function expression of that name, as
    /// `XMLModelReader.derivation(_:)` makes it.
    private func derivation(_ object: Object) throws -> NSExpression {
        let decoder = ArchivedPredicateDecoder(archive: archive)
        do {
            return try decoder.expression(object)
        } catch {
            guard object["NSExpressionType"]?.integer == 4, let name = try archive.string(object["NSSelectorName"]),
                let operand = try archive.object(object["NSOperand"]),
                try archive.string(operand["NSConstantValueClassName"]) != nil
            else { throw error }
            let arguments = try archive.elements(object["NSArguments"]).compactMap { try archive.object($0) }.map {
                try decoder.expression($0)
            }
            return NSExpression(forFunction: name, arguments: arguments)
        }
    }

    private func fetchRequest(_ object: Object, entityNames: [Int: String], model: NSManagedObjectModel) throws
        -> NSFetchRequest<NSFetchRequestResult>
    {
        let request = NSFetchRequest<NSFetchRequestResult>()
        if let entity = try archive.object(object["NSEntity"]), let name = entityNames[entity.index] {
            request.entity = model.entitiesByName[name]
        } else if let name = try archive.string(object["NSEntityName"]) {
            request.entity = model.entitiesByName[name]
        }
        if let predicate = try archive.object(object["NSPredicate"]) {
            request.predicate = try ArchivedPredicateDecoder(archive: archive).predicate(predicate)
        }
        let sorts = try archive.elements(object["NSSortDescriptors"]).compactMap { element -> NSSortDescriptor? in
            guard let sort = try archive.object(element) else { return nil }
            let selector = try archive.string(sort["NSSelector"]).map { Selector($0) }
            return NSSortDescriptor(
                key: try archive.string(sort["NSKey"]), ascending: sort["NSAscending"]?.bool ?? true,
                selector: selector)
        }
        if !sorts.isEmpty { request.sortDescriptors = sorts }
        request.fetchLimit = Int(object["NSFetchLimit"]?.integer ?? 0)
        request.fetchOffset = Int(object["NSFetchOffset"]?.integer ?? 0)
        request.fetchBatchSize = Int(object["NSBatchSize"]?.integer ?? 0)
        request.resultType = NSFetchRequestResultType(
            rawValue: UInt(exactly: object["NSResultType"]?.integer ?? 0) ?? 0)
        if object["NSHasFetchRequestFlags"]?.bool == true, let flags = object["NSFetchRequestFlags"]?.integer {
            request.returnsDistinctResults = flags & 0x1 != 0
            request.includesSubentities = flags & 0x2 != 0
            request.includesPropertyValues = flags & 0x4 != 0
            request.returnsObjectsAsFaults = flags & 0x8 != 0
            request.includesPendingChanges = flags & 0x10 != 0
            request.shouldRefreshRefetchedObjects = flags & 0x20 != 0
        }
        return request
    }
}

/// A `.momd` folder: the compiled versions of a model (`<version>.mom`) and `VersionInfo.plist`, which names the
/// current version and records Apple's version hashes.
struct CompiledModelBundle {
    let url: URL
    let versionNames: [String]
    /// `nil` when `VersionInfo.plist` is missing or names no version of the folder, and there are several.
    let currentVersionName: String?
    private let currentVersionProblem: NSError?

    init(contentsOf url: URL) throws {
        self.url = url
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: url.path)
        } catch {
            let missing = !FileManager.default.fileExists(atPath: url.path)
            throw ModelLoadingError.error(
                missing ? NSFileReadNoSuchFileError : NSFileReadUnknownError, url: url,
                message: missing ? "no compiled model exists at this path" : "the folder cannot be read",
                underlying: error)
        }
        let versions = names.filter { $0.hasSuffix(".mom") }.map { String($0.dropLast(4)) }.sorted {
            $0.compare($1, options: [.numeric, .caseInsensitive]) == .orderedAscending
        }
        guard !versions.isEmpty else {
            throw ModelLoadingError.invalid(url: url, "the compiled model folder holds no .mom file")
        }
        versionNames = versions
        let infoURL = url.appendingPathComponent("VersionInfo.plist")
        let info = (try? Data(contentsOf: infoURL)).flatMap {
            try? PropertyListSerialization.propertyList(from: $0, format: nil) as? [String: Any]
        }
        if let current = info?["NSManagedObjectModel_CurrentVersionName"] as? String, versions.contains(current) {
            currentVersionName = current
            currentVersionProblem = nil
        } else if versions.count == 1 {
            currentVersionName = versions[0]
            currentVersionProblem = nil
        } else {
            currentVersionName = nil
            currentVersionProblem = ModelLoadingError.invalid(
                url: infoURL,
                "the folder has \(versions.count) versions but VersionInfo.plist does not name the current one")
        }
    }

    /// The name of the current version.
    func currentVersion() throws -> String {
        guard let currentVersionName else {
            throw currentVersionProblem ?? ModelLoadingError.invalid(url: url, "no current version")
        }
        return currentVersionName
    }

    func loadVersion(_ name: String, into model: NSManagedObjectModel) throws {
        try CompiledModelReader.load(url.appendingPathComponent(name + ".mom"), into: model)
    }
}
