/// Computes version hashes of entities and properties from the inputs Apple documents as affecting persistence:
/// for an entity its name, whether it is abstract, its superentity's hash, its properties' hashes and its
/// version hash modifier; for a property its name, optionality, transience and modifier, plus the attribute type
/// or the relationship's destination, inverse, counts and ordering.
///
/// The serialization is OpenCoreData's own. Matching Apple's exact bytes is the subject of separate research;
/// stores written by Apple are recognised structurally meanwhile.
enum ModelVersionHasher {
    static func versionHash(of entity: NSEntityDescription) -> Data {
        var fields: [String] = ["entity", entity._name ?? "", entity._isAbstract ? "1" : "0"]
        if let parent = entity._superentity {
            fields.append(hex(versionHash(of: parent)))
        }
        for property in entity._ownProperties.sorted(by: { $0._name < $1._name }) where affectsHash(property) {
            fields.append(hex(versionHash(of: property)))
        }
        fields.append(entity._versionHashModifier ?? "")
        return digest(fields)
    }

    static func versionHash(of property: NSPropertyDescription) -> Data {
        var fields: [String] = [
            String(describing: type(of: property)), property._name, property._isOptional ? "1" : "0",
            property._isTransient ? "1" : "0", property._versionHashModifier ?? "",
        ]
        if let attribute = property as? NSAttributeDescription {
            fields.append(String(attribute._attributeType.rawValue))
        }
        if let relationship = property as? NSRelationshipDescription {
            fields.append(relationship._destinationEntity?._name ?? relationship._destinationEntityName ?? "")
            fields.append(relationship._inverseRelationship?._name ?? relationship._inverseName ?? "")
            fields.append(String(relationship._minCount))
            fields.append(String(relationship._maxCount))
            fields.append(relationship._isOrdered ? "1" : "0")
        }
        return digest(fields)
    }

    /// Fetched properties never reach the store, so they do not change whether a store matches.
    static func affectsHash(_ property: NSPropertyDescription) -> Bool {
        !(property is NSFetchedPropertyDescription)
    }

    private static func digest(_ fields: [String]) -> Data {
        Data(SHA256.hash(Array(fields.joined(separator: "\u{1F}").utf8)))
    }

    private static func hex(_ data: Data) -> String {
        data.map { byte in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
        }.joined()
    }
}
