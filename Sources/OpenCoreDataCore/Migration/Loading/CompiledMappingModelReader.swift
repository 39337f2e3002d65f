/// Reads compiled mapping models: `.cdm` files, `NSKeyedArchiver` archives of an `NSMappingModel` (Xcode compiles
/// each `.xcmappingmodel` into one). The archive is decoded by key and class name, without Apple's classes.
enum CompiledMappingModelReader {
    static func load(_ url: URL) throws -> NSMappingModel {
        let data = try MappingModelFileLoader.read(url)
        do {
            return try decode(KeyedArchive(data: data))
        } catch let error as NSError where error.domain == NSCocoaErrorDomain {
            throw error
        } catch {
            throw MappingModelFileLoader.error(url, NSCoreDataError, "the compiled mapping model is damaged: \(error)")
        }
    }

    static func decode(_ archive: KeyedArchive) throws -> NSMappingModel {
        let root = try archive.rootObject()
        guard root.className == "NSMappingModel" else {
            throw KeyedArchive.Failure(description: "the archive holds an \(root.className), not an NSMappingModel")
        }
        var elements = try archive.elements(root["NSEntityMappings"])
        if elements.isEmpty {
            elements = try archive.entries(root["NSEntityMappingsByName"]).map(\.value)
        }
        let mapping = NSMappingModel()
        mapping._entityMappings = try elements.map { element in
            guard let object = try archive.object(element), object.className == "NSEntityMapping" else {
                throw KeyedArchive.Failure(description: "an entity mapping is not an NSEntityMapping")
            }
            return try entityMapping(object, archive)
        }
        return mapping
    }

    private static func entityMapping(_ object: KeyedArchive.Object, _ archive: KeyedArchive) throws -> NSEntityMapping
    {
        let mapping = NSEntityMapping()
        mapping.name = try archive.string(object["NSMappingName"])
        let type = UInt(exactly: object["NSMappingType"]?.integer ?? 0) ?? 0
        guard let mappingType = NSEntityMappingType(rawValue: type) else {
            throw KeyedArchive.Failure(
                description: "entity mapping '\(mapping.name ?? "")' has the unknown type \(type)")
        }
        mapping.mappingType = mappingType
        mapping.sourceEntityName = try archive.string(object["NSSourceEntityName"])
        mapping.destinationEntityName = try archive.string(object["NSDestinationEntityName"])
        mapping.sourceEntityVersionHash = try archive.plainValue(object["NSSourceEntityVersionHash"]) as? Data
        mapping.destinationEntityVersionHash = try archive.plainValue(object["NSDestinationEntityVersionHash"]) as? Data
        mapping.entityMigrationPolicyClassName = try archive.string(object["NSEntityMigrationPolicyClassName"])
        mapping.userInfo = try userInfo(object["NSUserInfo"], archive)
        let decoder = ArchivedPredicateDecoder(archive: archive)
        if let expression = try archive.object(object["NSSourceExpression"]) {
            mapping.sourceExpression = try decoder.expression(expression)
        }
        mapping.attributeMappings = try propertyMappings(object["NSAttributeMappings"], archive, decoder)
        mapping.relationshipMappings = try propertyMappings(object["NSRelationshipMappings"], archive, decoder)
        return mapping
    }

    private static func propertyMappings(
        _ value: PropertyListValue?, _ archive: KeyedArchive, _ decoder: ArchivedPredicateDecoder
    ) throws -> [NSPropertyMapping] {
        try archive.elements(value).compactMap { element in
            guard let object = try archive.object(element) else { return nil }
            let mapping = NSPropertyMapping()
            mapping.name = try archive.string(object["NSDestinationPropertyName"])
            if let expression = try archive.object(object["NSValueExpression"]) {
                mapping.valueExpression = try decoder.expression(expression)
            }
            mapping.userInfo = try userInfo(object["NSUserInfo"], archive)
            return mapping
        }
    }

    static func userInfo(_ value: PropertyListValue?, _ archive: KeyedArchive) throws -> [AnyHashable: Any]? {
        guard let dictionary = try archive.plainValue(value) as? [String: Any], !dictionary.isEmpty else { return nil }
        return dictionary
    }
}
