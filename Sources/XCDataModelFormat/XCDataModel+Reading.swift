import Foundation

extension XCDataModel {
    /// Reads one model version: an `.xcdatamodel` folder, or its `contents` file.
    ///
    /// - Throws: `XCDataModelError` naming the file, entity, property and line of the first problem found:
    ///   malformed XML, an unknown attribute type, a missing destination, inverse or parent entity, an inheritance
    ///   cycle, a duplicate name.
    public init(contentsOf url: URL) throws(XCDataModelError) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw XCDataModelError(.unreadable, url: url, message: "no model exists at this path")
        }
        let contentsURL: URL
        let modelURL: URL
        if isDirectory.boolValue {
            modelURL = url
            contentsURL = url.appendingPathComponent("contents")
            if !FileManager.default.fileExists(atPath: contentsURL.path) {
                if FileManager.default.fileExists(atPath: url.appendingPathComponent("elements").path) {
                    throw XCDataModelError(
                        .unsupportedFormat, url: url,
                        message: """
                            the model is in Xcode 3's binary format ('elements'); open it in a current Xcode and \
                            save it to convert it to the XML format
                            """)
                }
                throw XCDataModelError(.unreadable, url: url, message: "the model folder has no 'contents' file")
            }
        } else {
            contentsURL = url
            modelURL = url.lastPathComponent == "contents" ? url.deletingLastPathComponent() : url
        }
        let data: Data
        do {
            data = try Data(contentsOf: contentsURL)
        } catch {
            throw XCDataModelError(
                .unreadable, url: contentsURL, message: "the file cannot be read (\(error.localizedDescription))")
        }
        var name = modelURL.lastPathComponent
        if name.hasSuffix(".xcdatamodel") { name = String(name.dropLast(".xcdatamodel".count)) }
        try self.init(data: data, name: name, url: modelURL, contentsURL: contentsURL)
    }

    /// Reads a model from the XML of a `contents` file. `url` is used in messages.
    public init(data: Data, name: String, url: URL, contentsURL: URL? = nil) throws(XCDataModelError) {
        let fileURL = contentsURL ?? url
        let root: XMLTreeElement
        do {
            root = try XMLTreeParser.parse(data)
        } catch {
            throw XCDataModelError(.malformed, url: fileURL, line: error.line, message: error.message)
        }
        let reader = ModelReader(url: fileURL)
        self = try reader.read(root, name: name, url: url)
        try XCDataModelValidator(model: self, url: fileURL).validate()
    }
}

/// Turns the XML tree of a `contents` file into an `XCDataModel`.
private struct ModelReader {
    let url: URL

    func read(_ root: XMLTreeElement, name: String, url modelURL: URL) throws(XCDataModelError) -> XCDataModel {
        guard root.name == "model" else {
            throw XCDataModelError(
                .malformed, url: url, line: root.line,
                message: "the root element is <\(root.name)>, not <model>: this is not a Core Data model")
        }
        var entities: [XCDataModel.Entity] = []
        var composites: [XCDataModel.Composite] = []
        var fetchRequests: [XCDataModel.FetchRequest] = []
        var configurations: [XCDataModel.Configuration] = []
        var layout: [String: XCDataModel.Layout] = [:]
        for element in root.children {
            switch element.name {
            case "entity":
                entities.append(try entity(element))
            case "composite":
                let compositeName = try required(element, "name", entity: nil)
                var attributes: [XCDataModel.Attribute] = []
                for child in element.children(named: "attribute") {
                    attributes.append(try attribute(child, entity: compositeName))
                }
                composites.append(.init(name: compositeName, attributes: attributes, line: element.line))
            case "fetchRequest":
                fetchRequests.append(try fetchRequest(element, entity: nil))
            case "configuration":
                configurations.append(
                    .init(
                        name: try required(element, "name", entity: nil),
                        usedWithCloudKit: element.flag("usedWithCloudKit"),
                        memberEntities: element.children(named: "memberEntity").compactMap { $0["name"] },
                        line: element.line))
            case "elements":
                for box in element.children(named: "element") {
                    guard let entityName = box["name"] else { continue }
                    layout[entityName] = XCDataModel.Layout(
                        x: Double(box["positionX"] ?? "") ?? 0, y: Double(box["positionY"] ?? "") ?? 0,
                        width: Double(box["width"] ?? "") ?? 128, height: Double(box["height"] ?? "") ?? 0)
                }
            default:
                continue
            }
        }
        let identifier = root["userDefinedModelVersionIdentifier"]
        return XCDataModel(
            name: name, url: modelURL, versionIdentifier: identifier?.isEmpty == false ? identifier : nil,
            sourceLanguage: root["sourceLanguage"], entities: entities, composites: composites,
            fetchRequests: fetchRequests, configurations: configurations, layout: layout)
    }

