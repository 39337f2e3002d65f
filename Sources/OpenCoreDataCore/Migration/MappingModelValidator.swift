// A mapping model may come from a file, and its expressions run against managed objects, which stop the program
// for a key they do not have (as Apple's raise). So before a migration starts, every entity mapping is checked
// against the models, and every expression for what evaluation could not survive: key paths on `$source` and
// `$destination` must name properties of their entities, methods called on `$manager` must be its own. What only
// evaluation can tell (a method a policy does not answer) is reported as an error when it happens.

struct MappingModelValidator {
    let manager: NSMigrationManager
    let mapping: NSMappingModel

    /// How deeply expressions may nest.
    static let maximumDepth = 64

    /// Keys every managed object answers besides its properties.
    static let objectKeys: Set<String> = [
        "objectID", "entity", "managedObjectContext", "self", "isInserted", "inserted", "isUpdated", "updated",
        "isDeleted", "deleted", "isFault", "fault", "hasChanges",
    ]

    /// Methods of managed objects `FUNCTION($source, …)` may call.
    static let objectMethods: Set<String> = ["valueForKey:", "valueForKeyPath:", "self", "description"]

    func validate() throws {
        for entityMapping in mapping._entityMappings {
            let name = entityMapping.name ?? ""
            let source = try entity(
                entityMapping.sourceEntityName, hash: entityMapping.sourceEntityVersionHash, in: manager.sourceModel,
                mapping: name, role: "source")
            let destination = try entity(
                entityMapping.destinationEntityName, hash: entityMapping.destinationEntityVersionHash,
                in: manager.destinationModel, mapping: name, role: "destination")
            let context = Context(mapping: name, source: source, destination: destination)
            if let expression = entityMapping.sourceExpression {
                try check(expression, context, what: "the source expression", depth: 0)
            }
            for (mappings, kind) in [
                (entityMapping.attributeMappings, "attribute"), (entityMapping.relationshipMappings, "relationship"),
            ] {
                for propertyMapping in mappings ?? [] {
                    let propertyName = propertyMapping.name ?? ""
                    if let destination {
                        let property = destination._caches.propertiesByName[propertyName]
                        let matches =
                            kind == "attribute"
                            ? property is NSAttributeDescription : property is NSRelationshipDescription
                        guard matches else {
                            throw failure(
                                "its \(kind) mapping '\(propertyName)' names no \(kind) of destination entity "
                                    + "'\(destination._name ?? "")'", mapping: name)
                        }
                    }
                    if let expression = propertyMapping.valueExpression {
                        try check(expression, context, what: "the value of '\(propertyName)'", depth: 0)
                    }
                }
            }
        }
    }

    private struct Context {
        let mapping: String
        let source: NSEntityDescription?
        let destination: NSEntityDescription?
    }

    private func failure(_ reason: String, mapping: String) -> NSError {
        coreDataError(
            NSMigrationError, "The mapping model cannot migrate: entity mapping '\(mapping)': \(reason)",
            userInfo: ["entityMapping": mapping])
    }

    private func entity(
        _ name: String?, hash: Data?, in model: NSManagedObjectModel, mapping: String, role: String
    ) throws -> NSEntityDescription? {
        guard let name else { return nil }
        guard let entity = model.entitiesByName[name] else {
            throw failure("its \(role) entity '\(name)' is not in the migration's \(role) model", mapping: mapping)
        }
        if let hash, hash != entity.versionHash {
            throw failure(
                "it was made for another version of \(role) entity '\(name)' (the version hashes differ); use the "
                    + "mapping model made for these two model versions", mapping: mapping)
        }
        return entity
    }

