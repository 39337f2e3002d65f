import OpenCoreData

/// The item entity as an application declares it: a typed subclass with `@Managed` properties.
final class Item: NSManagedObject {
    @Managed var serial: Int64
    @Managed var quantity: Int64
    @Managed var flags: Int64
    @Managed var price: Double
    @Managed var ratio: Double
    @Managed var name: String
    @Managed var category: String
    @Managed var note: String
    @Managed var payload: Data
    @Managed var rank: Int64?

    func add(to checksum: inout Checksum) {
        checksum.add(serial)
        checksum.add(quantity)
        checksum.add(flags)
        checksum.add(price)
        checksum.add(ratio)
        checksum.add(name)
        checksum.add(category)
        checksum.add(note)
        checksum.add(payload)
        checksum.add(rank)
        checksum.object()
    }
}

/// A parent whose children are deleted with it.
final class Parent: NSManagedObject {
    @Managed var serial: Int64
    @Managed var title: String
    @Managed var children: Set<Child>
}

final class Child: NSManagedObject {
    @Managed var serial: Int64
    @Managed var value: Int64
    @Managed var label: String
    @Managed var parent: Parent?
}

/// The model of the benchmarks, built in code as an `.xcdatamodeld` would describe it.
enum BenchmarkModel {
    static let shared = make()

    static func make() -> NSManagedObjectModel {
        func attribute(_ name: String, _ type: NSAttributeType, optional: Bool = false) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.isOptional = optional
            return attribute
        }
        func entity(_ name: String, _ objectClass: NSManagedObject.Type) -> NSEntityDescription {
            let entity = NSEntityDescription()
            entity.name = name
            entity.managedObjectClassName = String(reflecting: objectClass)
            return entity
        }
        func index(_ attribute: NSAttributeDescription, of entity: NSEntityDescription) {
            entity.indexes = [
                NSFetchIndexDescription(
                    name: "by\(attribute.name.capitalized)",
                    elements: [NSFetchIndexElementDescription(property: attribute, collationType: .binary)])
            ]
        }

        let item = entity("Item", Item.self)
        let itemSerial = attribute("serial", .integer64AttributeType)
        item.properties = [
            itemSerial,
            attribute("quantity", .integer64AttributeType),
            attribute("flags", .integer64AttributeType),
            attribute("price", .doubleAttributeType),
            attribute("ratio", .doubleAttributeType),
            attribute("name", .stringAttributeType),
            attribute("category", .stringAttributeType),
            attribute("note", .stringAttributeType),
            attribute("payload", .binaryDataAttributeType),
            attribute("rank", .integer64AttributeType, optional: true),
        ]
        index(itemSerial, of: item)

        let parent = entity("Parent", Parent.self)
        let child = entity("Child", Child.self)
        let children = NSRelationshipDescription()
        children.name = "children"
        children.destinationEntity = child
        children.minCount = 0
        children.maxCount = 0
        children.deleteRule = .cascadeDeleteRule
        let toParent = NSRelationshipDescription()
        toParent.name = "parent"
        toParent.destinationEntity = parent
        toParent.maxCount = 1
        toParent.deleteRule = .nullifyDeleteRule
        children.inverseRelationship = toParent
        toParent.inverseRelationship = children

        let parentSerial = attribute("serial", .integer64AttributeType)
        parent.properties = [parentSerial, attribute("title", .stringAttributeType), children]
        index(parentSerial, of: parent)
        child.properties = [
            attribute("serial", .integer64AttributeType), attribute("value", .integer64AttributeType),
            attribute("label", .stringAttributeType), toParent,
        ]

        let model = NSManagedObjectModel()
        model.entities = [item, parent, child]
        return model
    }
}