    private func required(_ element: XMLTreeElement, _ attribute: String, entity: String?, property: String? = nil)
        throws(XCDataModelError) -> String
    {
        guard let value = element[attribute], !value.isEmpty else {
            throw XCDataModelError(
                .malformed, url: url, entity: entity, property: property, line: element.line,
                message: "<\(element.name)> has no '\(attribute)'")
        }
        return value
    }

    private func entity(_ element: XMLTreeElement) throws(XCDataModelError) -> XCDataModel.Entity {
        let name = try required(element, "name", entity: nil)
        var properties: [XCDataModel.Property] = []
        var uniqueness: [[String]] = []
        var compound: [[String]] = []
        var indexes: [XCDataModel.FetchIndex] = []
        for child in element.children {
            switch child.name {
            case "attribute":
                properties.append(.attribute(try attribute(child, entity: name)))
            case "relationship":
                properties.append(.relationship(try relationship(child, entity: name)))
            case "fetchedProperty":
                properties.append(.fetchedProperty(try fetchedProperty(child, entity: name)))
            case "uniquenessConstraints":
                for constraint in child.children(named: "uniquenessConstraint") {
                    uniqueness.append(constraint.children(named: "constraint").compactMap { $0["value"] })
                }
            case "compoundIndexes":
                for index in child.children(named: "compoundIndex") {
                    compound.append(index.children(named: "index").compactMap { $0["value"] })
                }
            case "fetchIndex":
                let indexName = try required(child, "name", entity: name)
                let elements = child.children(named: "fetchIndexElement").compactMap { element in
                    element["property"].map { property in
                        XCDataModel.FetchIndexElement(
                            property: property, type: element["type"] ?? "Binary",
                            isAscending: element["order"] != "descending")
                    }
                }
                indexes.append(
                    .init(name: indexName, elements: elements, partialIndexPredicate: child["partialIndexPredicate"]))
            default:
                continue
            }
        }
        return XCDataModel.Entity(
            name: name, representedClassName: nonEmpty(element["representedClassName"]),
            parentEntity: nonEmpty(element["parentEntity"]), isAbstract: element.flag("isAbstract"),
            versionHashModifier: nonEmpty(element["versionHashModifier"]),
            renamingIdentifier: nonEmpty(element["elementID"]), codeGenerationType: element["codeGenerationType"],
            userInfo: userInfo(element), properties: properties, uniquenessConstraints: uniqueness,
            compoundIndexes: compound, fetchIndexes: indexes, line: element.line)
    }

    private func common(_ element: XMLTreeElement) -> XCDataModel.PropertyCommon {
        XCDataModel.PropertyCommon(
            isOptional: element.flag("optional"), isTransient: element.flag("transient"),
            isIndexed: element.flag("indexed"), versionHashModifier: nonEmpty(element["versionHashModifier"]),
            renamingIdentifier: nonEmpty(element["elementID"]),
            isIndexedBySpotlight: element.flag("spotlightIndexingEnabled"),
            isStoredInExternalRecord: element.flag("storedInTruthFile"), userInfo: userInfo(element),
            line: element.line)
    }

