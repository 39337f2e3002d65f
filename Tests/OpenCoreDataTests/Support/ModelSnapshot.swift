import Foundation
import OpenCoreDataShim

/// A model described line by line through its public API — entities, properties in order, every flag, default
/// values, validation, fetch requests, indexes, configurations, templates and version hashes — so that two models
/// compare as text and a test names exactly what differs.
enum ModelSnapshot {
    static func lines(_ model: NSManagedObjectModel) -> [String] {
        var lines: [String] = []
        for entity in model.entities.sorted(by: { ($0.name ?? "") < ($1.name ?? "") }) {
            lines.append(
                "entity \(entity.name ?? "") class=\(entity.managedObjectClassName ?? "") "
                    + "abstract=\(entity.isAbstract) super=\(entity.superentity?.name ?? "-") "
                    + "sub=\(entity.subentities.compactMap(\.name).sorted()) "
                    + "renaming=\(entity.renamingIdentifier ?? "-") vhm=\(entity.versionHashModifier ?? "-") "
                    + "userInfo=\(describe(entity.userInfo)) unique=\(names(entity.uniquenessConstraints)) "
                    + "hash=\(entity.versionHash.base64EncodedString())")
            for index in entity.indexes {
                let elements = index.elements.map {
                    "\($0.propertyName ?? "-")/\($0.collationType.rawValue)/\($0.isAscending ? "asc" : "desc")"
                }
                lines.append(
                    "  index \(index.name) \(elements) partial=\(index.partialIndexPredicate?.predicateFormat ?? "-")")
            }
            for property in entity.properties where property.entity === entity {
                lines.append("  " + describe(property))
            }
        }
        for name in model.configurations.sorted() {
            let members = (model.entities(forConfigurationName: name) ?? []).compactMap(\.name).sorted()
            lines.append("configuration \(name) \(members)")
        }
        for (name, request) in model.fetchRequestTemplatesByName.sorted(by: { $0.key < $1.key }) {
            lines.append("template \(name) \(describe(request))")
        }
        lines.append("versionIdentifiers \(model.versionIdentifiers.map { "\($0)" }.sorted())")
        return lines
    }

    static func describe(_ property: NSPropertyDescription) -> String {
        var text =
            "\(type(of: property)) \(property.name) optional=\(property.isOptional) "
            + "transient=\(property.isTransient) indexed=\(property.isIndexed) "
            + "spotlight=\(property.isIndexedBySpotlight) external=\(property.isStoredInExternalRecord) "
            + "renaming=\(property.renamingIdentifier ?? "-") vhm=\(property.versionHashModifier ?? "-") "
            + "userInfo=\(describe(property.userInfo)) "
            + "validation=\(property.validationPredicates.map(\.predicateFormat)) "
            + "warnings=\(property.validationWarnings.map { describe($0) }) "
            + "hash=\(property.versionHash.base64EncodedString())"
        switch property {
        case let attribute as NSAttributeDescription:
            text +=
                " type=\(attribute.attributeType.rawValue) class=\(attribute.attributeValueClassName ?? "-") "
                + "transformer=\(attribute.valueTransformerName ?? "-") default=\(describe(attribute.defaultValue)) "
                + "externalBinary=\(attribute.allowsExternalBinaryDataStorage) "
                + "preserves=\(attribute.preservesValueInHistoryOnDeletion) "
                + "cloudEncryption=\(attribute.allowsCloudEncryption)"
            if let derived = attribute as? NSDerivedAttributeDescription {
                text += " derivation=\(derived.derivationExpression?.description ?? "-")"
            }
            if let composite = attribute as? NSCompositeAttributeDescription {
                text += " elements=\(composite.elements.map { describe($0) })"
            }
        case let relationship as NSRelationshipDescription:
            text +=
                " destination=\(relationship.destinationEntity?.name ?? "-") "
                + "inverse=\(relationship.inverseRelationship?.name ?? "-") min=\(relationship.minCount) "
                + "max=\(relationship.maxCount) delete=\(relationship.deleteRule.rawValue) "
                + "ordered=\(relationship.isOrdered)"
        case let fetched as NSFetchedPropertyDescription:
            text += " request=\(fetched.fetchRequest.map(describe) ?? "-")"
        default:
            break
        }
        return text
    }

    static func describe(_ request: NSFetchRequest<NSFetchRequestResult>) -> String {
        let sorts = (request.sortDescriptors ?? []).map {
            "\($0.key ?? "-") \($0.ascending ? "asc" : "desc") \($0.selector?.name ?? "-")"
        }
        return "entity=\(request.entityName ?? "-") predicate=\(request.predicate?.predicateFormat ?? "-") "
            + "sorts=\(sorts) limit=\(request.fetchLimit) offset=\(request.fetchOffset) "
            + "batch=\(request.fetchBatchSize) result=\(request.resultType.rawValue) "
            + "subentities=\(request.includesSubentities) values=\(request.includesPropertyValues) "
            + "faults=\(request.returnsObjectsAsFaults) pending=\(request.includesPendingChanges) "
            + "distinct=\(request.returnsDistinctResults) refresh=\(request.shouldRefreshRefetchedObjects)"
    }

    /// A value in a form that does not depend on how it was boxed (`Bool` or `NSNumber`, `Decimal` or
    /// `NSDecimalNumber`).
    static func describe(_ value: Any?) -> String {
        switch value {
        case nil, is NSNull: return "nil"
        case let decimal as NSDecimalNumber: return "decimal(\(decimal.decimalValue))"
        case let decimal as Decimal: return "decimal(\(decimal))"
        case let string as String: return "string(\(string))"
        case let number as NSNumber: return "number(\(number.doubleValue))"
        case let date as Date: return "date(\(date.timeIntervalSinceReferenceDate))"
        case let data as Data: return "data(\(data.base64EncodedString()))"
        case let uuid as UUID: return "uuid(\(uuid.uuidString))"
        case let url as URL: return "url(\(url.absoluteString))"
        case let dictionary as [AnyHashable: Any] where dictionary.isEmpty: return "nil"
        case let array as [Any]: return "[" + array.map { describe($0) }.joined(separator: ", ") + "]"
        case let dictionary as [AnyHashable: Any]:
            return "{"
                + dictionary.map { "\($0.key): \(describe($0.value))" }.sorted().joined(separator: ", ") + "}"
        default: return "\(type(of: value!))(\(value!))"
        }
    }

    private static func names(_ lists: [[Any]]) -> [[String]] {
        lists.map { list in list.map { ($0 as? String) ?? ($0 as? NSPropertyDescription)?.name ?? "?" } }
    }
}
