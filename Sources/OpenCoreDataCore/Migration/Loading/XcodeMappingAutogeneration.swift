// The value expressions Xcode's mapping compiler generates for property mappings the editor leaves empty (checked
// against the corpus's V2toV3.cdm, compiled from the V2toV3.xcmappingmodel beside it):
//
// - an attribute whose source entity has an attribute of the same name: `$source.<name>`;
// - a relationship with a source key path chosen in the editor:
//   `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "<mapping>", <key path>)`;
// - a relationship whose source entity has a relationship of the same name: the same call with the one entity
//   mapping that migrates that relationship's objects into the destination relationship's entity, or, when several
//   do (its destination has subentities, each mapped on its own),
//   `FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:", "<name>", $source.<name>)`;
// - anything else: no expression.

extension NSPropertyMapping {
    /// What Xcode's editor recorded for an empty value expression, to be generated once the models are known.
    struct Generation {
        var isRelationship: Bool
        var sourceMappingName: String?
        var sourceKeyPath: String?
    }
}

enum XcodeMappingAutogeneration {
    /// Generates the expressions still pending in `mapping`, reading the entities of the two models.
    static func complete(
        _ mapping: NSMappingModel, sourceModel: NSManagedObjectModel, destinationModel: NSManagedObjectModel
    ) {
        for entityMapping in mapping._entityMappings {
            let source = entityMapping.sourceEntityName.flatMap { sourceModel.entitiesByName[$0] }
            let destination = entityMapping.destinationEntityName.flatMap { destinationModel.entitiesByName[$0] }
            for propertyMapping in (entityMapping.attributeMappings ?? []) + (entityMapping.relationshipMappings ?? [])
            {
                guard let generation = propertyMapping._generation, propertyMapping.valueExpression == nil,
                    let name = propertyMapping.name
                else { continue }
                propertyMapping._generation = nil
                guard let source else { continue }
                if !generation.isRelationship {
                    if let attribute = source._caches.attributesByName[name], !attribute._isTransient {
                        propertyMapping.valueExpression = MappingInference.sourceValue(name)
                    }
                    continue
                }
                propertyMapping.valueExpression = relationshipExpression(
                    name, generation, source: source,
                    destination: destination?._caches.relationshipsByName[name], in: mapping)
            }
        }
    }

    private static func relationshipExpression(
        _ name: String, _ generation: NSPropertyMapping.Generation, source: NSEntityDescription,
        destination: NSRelationshipDescription?, in mapping: NSMappingModel
    ) -> NSExpression? {
        let manager = NSExpression(forVariable: NSMigrationManagerKey)
        func call(_ selector: String, _ first: String, _ objects: NSExpression) -> NSExpression {
            NSExpression(
                forFunction: manager, selectorName: selector,
                arguments: [NSExpression(forConstantValue: first), objects])
        }
        if let keyPath = generation.sourceKeyPath, let mappingName = generation.sourceMappingName,
            let objects = try? NSExpression(validatingFormat: keyPath)
        {
            return call("destinationInstancesForEntityMappingNamed:sourceInstances:", mappingName, objects)
        }
        guard let sourceRelationship = source._caches.relationshipsByName[name], !sourceRelationship._isTransient,
            let sourceTarget = sourceRelationship._destinationEntity
        else { return nil }
        let wanted = destination?._destinationEntity?._name
        let candidates = mapping._entityMappings.filter { candidate in
            guard let candidateSource = candidate.sourceEntityName,
                let candidateEntity = sourceTarget.managedObjectModel.entitiesByName[candidateSource],
                candidateEntity.isKindOf(entity: sourceTarget)
            else { return false }
            return wanted == nil || candidate.destinationEntityName == wanted
                || candidate.destinationEntityName.flatMap {
                    destination?._destinationEntity?.managedObjectModel
                        .entitiesByName[$0]
                }.map { target in destination?._destinationEntity.map { target.isKindOf(entity: $0) } ?? false } == true
        }
        let objects = MappingInference.sourceValue(name)
        switch candidates.count {
        case 0: return nil
        case 1: return call("destinationInstancesForEntityMappingNamed:sourceInstances:", candidates[0].name, objects)
        default: return call("destinationInstancesForSourceRelationshipNamed:sourceInstances:", name, objects)
        }
    }
}
