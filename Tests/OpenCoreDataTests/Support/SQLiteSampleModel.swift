import Foundation
import OpenCoreDataShim

/// A model with every attribute type and every kind of relationship, for the SQLite store's tests:
///
/// - `Item`: one attribute of each type; to-one `owner` (inverse of `Owner.items`), to-one `pet` to an entity with
///   subentities, many-to-many `tags`, ordered to-one side `list` (inverse of `List.entries`, ordered).
/// - `Owner`: `name`, to-many `items`, one-to-one `profile`.
/// - `Profile`: `bio`, one-to-one `owner`.
/// - `Animal` (abstract) with subentities `Dog` (`breed`) and `Cat` (`lives`); `Animal.name`.
/// - `Tag`: `label`, many-to-many `items`.
/// - `List`: `title`, ordered to-many `entries`; ordered many-to-many `favorites` ↔ `Item.favoritedBy`.
enum SQLiteSampleModel {
    static func make() -> NSManagedObjectModel {
        let item = entity("Item")
        let owner = entity("Owner")
        let profile = entity("Profile")
        let animal = entity("Animal")
        animal.isAbstract = true
        let dog = entity("Dog")
        let cat = entity("Cat")
        let tag = entity("Tag")
        let list = entity("List")

        item.properties = [
            attribute("bool", .booleanAttributeType),
            attribute("data", .binaryDataAttributeType),
            attribute("date", .dateAttributeType),
            attribute("decimal", .decimalAttributeType),
            attribute("double", .doubleAttributeType),
            attribute("float", .floatAttributeType),
            attribute("int16", .integer16AttributeType),
            attribute("int32", .integer32AttributeType),
            attribute("int64", .integer64AttributeType),
            attribute("name", .stringAttributeType),
            attribute("plist", .transformableAttributeType),
            attribute("transient", .stringAttributeType, transient: true),
            attribute("uri", .URIAttributeType),
            attribute("uuid", .UUIDAttributeType),
        ]
        owner.properties = [attribute("name", .stringAttributeType)]
        profile.properties = [attribute("bio", .stringAttributeType)]
        animal.properties = [attribute("name", .stringAttributeType)]
        dog.properties = [attribute("breed", .stringAttributeType)]
        cat.properties = [attribute("lives", .integer16AttributeType)]
        tag.properties = [attribute("label", .stringAttributeType)]
        list.properties = [attribute("title", .stringAttributeType)]
        animal.subentities = [dog, cat]

        relate(item, "owner", toOne: true, owner, "items", toOne: false)
        relate(owner, "profile", toOne: true, profile, "owner", toOne: true)
        relate(item, "tags", toOne: false, tag, "items", toOne: false)
        relate(list, "entries", toOne: false, ordered: true, item, "list", toOne: true)
        relate(list, "favorites", toOne: false, ordered: true, item, "favoritedBy", toOne: false)
        let pet = NSRelationshipDescription()
        pet.name = "pet"
        pet.destinationEntity = animal
        pet.maxCount = 1
        pet.deleteRule = .nullifyDeleteRule
        item.properties += [pet]

        let model = NSManagedObjectModel()
        model.entities = [item, owner, profile, animal, dog, cat, tag, list]
        return model
    }

    static func entity(_ name: String) -> NSEntityDescription {
        let entity = NSEntityDescription()
        entity.name = name
        entity.managedObjectClassName = "NSManagedObject"
        return entity
    }

    static func attribute(
        _ name: String, _ type: NSAttributeType, optional: Bool = true, transient: Bool = false
    ) -> NSAttributeDescription {
        let attribute = NSAttributeDescription()
        attribute.name = name
        attribute.attributeType = type
        attribute.isOptional = optional
        attribute.isTransient = transient
        return attribute
    }

    /// Adds a relationship and its inverse.
    static func relate(
        _ source: NSEntityDescription, _ name: String, toOne: Bool, ordered: Bool = false,
        _ destination: NSEntityDescription, _ inverseName: String, toOne inverseToOne: Bool,
        inverseOrdered: Bool = false
    ) {
        let forward = NSRelationshipDescription()
        forward.name = name
        forward.destinationEntity = destination
        forward.maxCount = toOne ? 1 : 0
        forward.isOrdered = ordered
        forward.deleteRule = .nullifyDeleteRule
        let inverse = NSRelationshipDescription()
        inverse.name = inverseName
        inverse.destinationEntity = source
        inverse.maxCount = inverseToOne ? 1 : 0
        inverse.isOrdered = inverseOrdered
        inverse.deleteRule = .nullifyDeleteRule
        forward.inverseRelationship = inverse
        inverse.inverseRelationship = forward
        source.properties += [forward]
        destination.properties += [inverse]
    }
}
