// Lightweight migration's mapping model, inferred from the differences between two models as Apple's framework
// infers it (Core Data Model Versioning and Data Migration Programming Guide, "Lightweight Migration"):
//
// - entities and properties are matched by renaming identifier (each answers its own name when unset, so that an
//   identifier is the canonical name across versions), then by name;
// - attributes and relationships may be added or removed; an attribute may change between optional and
//   non-optional, and between numeric types; a relationship may change between to-one and to-many, and between
//   ordered and unordered;
// - entities may be added, removed or renamed; new parents and children may be added and entities moved out of a
//   hierarchy, but two entities from different source hierarchies may not end up in one destination hierarchy.
//
// Anything else throws `NSInferredMappingModelError` (134190) naming what could not be inferred.

extension NSMappingModel {
    /// A mapping model that migrates data of `sourceModel` to `destinationModel`, inferred from their differences.
    ///
    /// ```swift
    /// let mapping = try NSMappingModel.inferredMappingModel(forSourceModel: version1, destinationModel: version2)
    /// ```
    ///
    /// Throws `NSInferredMappingModelError` (134190) when a change is not one lightweight migration can infer (an
    /// attribute changed to an unrelated type, entities of two hierarchies merged into one…); the message names it.
    public class func inferredMappingModel(
        forSourceModel sourceModel: NSManagedObjectModel, destinationModel: NSManagedObjectModel
    ) throws -> NSMappingModel {
        let pairs = MappingInference.pairEntities(source: sourceModel, destination: destinationModel)
        try MappingInference.checkHierarchies(pairs)
        var mappings: [NSEntityMapping] = []
        var pairedSources = Set<ObjectIdentifier>()
        for (destination, source) in pairs {
            let mapping = NSEntityMapping()
            mapping.destinationEntityName = destination._name
            mapping.destinationEntityVersionHash = destination.versionHash
            guard let source else {
                mapping.name = destination._name ?? ""
                mapping.mappingType = .addEntityMappingType
                mappings.append(mapping)
                continue
            }
            pairedSources.insert(ObjectIdentifier(source))
            let sourceName = source._name ?? ""
            mapping.name = "\(sourceName)To\(destination._name ?? "")"
            mapping.sourceEntityName = sourceName
            mapping.sourceEntityVersionHash = source.versionHash
            mapping.mappingType =
                source.versionHash == destination.versionHash ? .copyEntityMappingType : .transformEntityMappingType
            mapping.sourceExpression = MappingInference.sourceExpression(for: sourceName)
            mapping.attributeMappings = try MappingInference.attributeMappings(from: source, to: destination)
            mapping.relationshipMappings = try MappingInference.relationshipMappings(
                from: source, to: destination, pairs: pairs)
            mappings.append(mapping)
        }
        for source in sourceModel._entities where !pairedSources.contains(ObjectIdentifier(source)) {
            let mapping = NSEntityMapping()
            mapping.name = source._name ?? ""
            mapping.mappingType = .removeEntityMappingType
            mapping.sourceEntityName = source._name
            mapping.sourceEntityVersionHash = source.versionHash
            mappings.append(mapping)
        }
        let model = NSMappingModel()
        model._entityMappings = mappings
        model._isInferred = true
        return model
    }
}

/// The rules of lightweight migration's inference.
enum MappingInference {
    /// Each destination entity with the source entity it migrates from, if any, in destination-model order.
    static func pairEntities(source: NSManagedObjectModel, destination: NSManagedObjectModel)
        -> [(destination: NSEntityDescription, source: NSEntityDescription?)]
    {
        var taken = Set<ObjectIdentifier>()
        func take(_ matches: (NSEntityDescription) -> Bool) -> NSEntityDescription? {
            guard let found = source._entities.first(where: { !taken.contains(ObjectIdentifier($0)) && matches($0) })
            else { return nil }
            taken.insert(ObjectIdentifier(found))
            return found
        }
        // Renaming identifiers first, across all entities, so that a name reused by a renamed entity does not
        // capture another entity's data.
        var pairs: [(NSEntityDescription, NSEntityDescription?)] = destination._entities.map { entity in
            let identifier = entity.renamingIdentifier
            return (entity, entity._renamingIdentifier == nil ? nil : take { $0.renamingIdentifier == identifier })
        }
        for index in pairs.indices where pairs[index].1 == nil {
            let entity = pairs[index].0
            let identifier = entity.renamingIdentifier
            pairs[index].1 =
                take { $0.renamingIdentifier == identifier } ?? take { $0._name == identifier }
                ?? take { $0._name == entity._name }
        }
        return pairs
    }

    /// Two destination entities of one hierarchy (one table) must come from one source hierarchy.
    static func checkHierarchies(_ pairs: [(destination: NSEntityDescription, source: NSEntityDescription?)]) throws {
        var sourceRootOfDestinationRoot: [ObjectIdentifier: NSEntityDescription] = [:]
        for (destination, source) in pairs {
            guard let source else { continue }
            let destinationRoot = ObjectIdentifier(root(of: destination))
            let sourceRoot = root(of: source)
            if let existing = sourceRootOfDestinationRoot[destinationRoot], existing !== sourceRoot {
                throw inferenceError(
                    "entity '\(destination._name ?? "")' joins the hierarchy of '\(root(of: destination)._name ?? "")', "
                        + "but its source entity '\(source._name ?? "")' is not in the hierarchy of "
                        + "'\(existing._name ?? "")'; lightweight migration cannot merge entity hierarchies")
            }
            sourceRootOfDestinationRoot[destinationRoot] = sourceRoot
        }
    }