    private func attribute(_ element: XMLTreeElement, entity: String) throws(XCDataModelError)
        -> XCDataModel.Attribute
    {
        let name = try required(element, "name", entity: entity)
        let typeName = element["attributeType"] ?? "Undefined"
        guard let type = XCDataModel.AttributeType(rawValue: typeName) else {
            let known = XCDataModel.AttributeType.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")
            throw XCDataModelError(
                .unknownAttributeType, url: url, entity: entity, property: name, line: element.line,
                message: "unknown attribute type '\(typeName)'; Core Data's types are \(known)")
        }
        let derived = element.flag("derived")
        return XCDataModel.Attribute(
            name: name, type: type, common: common(element), defaultValueString: element["defaultValueString"],
            defaultDateTimeInterval: element["defaultDateTimeInterval"].flatMap(Double.init),
            minValueString: element["minValueString"], maxValueString: element["maxValueString"],
            minDateTimeInterval: element["minDateTimeInterval"].flatMap(Double.init),
            maxDateTimeInterval: element["maxDateTimeInterval"].flatMap(Double.init),
            regularExpressionString: nonEmpty(element["regularExpressionString"]),
            usesScalarValueType: element["usesScalarValueType"].map { $0 == "YES" },
            valueTransformerName: nonEmpty(element["valueTransformerName"]),
            customClassName: nonEmpty(element["customClassName"]),
            allowsExternalBinaryDataStorage: element.flag("allowsExternalBinaryDataStorage"),
            preservesValueInHistoryOnDeletion: element.flag("preserveAfterDeletion"),
            allowsCloudEncryption: element.flag("allowsCloudEncryption"),
            derivationExpression: derived ? (element["derivationExpression"] ?? "") : nil,
            compositeName: nonEmpty(element["composite"]))
    }

    private func relationship(_ element: XMLTreeElement, entity: String) throws(XCDataModelError)
        -> XCDataModel.Relationship
    {
        let name = try required(element, "name", entity: entity)
        let destination = try required(element, "destinationEntity", entity: entity, property: name)
        func count(_ attribute: String) throws(XCDataModelError) -> Int? {
            guard let text = element[attribute] else { return nil }
            guard let value = Int(text), value >= 0 else {
                throw XCDataModelError(
                    .malformed, url: url, entity: entity, property: name, line: element.line,
                    message: "'\(attribute)' is '\(text)', not a count")
            }
            return value
        }
        return XCDataModel.Relationship(
            name: name, common: common(element), destinationEntity: destination,
            inverseName: nonEmpty(element["inverseName"]), inverseEntity: nonEmpty(element["inverseEntity"]),
            isToMany: element.flag("toMany"), isOrdered: element.flag("ordered"), minCount: try count("minCount") ?? 0,
            maxCount: try count("maxCount"), deletionRule: element["deletionRule"] ?? "Nullify")
    }

    private func fetchedProperty(_ element: XMLTreeElement, entity: String) throws(XCDataModelError)
        -> XCDataModel.FetchedProperty
    {
        let name = try required(element, "name", entity: entity)
        guard let request = element.child(named: "fetchRequest") else {
            throw XCDataModelError(
                .malformed, url: url, entity: entity, property: name, line: element.line,
                message: "the fetched property has no <fetchRequest>")
        }
        return XCDataModel.FetchedProperty(
            name: name, common: common(element), fetchRequest: try fetchRequest(request, entity: entity))
    }

    private func fetchRequest(_ element: XMLTreeElement, entity: String?) throws(XCDataModelError)
        -> XCDataModel.FetchRequest
    {
        func flag(_ name: String) -> Bool? { element[name].map { $0 == "YES" } }
        return XCDataModel.FetchRequest(
            name: element["name"] ?? "", entity: try required(element, "entity", entity: entity),
            predicateString: nonEmpty(element["predicateString"]), fetchLimit: element["fetchLimit"].flatMap(Int.init),
            fetchBatchSize: element["fetchBatchSize"].flatMap(Int.init),
            resultType: element["resultType"].flatMap(UInt.init), includesSubentities: flag("includeSubentities"),
            includesPropertyValues: flag("includePropertyValues"),
            includesPendingChanges: flag("includesPendingChanges"),
            returnsObjectsAsFaults: flag("returnObjectsAsFaults"),
            returnsDistinctResults: flag("returnDistinctResults"), line: element.line)
    }

    private func userInfo(_ element: XMLTreeElement) -> [XCDataModel.UserInfoEntry] {
        guard let info = element.child(named: "userInfo") else { return [] }
        return info.children(named: "entry").compactMap { entry in
            entry["key"].map { XCDataModel.UserInfoEntry(key: $0, value: entry["value"] ?? "") }
        }
    }

    private func nonEmpty(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        return value
    }
}
