import OpenCoreDataShim

/// An entity with one attribute of every stored type, plus a transient one.
enum AllTypesModel {
    static func make() -> NSManagedObjectModel {
        let entity = NSEntityDescription()
        entity.name = "Thing"
        entity.managedObjectClassName = String(reflecting: Thing.self)
        let attributes: [(String, NSAttributeType)] = [
            ("int16", .integer16AttributeType), ("int32", .integer32AttributeType),
            ("int64", .integer64AttributeType), ("decimal", .decimalAttributeType), ("double", .doubleAttributeType),
            ("float", .floatAttributeType), ("string", .stringAttributeType), ("bool", .booleanAttributeType),
            ("date", .dateAttributeType), ("data", .binaryDataAttributeType), ("uuid", .UUIDAttributeType),
            ("uri", .URIAttributeType), ("transformable", .transformableAttributeType),
        ]
        var properties: [NSPropertyDescription] = attributes.map { CompanyModel.attribute($0.0, $0.1) }
        let scratch = CompanyModel.attribute("scratch", .stringAttributeType)
        scratch.isTransient = true
        properties.append(scratch)
        let counter = CompanyModel.attribute("counter", .integer16AttributeType)
        counter.defaultValue = 7
        properties.append(counter)
        entity.properties = properties
        let model = NSManagedObjectModel()
        model.entities = [entity]
        return model
    }
}

final class Thing: NSManagedObject {
    @Managed var int16: Int16
    @Managed var int32: Int32
    @Managed var int64: Int64
    @Managed var decimal: Decimal?
    @Managed var double: Double
    @Managed var float: Float
    @Managed var string: String?
    @Managed var bool: Bool
    @Managed var date: Date?
    @Managed var data: Data?
    @Managed var uuid: UUID?
    @Managed var uri: URL?
    @Managed var transformable: [String]?
    @Managed var scratch: String?
    @Managed var counter: Int16
}
