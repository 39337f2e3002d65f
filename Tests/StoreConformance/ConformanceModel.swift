import Foundation
import OpenCoreData

/// The model every conformance case uses, built in code:
///
/// - `Item`: one attribute of every stored type, a defaulted `counter`, a transient `scratch`;
/// - `Person` (`name`, `age`, `nickname`) and its subentity `Employee` (`salary`, `department`, `headOf`);
/// - `Department` (`name`, `budget`): `employees` (to-many, cascade) ↔ `Employee.department` (nullify), `head`
///   (to-one ↔ to-one `Employee.headOf`, nullify both ways), `projects` (ordered to-many, deny) ↔
///   `Project.department` (nullify);
/// - `Project` (`title`): `members` (many-to-many ↔ `Person.projects`, nullify both ways);
/// - `Note` (`text`), alone in configuration `Notes`; every other entity is in configuration `Main`.
public enum ConformanceModel {
    /// The model, made once: a model is immutable once a coordinator uses it, and every stack shares this one.
    public static let shared: NSManagedObjectModel = make()

    /// The attributes of `Item`, with their types.
    public static let itemAttributes: [(name: String, type: NSAttributeType)] = [
        ("int16", .integer16AttributeType), ("int32", .integer32AttributeType), ("int64", .integer64AttributeType),
        ("decimal", .decimalAttributeType), ("double", .doubleAttributeType), ("float", .floatAttributeType),
        ("string", .stringAttributeType), ("bool", .booleanAttributeType), ("date", .dateAttributeType),
        ("data", .binaryDataAttributeType), ("uuid", .UUIDAttributeType), ("uri", .URIAttributeType),
        ("transformable", .transformableAttributeType),
    ]

    static func make() -> NSManagedObjectModel {
        let item = entity("Item", itemAttributes.map { attribute($0.name, $0.type) })
        let counter = attribute("counter", .integer16AttributeType)
        counter.defaultValue = 7
        let scratch = attribute("scratch", .stringAttributeType)
        scratch.isTransient = true
        item.properties += [counter, scratch]

        let person = entity(
            "Person",
            [
                attribute("name", .stringAttributeType), attribute("age", .integer32AttributeType),
                attribute("nickname", .stringAttributeType),
            ])
        let employee = entity("Employee", [attribute("salary", .doubleAttributeType)])
        let department = entity(
            "Department", [attribute("name", .stringAttributeType), attribute("budget", .decimalAttributeType)])
        let project = entity("Project", [attribute("title", .stringAttributeType)])
        let note = entity("Note", [attribute("text", .stringAttributeType)])

        link(
            department, "employees", toMany: true, rule: .cascadeDeleteRule, employee, "department", toMany: false,
            rule: .nullifyDeleteRule)
        link(
            department, "head", toMany: false, rule: .nullifyDeleteRule, employee, "headOf", toMany: false,
            rule: .nullifyDeleteRule)
        link(
            department, "projects", toMany: true, rule: .denyDeleteRule, project, "department", toMany: false,
            rule: .nullifyDeleteRule, ordered: true)
        link(
            project, "members", toMany: true, rule: .nullifyDeleteRule, person, "projects", toMany: true,
            rule: .nullifyDeleteRule)

        // Last: once Employee inherits from Person, its `properties` include Person's, which `link` must not add again.
        person.subentities = [employee]

        let model = NSManagedObjectModel()
        let main = [item, person, employee, department, project]
        model.entities = main + [note]
        model.setEntities(main, forConfigurationName: "Main")
        model.setEntities([note], forConfigurationName: "Notes")
        return model
    }

    static func entity(_ name: String, _ properties: [NSPropertyDescription]) -> NSEntityDescription {
        let entity = NSEntityDescription()
        entity.name = name
        entity.managedObjectClassName = "NSManagedObject"
        entity.properties = properties
        return entity
    }

    static func attribute(_ name: String, _ type: NSAttributeType) -> NSAttributeDescription {
        let attribute = NSAttributeDescription()
        attribute.name = name
        attribute.attributeType = type
        attribute.isOptional = true
        return attribute
    }

    /// Adds a relationship and its inverse.
    static func link(
        _ source: NSEntityDescription, _ name: String, toMany: Bool, rule: NSDeleteRule,
        _ destination: NSEntityDescription, _ inverseName: String, toMany inverseToMany: Bool,
        rule inverseRule: NSDeleteRule, ordered: Bool = false
    ) {
        let forward = NSRelationshipDescription()
        forward.name = name
        forward.destinationEntity = destination
        forward.maxCount = toMany ? 0 : 1
        forward.deleteRule = rule
        forward.isOptional = true
        forward.isOrdered = ordered
        let inverse = NSRelationshipDescription()
        inverse.name = inverseName
        inverse.destinationEntity = source
        inverse.maxCount = inverseToMany ? 0 : 1
        inverse.deleteRule = inverseRule
        inverse.isOptional = true
        forward.inverseRelationship = inverse
        inverse.inverseRelationship = forward
        source.properties += [forward]
        destination.properties += [inverse]
    }
}