    static func root(of entity: NSEntityDescription) -> NSEntityDescription {
        var current = entity
        while let parent = current._superentity { current = parent }
        return current
    }

    /// `FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", name, "TRUEPREDICATE"),
    /// $manager.sourceContext, NO)`: every object of the source entity, as Xcode writes a mapping's source.
    static func sourceExpression(for entityName: String) -> NSExpression {
        let manager = NSExpression(forVariable: "manager")
        let request = NSExpression(
            forFunction: manager, selectorName: "fetchRequestForSourceEntityNamed:predicateString:",
            arguments: [NSExpression(forConstantValue: entityName), NSExpression(forConstantValue: "TRUEPREDICATE")])
        let context = NSExpression(kind: .keyPath("sourceContext", components: ["sourceContext"], operand: manager))
        return NSFetchRequestExpression.expression(forFetch: request, context: context, countOnly: false)
    }

    /// `$source.<name>`.
    static func sourceValue(_ name: String) -> NSExpression {
        NSExpression(kind: .keyPath(name, components: [name], operand: NSExpression(forVariable: "source")))
    }

    /// The source property a destination property migrates from: the one with its renaming identifier, else the
    /// one with its name.
    static func sourceProperty<Property: NSPropertyDescription>(
        for property: NSPropertyDescription, in candidates: [String: Property]
    ) -> Property? {
        let identifier = property.renamingIdentifier ?? property._name
        let sorted = candidates.values.sorted { $0._name < $1._name }
        return sorted.first { $0.renamingIdentifier == identifier && !$0._isTransient }
            ?? candidates[identifier].flatMap { $0._isTransient ? nil : $0 }
            ?? candidates[property._name].flatMap { $0._isTransient ? nil : $0 }
    }

    static func attributeMappings(from source: NSEntityDescription, to destination: NSEntityDescription) throws
        -> [NSPropertyMapping]
    {
        var mappings: [NSPropertyMapping] = []
        let sourceAttributes = source._caches.attributesByName
        for case let attribute as NSAttributeDescription in destination._caches.allProperties
        where !attribute._isTransient {
            guard !(attribute is NSDerivedAttributeDescription),
                let match = sourceProperty(for: attribute, in: sourceAttributes)
            else {
                mappings.append(NSPropertyMapping(name: attribute._name, valueExpression: nil))
                continue
            }
            guard canConvert(match._attributeType, to: attribute._attributeType) else {
                throw inferenceError(
                    "attribute '\(destination._name ?? "").\(attribute._name)' changed from "
                        + "\(match._attributeType.modelEditorName) to \(attribute._attributeType.modelEditorName); "
                        + "lightweight migration converts only between numeric types — use a mapping model")
            }
            mappings.append(NSPropertyMapping(name: attribute._name, valueExpression: sourceValue(match._name)))
        }
        return mappings
    }

    static func relationshipMappings(
        from source: NSEntityDescription, to destination: NSEntityDescription,
        pairs: [(destination: NSEntityDescription, source: NSEntityDescription?)]
    ) throws -> [NSPropertyMapping] {
        var mappings: [NSPropertyMapping] = []
        let sourceRelationships = source._caches.relationshipsByName
        for case let relationship as NSRelationshipDescription in destination._caches.allProperties
        where !relationship._isTransient {
            guard let match = sourceProperty(for: relationship, in: sourceRelationships) else {
                mappings.append(NSPropertyMapping(name: relationship._name, valueExpression: nil))
                continue
            }
            // The source relationship's objects must become objects the destination relationship can hold.
            let target = match._destinationEntity.flatMap { sourceTarget in
                pairs.first { $0.source === sourceTarget }?.destination
            }
            guard let target, let wanted = relationship._destinationEntity,
                target.isKindOf(entity: wanted) || wanted.isKindOf(entity: target)
            else {
                throw inferenceError(
                    "relationship '\(destination._name ?? "").\(relationship._name)' leads to "
                        + "'\(relationship._destinationEntity?._name ?? "")', but its source relationship "
                        + "'\(source._name ?? "").\(match._name)' leads to "
                        + "'\(match._destinationEntity?._name ?? "")', which does not migrate to it")
            }
            let expression = NSExpression(
                forFunction: NSExpression(forVariable: "manager"),
                selectorName: "destinationInstancesForSourceRelationshipNamed:sourceInstances:",
                arguments: [NSExpression(forConstantValue: match._name), sourceValue(match._name)])
            mappings.append(NSPropertyMapping(name: relationship._name, valueExpression: expression))
        }
        return mappings
    }

    /// Whether lightweight migration converts values of `source` type to `destination` type.
    static func canConvert(_ source: NSAttributeType, to destination: NSAttributeType) -> Bool {
        if source == destination { return true }
        let numeric: Set<NSAttributeType> = [
            .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .decimalAttributeType,
            .doubleAttributeType, .floatAttributeType, .booleanAttributeType,
        ]
        if numeric.contains(source) && numeric.contains(destination) { return true }
        // The same bytes in the store, read the same way.
        let blobs: Set<NSAttributeType> = [.binaryDataAttributeType, .transformableAttributeType]
        return blobs.contains(source) && blobs.contains(destination)
    }

    static func inferenceError(_ reason: String) -> NSError {
        coreDataError(
            NSInferredMappingModelError, "Cannot infer a mapping model for lightweight migration: \(reason)",
            userInfo: ["reason": reason])
    }
}
