#if !canImport(CoreData)
import Foundation
import OpenCoreDataShim
import Testing

#if canImport(FoundationXML)
import FoundationXML
#endif

/// Loads every model version of the corpus and checks the model against the `contents` XML, read independently
/// with `XMLDocument`: entities, their properties and every flag Xcode writes.
@Suite struct ModelLoadingCorpusTests {
    static let versions = ModelCorpus.modelVersions.map(ModelCorpus.relativePath)

    @Test func theCorpusHasModels() {
        #expect(ModelCorpus.exists, "the corpus is missing at \(ModelCorpus.root.path)")
        #expect(Self.versions.count >= 60)
    }

    @Test(arguments: versions)
    func loadsTheVersionAsWritten(_ relativePath: String) throws {
        let url = ModelCorpus.root.appendingPathComponent(relativePath)
        let document = try XMLDocument(contentsOf: url.appendingPathComponent("contents"), options: [])
        let root = try #require(document.rootElement())
        let model = try NSManagedObjectModel(validatingContentsOf: url)
        let xmlEntities = root.elements(forName: "entity")
        #expect(Set(model.entitiesByName.keys) == Set(xmlEntities.compactMap { $0["name"] }))
        let composites = Dictionary(
            root.elements(forName: "composite").compactMap { element in element["name"].map { ($0, element) } },
            uniquingKeysWith: { first, _ in first })
        for element in xmlEntities {
            let name = try #require(element["name"])
            let entity = try #require(model.entitiesByName[name])
            try check(entity, against: element, composites: composites)
        }
        checkConfigurations(of: model, against: root)
        checkTemplates(of: model, against: root)
        if let identifier = root["userDefinedModelVersionIdentifier"], !identifier.isEmpty {
            #expect(model.versionIdentifiers.contains(identifier))
        }
    }

    private func check(
        _ entity: NSEntityDescription, against element: XMLElement, composites: [String: XMLElement]
    ) throws {
        let name = entity.name ?? ""
        #expect(entity.managedObjectClassName == (element["representedClassName"] ?? "NSManagedObject"), "\(name)")
        #expect(entity.superentity?.name == element["parentEntity"], "\(name)")
        #expect(entity.isAbstract == element.flag("isAbstract"), "\(name)")
        #expect(entity.versionHashModifier == element["versionHashModifier"], "\(name)")
        if let renaming = element["elementID"] {
            #expect(entity.renamingIdentifier == renaming, "\(name)")
        }
        checkUserInfo(entity.userInfo, element, "\(name)")
        let constraints = element.elements(forName: "uniquenessConstraints").flatMap {
            $0.elements(forName: "uniquenessConstraint").map {
                $0.elements(forName: "constraint").compactMap { $0["value"] }
            }
        }
        #expect(entity.uniquenessConstraints.map(names) == constraints, "\(name)")
        let compound = element.elements(forName: "compoundIndexes").flatMap {
            $0.elements(forName: "compoundIndex").map { $0.elements(forName: "index").compactMap { $0["value"] } }
        }
        #expect(entity.compoundIndexes.map(names) == compound, "\(name)")
        let indexes = element.elements(forName: "fetchIndex")
        #expect(entity.indexes.map(\.name) == indexes.compactMap { $0["name"] }, "\(name)")
        for (index, xml) in zip(entity.indexes, indexes) {
            let elements = xml.elements(forName: "fetchIndexElement")
            #expect(index.elements.map { $0.property?.name } == elements.map { $0["property"] }, "\(name)")
            #expect(index.elements.map(\.isAscending) == elements.map { $0["order"] != "descending" }, "\(name)")
        }
        var ownNames: [String] = []
        for child in element.children ?? [] {
            guard let xml = child as? XMLElement, let kind = xml.name,
                ["attribute", "relationship", "fetchedProperty"].contains(kind), let propertyName = xml["name"]
            else { continue }
            ownNames.append(propertyName)
            let property = try #require(entity.propertiesByName[propertyName], "\(name).\(propertyName)")
            #expect(property.entity === entity, "\(name).\(propertyName) belongs to its entity")
            let label = "\(name).\(propertyName)"
            #expect(property.isOptional == xml.flag("optional"), "\(label)")
            #expect(property.renamingIdentifier == (xml["elementID"] ?? propertyName), "\(label)")
            #expect(property.versionHashModifier == xml["versionHashModifier"], "\(label)")
            checkUserInfo(property.userInfo, xml, label)
            switch kind {
            case "attribute":
                let attribute = try #require(property as? NSAttributeDescription, "\(label)")
                try check(attribute, against: xml, composites: composites, label: label)
            case "relationship":
                let relationship = try #require(property as? NSRelationshipDescription, "\(label)")
                check(relationship, against: xml, label: label)
            default:
                let fetched = try #require(property as? NSFetchedPropertyDescription, "\(label)")
                let request = xml.elements(forName: "fetchRequest").first
                #expect(fetched.fetchRequest?.entityName == request?["entity"], "\(label)")
                #expect((fetched.fetchRequest?.predicate != nil) == (request?["predicateString"] != nil), "\(label)")
            }
        }
        let declared = entity.properties.filter { $0.entity === entity }.map(\.name)
        #expect(Set(declared) == Set(ownNames), "\(name) declares exactly the file's properties")
    }

