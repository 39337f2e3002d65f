import Foundation

/// Checks that a model's references hold together: parents, destinations, inverses, composites, configuration
/// members and template entities exist, names are unique, and no entity inherits from itself.
struct XCDataModelValidator {
    let model: XCDataModel
    let url: URL

    func validate() throws(XCDataModelError) {
        var entitiesByName: [String: XCDataModel.Entity] = [:]
        for entity in model.entities {
            try checkNames(of: entity)
            guard entitiesByName.updateValue(entity, forKey: entity.name) == nil else {
                throw XCDataModelError(
                    .duplicateName, url: url, entity: entity.name, line: entity.line,
                    message: "two entities are named '\(entity.name)'")
            }
        }
        var leadsToARoot = Set<String>()
        for entity in model.entities {
            try checkInheritance(of: entity, in: entitiesByName, leadsToARoot: &leadsToARoot)
        }
        let compositeNames = Set(model.composites.map(\.name))
        for entity in model.entities {
            var names = Set<String>()
            for property in entity.properties {
                guard names.insert(property.name).inserted else {
                    throw XCDataModelError(
                        .duplicateName, url: url, entity: entity.name, property: property.name,
                        message: "the entity has two properties named '\(property.name)'")
                }
                switch property {
                case .attribute(let attribute):
                    if attribute.type == .composite {
                        guard let composite = attribute.compositeName, compositeNames.contains(composite) else {
                            throw XCDataModelError(
                                .missingReference, url: url, entity: entity.name, property: attribute.name,
                                line: attribute.common.line,
                                message: "the composite attribute's type '\(attribute.compositeName ?? "")' is not "
                                    + "defined in the model")
                        }
                    }
                case .relationship(let relationship):
                    try check(relationship, of: entity, in: entitiesByName)
                case .fetchedProperty(let fetched):
                    guard entitiesByName[fetched.fetchRequest.entity] != nil else {
                        throw XCDataModelError(
                            .missingReference, url: url, entity: entity.name, property: fetched.name,
                            line: fetched.fetchRequest.line,
                            message: "the fetched property fetches entity '\(fetched.fetchRequest.entity)', which "
                                + "is not in the model")
                    }
                }
            }
        }
        for configuration in model.configurations {
            for member in configuration.memberEntities where entitiesByName[member] == nil {
                throw XCDataModelError(
                    .missingReference, url: url, line: configuration.line,
                    message: "configuration '\(configuration.name)' lists entity '\(member)', which is not in the "
                        + "model")
            }
        }
        for request in model.fetchRequests where entitiesByName[request.entity] == nil {
            throw XCDataModelError(
                .missingReference, url: url, line: request.line,
                message: "fetch request template '\(request.name)' fetches entity '\(request.entity)', which is not "
                    + "in the model")
        }
    }

    /// Names follow the rules of Xcode's model editor: they become class and property names in generated code and
    /// table and column names in SQLite stores, so a name from a downloaded file must not be able to carry anything
    /// else.
    private func checkNames(of entity: XCDataModel.Entity) throws(XCDataModelError) {
        guard XCDataModelNames.isEntityName(entity.name) else {
            throw XCDataModelError(
                .invalidName, url: url, entity: entity.name, line: entity.line,
                message: "an entity name must start with an upper-case letter and go on with "
                    + XCDataModelNames.rest)
        }
        for property in entity.properties where !XCDataModelNames.isPropertyName(property.name) {
            let line =
                switch property {
                case .attribute(let attribute): attribute.common.line
                case .relationship(let relationship): relationship.common.line
                case .fetchedProperty(let fetched): fetched.common.line
                }
            throw XCDataModelError(
                .invalidName, url: url, entity: entity.name, property: property.name, line: line,
                message: "a property name must start with a lower-case letter and go on with " + XCDataModelNames.rest)
        }
        for index in entity.fetchIndexes where !XCDataModelNames.isIndexName(index.name) {
            throw XCDataModelError(
                .invalidName, url: url, entity: entity.name, line: entity.line,
                message: "the fetch index name '\(index.name)' must start with a letter and go on with "
                    + XCDataModelNames.rest)
        }
    }

    /// Follows the entity's parents up to a root, or to an entity already known to lead to one (`leadsToARoot`,
    /// which then gains the path): each entity is walked past once, however deep the hierarchy.
    private func checkInheritance(
        of entity: XCDataModel.Entity, in entities: [String: XCDataModel.Entity], leadsToARoot: inout Set<String>
    ) throws(XCDataModelError) {
        var chain = [entity.name]
        var inChain: Set<String> = [entity.name]
        var current = entity
        while let parentName = current.parentEntity, !leadsToARoot.contains(parentName) {
            guard let parent = entities[parentName] else {
                throw XCDataModelError(
                    .missingParentEntity, url: url, entity: current.name, line: current.line,
                    message: "the parent entity '\(parentName)' is not in the model")
            }
            if inChain.contains(parentName) {
                throw XCDataModelError(
                    .inheritanceCycle, url: url, entity: entity.name, line: entity.line,
                    message: "the entities inherit from each other in a cycle: "
                        + (chain + [parentName]).joined(separator: " → "))
            }
            chain.append(parentName)
            inChain.insert(parentName)
            current = parent
        }
        leadsToARoot.formUnion(chain)
    }

    private func check(
        _ relationship: XCDataModel.Relationship, of entity: XCDataModel.Entity,
        in entities: [String: XCDataModel.Entity]
    ) throws(XCDataModelError) {
        guard let destination = entities[relationship.destinationEntity] else {
            throw XCDataModelError(
                .missingDestination, url: url, entity: entity.name, property: relationship.name,
                line: relationship.common.line,
                message: "the destination entity '\(relationship.destinationEntity)' is not in the model")
        }
        guard let inverseName = relationship.inverseName else { return }
        let inverseEntityName = relationship.inverseEntity ?? destination.name
        guard let inverseEntity = entities[inverseEntityName] else {
            throw XCDataModelError(
                .missingInverse, url: url, entity: entity.name, property: relationship.name,
                line: relationship.common.line,
                message: "the inverse entity '\(inverseEntityName)' is not in the model")
        }
        let inverse = model.allProperties(of: inverseEntity, entitiesByName: entities).first { $0.name == inverseName }
        guard case .relationship = inverse else {
            throw XCDataModelError(
                .missingInverse, url: url, entity: entity.name, property: relationship.name,
                line: relationship.common.line,
                message: inverse == nil
                    ? "the inverse relationship '\(inverseName)' does not exist in entity '\(inverseEntityName)'"
                    : "the inverse '\(inverseName)' of entity '\(inverseEntityName)' is not a relationship")
        }
    }
}
