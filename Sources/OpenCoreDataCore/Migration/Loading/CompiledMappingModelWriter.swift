/// Writes compiled mapping models: the `NSKeyedArchiver` archive of an `NSMappingModel` that Xcode's mapping model
/// compiler writes into a `.cdm` file, with Apple's class names and keys (those of the corpus's V2toV3.cdm), so that
/// Apple's `NSMappingModel(contentsOf:)` reads what this writes and `CompiledMappingModelReader` reads it back.
///
/// The model holds its entity mappings twice, as Apple's does: in order (`NSEntityMappings`, the order the migration
/// runs them) and by name (`NSEntityMappingsByName`). Absent values are archived as `$null`, never left out: Apple's
/// archives carry every key of every object.
enum CompiledMappingModelWriter {
    typealias Failure = KeyedArchive.Failure

    /// The archive of `mapping`. A mapping holding what cannot be archived (a block expression, a user info value of
    /// a class Foundation cannot archive) fails with `NSCoderInvalidValueError`, naming the entity and property
    /// mapping.
    static func data(for mapping: NSMappingModel) throws -> Data {
        var writer = KeyedArchiveWriter()
        var location: (entity: String?, property: String?) = (nil, nil)
        do {
            let root = try writer.encodeObject(className: "NSMappingModel") { (writer, _) throws(Failure) in
                var ordered: [PropertyListValue] = []
                var byName: [String: PropertyListValue] = [:]
                for entityMapping in mapping._entityMappings {
                    location = (entityMapping.name, nil)
                    let reference = try self.entityMapping(entityMapping, into: &writer, location: &location)
                    ordered.append(reference)
                    if byName[entityMapping.name ?? ""] == nil { byName[entityMapping.name ?? ""] = reference }
                }
                location = (nil, nil)
                let names = byName.keys.sorted()
                return [
                    "NSEntityMappings": writer.collection("NSArray", ordered),
                    "NSEntityMappingsByName": writer.dictionary(
                        "NSMutableDictionary", keys: names.map { writer.string($0) },
                        values: names.compactMap { byName[$0] }),
                ]
            }
            return writer.data(root: root)
        } catch {
            var place = ""
            var info: [String: Any] = [:]
            if let entity = location.entity {
                place = " entity mapping '\(entity)'"
                info["entityMapping"] = entity
                if let property = location.property {
                    place += ", property mapping '\(property)'"
                    info["propertyMapping"] = property
                }
                place += ":"
            }
            throw coreDataError(
                CocoaError.Code.coderInvalidValue.rawValue,
                "Cannot archive the mapping model:\(place) \(error.description)", userInfo: info)
        }
    }

    private static func entityMapping(
        _ mapping: NSEntityMapping, into writer: inout KeyedArchiveWriter,
        location: inout (entity: String?, property: String?)
    ) throws(Failure) -> PropertyListValue {
        try writer.encodeObject(className: "NSEntityMapping") { (writer, _) throws(Failure) in
            var fields: [String: PropertyListValue] = [
                "NSMappingName": writer.string(mapping.name),
                "NSMappingType": .integer(Int64(mapping.mappingType.rawValue)),
                "NSSourceEntityName": writer.string(mapping.sourceEntityName),
                "NSDestinationEntityName": writer.string(mapping.destinationEntityName),
                "NSSourceEntityVersionHash": mapping.sourceEntityVersionHash.map { writer.plain(.data($0)) }
                    ?? KeyedArchiveWriter.null,
                "NSDestinationEntityVersionHash": mapping.destinationEntityVersionHash.map { writer.plain(.data($0)) }
                    ?? KeyedArchiveWriter.null,
                "NSEntityMigrationPolicyClassName": writer.string(mapping.entityMigrationPolicyClassName),
            ]
            fields["NSUserInfo"] = try userInfo(mapping.userInfo, into: &writer)
            fields["NSSourceExpression"] = try expression(mapping.sourceExpression, into: &writer)
            var attributes: [PropertyListValue] = []
            for property in mapping.attributeMappings ?? [] {
                location.property = property.name
                attributes.append(try propertyMapping(property, into: &writer))
            }
            var relationships: [PropertyListValue] = []
            for property in mapping.relationshipMappings ?? [] {
                location.property = property.name
                relationships.append(try propertyMapping(property, into: &writer))
            }
            location.property = nil
            fields["NSAttributeMappings"] = writer.collection("NSArray", attributes)
            fields["NSRelationshipMappings"] = writer.collection("NSArray", relationships)
            return fields
        }
    }

    private static func propertyMapping(_ mapping: NSPropertyMapping, into writer: inout KeyedArchiveWriter)
        throws(Failure) -> PropertyListValue
    {
        try writer.encodeObject(className: "NSPropertyMapping") { (writer, _) throws(Failure) in
            [
                "NSDestinationPropertyName": writer.string(mapping.name),
                "NSValueExpression": try expression(mapping.valueExpression, into: &writer),
                "NSUserInfo": try userInfo(mapping.userInfo, into: &writer),
                // Apple's compiler writes no value transforms; the key is there, empty.
                "NSPropertyTransforms": KeyedArchiveWriter.null,
            ]
        }
    }

    private static func expression(_ expression: NSExpression?, into writer: inout KeyedArchiveWriter)
        throws(Failure) -> PropertyListValue
    {
        guard let expression else { return KeyedArchiveWriter.null }
        return try ArchivedPredicateEncoder.expression(expression, into: &writer)
    }

    /// A user info dictionary, or `$null` when there is none (as Apple's compiler writes an empty one).
    private static func userInfo(_ userInfo: [AnyHashable: Any]?, into writer: inout KeyedArchiveWriter)
        throws(Failure) -> PropertyListValue
    {
        guard let userInfo, !userInfo.isEmpty else { return KeyedArchiveWriter.null }
        return try writer.value(userInfo)
    }
}
