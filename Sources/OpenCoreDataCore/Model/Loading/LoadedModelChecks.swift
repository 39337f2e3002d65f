import XCDataModelFormat

/// Checks a model read from a file before it is assembled, so that what the model classes treat as a programmer
/// error (two entities or properties with one name, a reserved property name, an inheritance cycle, a
/// relationship leading nowhere) is reported as an error in the file instead of stopping the program.
enum LoadedModelChecks {
    /// Entity names are present and unique; parents exist; no entity inherits from itself.
    static func checkEntities(_ parents: [(name: String, parent: String?)], url: URL) throws {
        var byName: [String: String?] = [:]
        for (name, parent) in parents {
            guard !name.isEmpty else { throw ModelLoadingError.invalid(url: url, "an entity has no name") }
            guard XCDataModelNames.isEntityName(name) else {
                throw ModelLoadingError.invalid(
                    url: url, entity: name,
                    "an entity name must start with an upper-case letter and go on with \(XCDataModelNames.rest)")
            }
            guard byName.updateValue(parent, forKey: name) == nil else {
                throw ModelLoadingError.invalid(url: url, entity: name, "two entities are named '\(name)'")
            }
        }
        for (name, _) in parents {
            var chain = [name]
            var current = name
            while case let parent?? = byName[current] {
                guard byName[parent] != nil else {
                    throw ModelLoadingError.invalid(
                        url: url, entity: current, "the parent entity '\(parent)' is not in the model")
                }
                guard !chain.contains(parent) else {
                    throw ModelLoadingError.invalid(
                        url: url, entity: name,
                        "the entities inherit from each other in a cycle: "
                            + (chain + [parent]).joined(separator: " → "))
                }
                chain.append(parent)
                current = parent
            }
        }
    }

    /// Property names are present, unique within the entity, and not names `NSManagedObject` already uses.
    static func checkProperties(_ names: [String], entity: String, url: URL) throws {
        var seen = Set<String>()
        for name in names {
            guard !name.isEmpty else {
                throw ModelLoadingError.invalid(url: url, entity: entity, "a property has no name")
            }
            guard XCDataModelNames.isPropertyName(name) else {
                throw ModelLoadingError.invalid(
                    url: url, entity: entity, property: name,
                    "a property name must start with a lower-case letter and go on with \(XCDataModelNames.rest)")
            }
            guard seen.insert(name).inserted else {
                throw ModelLoadingError.invalid(
                    url: url, entity: entity, property: name, "the entity has two properties named '\(name)'")
            }
            guard !NSEntityDescription.reservedPropertyNames.contains(name) else {
                throw ModelLoadingError.invalid(
                    url: url, entity: entity, property: name,
                    "'\(name)' cannot name a property: NSManagedObject already uses it")
            }
        }
    }

    /// A fetch index name is a plain name: it becomes part of a SQLite index's name.
    static func checkIndexName(_ name: String, entity: String, url: URL) throws {
        guard XCDataModelNames.isIndexName(name) else {
            throw ModelLoadingError.invalid(
                url: url, entity: entity,
                "the fetch index name '\(name)' must start with a letter and go on with \(XCDataModelNames.rest)")
        }
    }

    /// Every key path a derived attribute's expression reads from its object names a property of the entity (and,
    /// through relationships, of their destinations), so that a model naming a missing key fails to load rather than
    /// its first save.
    static func checkDerivations(of model: NSManagedObjectModel, url: URL) throws {
        for entity in model._entities {
            for case let derived as NSDerivedAttributeDescription in entity._ownProperties {
                guard let expression = derived._derivationExpression else { continue }
                var paths: [[String]] = []
                collectKeyPaths(in: expression, into: &paths)
                for path in paths {
                    if let missing = missingKey(path, from: entity) {
                        throw ModelLoadingError.invalid(
                            url: url, entity: entity._name, property: derived._name,
                            "the derivation expression '\(expression.expressionFormat)' reads '\(missing)', which is "
                                + "not a property of the entity or of the entities its relationships lead to")
                    }
                }
            }
        }
    }

    /// The first key of `path` that is not a property where it is read, or `nil`.
    private static func missingKey(_ path: [String], from entity: NSEntityDescription) -> String? {
        var current = entity
        for key in path {
            // `@count`, `@sum`…: the rest applies to a collection.
            if key.hasPrefix("@") { return nil }
            guard let property = current._caches.propertiesByName[key] else { return key }
            guard let relationship = property as? NSRelationshipDescription,
                let destination = relationship._destinationEntity
            else { return nil }
            current = destination
        }
        return nil
    }

    /// The key paths `expression` reads from the object it is evaluated against (not those of a subquery's
    /// elements, nor those read from another expression's value).
    private static func collectKeyPaths(in expression: NSExpression, into paths: inout [[String]]) {
        switch expression.kind {
        case .keyPath(_, let components, nil): paths.append(components)
        case .keyPath(_, _, let operand?): collectKeyPaths(in: operand, into: &paths)
        case .function(_, let target, let arguments):
            if let target { collectKeyPaths(in: target, into: &paths) }
            for argument in arguments { collectKeyPaths(in: argument, into: &paths) }
        case .unionSet(let left, let right), .intersectSet(let left, let right), .minusSet(let left, let right):
            collectKeyPaths(in: left, into: &paths)
            collectKeyPaths(in: right, into: &paths)
        case .subquery(let collection, _, _): collectKeyPaths(in: collection, into: &paths)
        case .aggregate(let expressions):
            for element in expressions { collectKeyPaths(in: element, into: &paths) }
        case .conditional(_, let whenTrue, let whenFalse):
            collectKeyPaths(in: whenTrue, into: &paths)
            collectKeyPaths(in: whenFalse, into: &paths)
        case .assignment(_, let value): collectKeyPaths(in: value, into: &paths)
        case .constant, .evaluatedObject, .variable, .anyKey, .block, .symbolicIndex, .fetch: break
        }
    }

    /// Every relationship of the assembled model leads to an entity of the model.
    static func checkDestinations(of model: NSManagedObjectModel, url: URL) throws {
        for entity in model._entities {
            for case let relationship as NSRelationshipDescription in entity._ownProperties
            where relationship._destinationEntity == nil {
                throw ModelLoadingError.invalid(
                    url: url, entity: entity._name, property: relationship._name,
                    "the destination entity '\(relationship._destinationEntityName ?? "")' is not in the model")
            }
        }
    }
}