    private func check(
        _ attribute: NSAttributeDescription, against xml: XMLElement, composites: [String: XMLElement], label: String
    ) throws {
        let type = try #require(Self.attributeTypes[xml["attributeType"] ?? "Undefined"], "\(label)")
        #expect(attribute.attributeType == type, "\(label)")
        let derived = xml.flag("derived")
        #expect((attribute is NSDerivedAttributeDescription) == derived, "\(label)")
        if let derivedAttribute = attribute as? NSDerivedAttributeDescription {
            #expect(derivedAttribute.derivationExpression != nil, "\(label)")
        } else {
            #expect(attribute.isTransient == xml.flag("transient"), "\(label)")
        }
        if type == .compositeAttributeType {
            let composite = try #require(attribute as? NSCompositeAttributeDescription, "\(label)")
            let definition = try #require(composites[xml["composite"] ?? ""], "\(label)")
            #expect(
                composite.elements.map(\.name) == definition.elements(forName: "attribute").compactMap { $0["name"] },
                "\(label)")
        }
        let transient = xml.flag("transient")
        #expect(attribute.isIndexedBySpotlight == (xml.flag("spotlightIndexingEnabled") && !transient), "\(label)")
        #expect(attribute.isStoredInExternalRecord == (xml.flag("storedInTruthFile") && !transient), "\(label)")
        #expect(attribute.allowsExternalBinaryDataStorage == xml.flag("allowsExternalBinaryDataStorage"), "\(label)")
        #expect(attribute.preservesValueInHistoryOnDeletion == xml.flag("preserveAfterDeletion"), "\(label)")
        if type == .transformableAttributeType {
            #expect(attribute.valueTransformerName == xml["valueTransformerName"].flatMap { $0.isEmpty ? nil : $0 })
            #expect(attribute.attributeValueClassName == xml["customClassName"], "\(label)")
        } else {
            #expect(attribute.attributeValueClassName == Self.valueClassNames[type], "\(label)")
        }
        checkDefault(attribute.defaultValue, type: type, xml: xml, label: label)
        var codes: [Int] = []
        if type == .stringAttributeType, xml["regularExpressionString"]?.isEmpty == false {
            codes.append(NSValidationStringPatternMatchingError)
        }
        let bounds: (Int, Int)? =
            switch type {
            case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .decimalAttributeType,
                .doubleAttributeType, .floatAttributeType:
                (NSValidationNumberTooSmallError, NSValidationNumberTooLargeError)
            case .stringAttributeType: (NSValidationStringTooShortError, NSValidationStringTooLongError)
            case .dateAttributeType: (NSValidationDateTooSoonError, NSValidationDateTooLateError)
            default: nil
            }
        if let bounds {
            let isDate = type == .dateAttributeType
            if xml[isDate ? "minDateTimeInterval" : "minValueString"] != nil { codes.append(bounds.0) }
            if xml[isDate ? "maxDateTimeInterval" : "maxValueString"] != nil { codes.append(bounds.1) }
        }
        #expect(attribute.validationPredicates.count == codes.count, "\(label)")
        #expect(attribute.validationWarnings.compactMap { ($0 as? NSNumber)?.intValue } == codes, "\(label)")
    }

    private func checkDefault(_ value: Any?, type: NSAttributeType, xml: XMLElement, label: String) {
        if type == .dateAttributeType {
            let interval = xml["defaultDateTimeInterval"].flatMap(Double.init)
            #expect((value as? Date)?.timeIntervalSinceReferenceDate == interval, "\(label)")
            return
        }
        guard let text = xml["defaultValueString"] else {
            #expect(value == nil, "\(label) has no default value")
            return
        }
        switch type {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType:
            #expect((value as? NSNumber)?.int64Value == Int64(text), "\(label)")
        case .doubleAttributeType, .floatAttributeType:
            #expect((value as? NSNumber)?.doubleValue == Double(text), "\(label)")
        case .decimalAttributeType:
            #expect((value as? NSDecimalNumber)?.decimalValue == Decimal(string: text), "\(label)")
        case .booleanAttributeType:
            #expect((value as? NSNumber)?.boolValue == (text == "YES"), "\(label)")
        case .stringAttributeType:
            #expect(value as? String == text, "\(label)")
        case .UUIDAttributeType:
            #expect(value as? UUID == UUID(uuidString: text), "\(label)")
        case .URIAttributeType:
            #expect(value as? URL == URL(string: text), "\(label)")
        default:
            break
        }
    }

    private func check(_ relationship: NSRelationshipDescription, against xml: XMLElement, label: String) {
        let toMany = xml.flag("toMany")
        #expect(relationship.destinationEntity?.name == xml["destinationEntity"], "\(label)")
        #expect(relationship.inverseRelationship?.name == xml["inverseName"], "\(label)")
        #expect(relationship.isToMany == toMany, "\(label)")
        #expect(relationship.isOrdered == xml.flag("ordered"), "\(label)")
        #expect(relationship.isTransient == xml.flag("transient"), "\(label)")
        #expect(relationship.minCount == Int(xml["minCount"] ?? "0"), "\(label)")
        #expect(relationship.maxCount == (toMany ? Int(xml["maxCount"] ?? "0") : 1), "\(label)")
        let rules: [String: NSDeleteRule] = [
            "Nullify": .nullifyDeleteRule, "Cascade": .cascadeDeleteRule, "Deny": .denyDeleteRule,
            "No Action": .noActionDeleteRule,
        ]
        #expect(relationship.deleteRule == rules[xml["deletionRule"] ?? "Nullify"], "\(label)")
    }

    private func checkConfigurations(of model: NSManagedObjectModel, against root: XMLElement) {
        let configurations = root.elements(forName: "configuration")
        #expect(Set(model.configurations) == Set(configurations.compactMap { $0["name"] }))
        for configuration in configurations {
            guard let name = configuration["name"] else { continue }
            let members = configuration.elements(forName: "memberEntity").compactMap { $0["name"] }
            #expect(Set(model.entities(forConfigurationName: name)?.compactMap(\.name) ?? []) == Set(members))
        }
    }

    private func checkTemplates(of model: NSManagedObjectModel, against root: XMLElement) {
        let templates = root.elements(forName: "fetchRequest")
        #expect(Set(model.fetchRequestTemplatesByName.keys) == Set(templates.compactMap { $0["name"] }))
        for xml in templates {
            guard let name = xml["name"], let request = model.fetchRequestTemplate(forName: name) else { continue }
            #expect(request.entity?.name == xml["entity"], "template \(name)")
            #expect((request.predicate != nil) == (xml["predicateString"] != nil), "template \(name)")
            #expect(request.fetchLimit == Int(xml["fetchLimit"] ?? "0"), "template \(name)")
            #expect(request.fetchBatchSize == Int(xml["fetchBatchSize"] ?? "0"), "template \(name)")
            #expect(request.resultType.rawValue == UInt(xml["resultType"] ?? "0"), "template \(name)")
        }
    }

    private func checkUserInfo(_ info: [AnyHashable: Any]?, _ element: XMLElement, _ label: String) {
        let entries = element.elements(forName: "userInfo").flatMap { $0.elements(forName: "entry") }
        #expect((info ?? [:]).count == entries.count, "\(label) userInfo")
        for entry in entries {
            guard let key = entry["key"] else { continue }
            #expect(info?[key] as? String == (entry["value"] ?? ""), "\(label) userInfo[\(key)]")
        }
    }

    private func names(_ list: [Any]) -> [String] {
        list.map { ($0 as? NSPropertyDescription)?.name ?? ($0 as? String) ?? "\($0)" }
    }

    static let attributeTypes: [String: NSAttributeType] = [
        "Undefined": .undefinedAttributeType, "Integer 16": .integer16AttributeType,
        "Integer 32": .integer32AttributeType, "Integer 64": .integer64AttributeType,
        "Decimal": .decimalAttributeType, "Double": .doubleAttributeType, "Float": .floatAttributeType,
        "String": .stringAttributeType, "Boolean": .booleanAttributeType, "Date": .dateAttributeType,
        "Binary": .binaryDataAttributeType, "UUID": .UUIDAttributeType, "URI": .URIAttributeType,
        "Transformable": .transformableAttributeType, "ObjectID": .objectIDAttributeType,
        "Composite": .compositeAttributeType,
    ]

    static let valueClassNames: [NSAttributeType: String] = [
        .integer16AttributeType: "NSNumber", .integer32AttributeType: "NSNumber", .integer64AttributeType: "NSNumber",
        .decimalAttributeType: "NSDecimalNumber", .doubleAttributeType: "NSNumber", .floatAttributeType: "NSNumber",
        .stringAttributeType: "NSString", .booleanAttributeType: "NSNumber", .dateAttributeType: "NSDate",
        .binaryDataAttributeType: "NSData", .UUIDAttributeType: "NSUUID", .URIAttributeType: "NSURL",
        .compositeAttributeType: "NSDictionary",
    ]
}

extension XMLElement {
    fileprivate subscript(attribute: String) -> String? {
        self.attribute(forName: attribute)?.stringValue
    }

    fileprivate func flag(_ attribute: String) -> Bool {
        self[attribute] == "YES"
    }
}
#endif