    private func check(_ expression: NSExpression, _ context: Context, what: String, depth: Int) throws {
        guard depth < Self.maximumDepth else {
            throw failure("\(what) nests more than \(Self.maximumDepth) deep", mapping: context.mapping)
        }
        func recurse(_ child: NSExpression) throws { try check(child, context, what: what, depth: depth + 1) }
        switch expression.kind {
        case .constant, .evaluatedObject, .variable, .symbolicIndex, .block:
            break
        case .keyPath(_, let components, let operand):
            guard let operand else { break }
            switch operand.kind {
            case .variable(NSMigrationSourceObjectKey):
                try checkKeys(components, of: context.source, context, what: what)
            case .variable(NSMigrationDestinationObjectKey):
                try checkKeys(components, of: context.destination, context, what: what)
            case .variable, .evaluatedObject:
                break
            default:
                throw failure(
                    "\(what), \(expression.expressionFormat), reads a key path of a computed value, which cannot be "
                        + "checked before the migration; read it in an entity migration policy",
                    mapping: context.mapping)
            }
        case .function(let name, let target, let arguments):
            for argument in arguments { try recurse(argument) }
            guard let target else {
                guard
                    PredicateBuiltinFunctions.arity[name] == nil
                        || PredicateBuiltinFunctions.arity[name] == arguments.count
                else {
                    throw failure("\(what) calls \(name) with \(arguments.count) arguments", mapping: context.mapping)
                }
                if PredicateBuiltinFunctions.arity[name] == nil {
                    throw failure("\(what) calls the unknown function \(name)", mapping: context.mapping)
                }
                break
            }
            try recurse(target)
            switch target.kind {
            case .variable(NSMigrationManagerKey):
                guard NSMigrationManager.functionNames.contains(name) else {
                    throw failure(
                        "\(what) calls '\(name)' on the migration manager, which has no such method",
                        mapping: context.mapping)
                }
            case .variable(NSMigrationSourceObjectKey), .variable(NSMigrationDestinationObjectKey):
                guard Self.objectMethods.contains(name) else {
                    throw failure(
                        "\(what) calls '\(name)' on a managed object; only valueForKey: and valueForKeyPath: can be "
                            + "called", mapping: context.mapping)
                }
                var entity = context.destination
                if case .variable(NSMigrationSourceObjectKey) = target.kind { entity = context.source }
                if name == "valueForKey:" || name == "valueForKeyPath:" {
                    guard case .constant(let key as String)? = arguments.first?.kind else {
                        throw failure("\(what) reads a key that is not a constant string", mapping: context.mapping)
                    }
                    try checkKeys(
                        name == "valueForKey:" ? [key] : KeyValueCodingPath.split(key), of: entity, context, what: what)
                }
            default:
                break
            }
        case .unionSet(let left, let right), .intersectSet(let left, let right), .minusSet(let left, let right):
            try recurse(left)
            try recurse(right)
        case .aggregate(let expressions):
            for element in expressions { try recurse(element) }
        case .conditional(let predicate, let whenTrue, let whenFalse):
            try check(predicate, context, what: what, depth: depth + 1)
            try recurse(whenTrue)
            try recurse(whenFalse)
        case .assignment(_, let value):
            try recurse(value)
        case .fetch(let request, let fetchContext, _):
            try recurse(request)
            try recurse(fetchContext)
        case .subquery, .anyKey:
            throw failure(
                "\(what), \(expression.expressionFormat), is not supported in mapping expressions; compute it in an "
                    + "entity migration policy", mapping: context.mapping)
        }
    }

    private func check(_ predicate: NSPredicate, _ context: Context, what: String, depth: Int) throws {
        guard depth < Self.maximumDepth else {
            throw failure("\(what) nests more than \(Self.maximumDepth) deep", mapping: context.mapping)
        }
        switch predicate {
        case let compound as NSCompoundPredicate:
            for case let child as NSPredicate in compound.subpredicates {
                try check(child, context, what: what, depth: depth + 1)
            }
        case let comparison as NSComparisonPredicate:
            try check(comparison.leftExpression, context, what: what, depth: depth + 1)
            try check(comparison.rightExpression, context, what: what, depth: depth + 1)
        default:
            break
        }
    }

    /// The keys of a key path read from an object of `entity`: each must be a property (or a key every managed
    /// object answers); relationships lead on to their destination entity.
    private func checkKeys(_ components: [String], of entity: NSEntityDescription?, _ context: Context, what: String)
        throws
    {
        var current = entity
        for key in components {
            guard let entity = current, !key.hasPrefix("@"), !Self.objectKeys.contains(key) else { return }
            guard let property = entity._caches.propertiesByName[key] else {
                throw failure(
                    "\(what) reads '\(key)', which entity '\(entity._name ?? "")' does not have",
                    mapping: context.mapping)
            }
            current = (property as? NSRelationshipDescription)?._destinationEntity
        }
    }
}
