import Foundation

// Mapping models compare by what they describe, as Apple's do: the same mapping model loaded twice (from a bundle's
// `.cdm`, say) is equal to itself, so code can check which mapping a migration step found. (The overrides of
// `isEqual(_:)` and `hash` are in the class bodies, which Swift requires; they call these.)

extension NSMappingModel {
    func _describesSameMapping(as object: Any?) -> Bool {
        guard let other = object as? NSMappingModel else { return false }
        if other === self { return true }
        return (entityMappings ?? []) == (other.entityMappings ?? [])
    }

    var _mappingHash: Int {
        var hasher = Hasher()
        for mapping in entityMappings ?? [] { hasher.combine(mapping.hash) }
        return hasher.finalize()
    }
}

extension NSEntityMapping {
    func _describesSameMapping(as object: Any?) -> Bool {
        guard let other = object as? NSEntityMapping else { return false }
        if other === self { return true }
        return name == other.name && mappingType == other.mappingType
            && sourceEntityName == other.sourceEntityName && sourceEntityVersionHash == other.sourceEntityVersionHash
            && destinationEntityName == other.destinationEntityName
            && destinationEntityVersionHash == other.destinationEntityVersionHash
            && (attributeMappings ?? []) == (other.attributeMappings ?? [])
            && (relationshipMappings ?? []) == (other.relationshipMappings ?? [])
            && sourceExpression == other.sourceExpression
            && entityMigrationPolicyClassName == other.entityMigrationPolicyClassName
            && userInfoEqual(userInfo, other.userInfo)
    }

    var _mappingHash: Int {
        var hasher = Hasher()
        hasher.combine(name)
        hasher.combine(mappingType.rawValue)
        hasher.combine(sourceEntityName)
        hasher.combine(destinationEntityName)
        return hasher.finalize()
    }
}

extension NSPropertyMapping {
    func _describesSameMapping(as object: Any?) -> Bool {
        guard let other = object as? NSPropertyMapping else { return false }
        if other === self { return true }
        return name == other.name && valueExpression == other.valueExpression
            && userInfoEqual(userInfo, other.userInfo)
    }

    var _mappingHash: Int { name?.hashValue ?? 0 }
}

private func userInfoEqual(_ first: [AnyHashable: Any]?, _ second: [AnyHashable: Any]?) -> Bool {
    NSDictionary(dictionary: first ?? [:]).isEqual(to: second ?? [:])
}
