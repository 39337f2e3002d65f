import XCDataModelFormat

#if canImport(FoundationXML)
import FoundationXML
#endif

/// Reads Xcode's mapping model format: an `.xcmappingmodel` folder whose `xcmapping.xml` is a Core Data XML store of
/// the mapping editor's objects (`XDDEVMAPPINGMODEL`, `XDDEVENTITYMAPPING`, `XDDEVATTRIBUTEMAPPING`,
/// `XDDEVRELATIONSHIPMAPPING`), with expressions and user info as keyed archives and the two model versions as
/// archives of the editor's model (the Xcode 3 format that `LegacyModelReader` reads).
///
/// It gives what Xcode's mapping compiler makes of it — checked against the corpus's `.cdm` compiled from its
/// `.xcmappingmodel`: entity mappings in the editor's order, named `SourceToDestination` (or after the one entity
/// of an adding or removing mapping), typed custom when they name a policy, add without a source, remove without a
/// destination, copy otherwise; property mappings in name order; the source fetch Xcode writes; and the value
/// expressions the editor leaves to be generated (see `XcodeMappingAutogeneration`).
enum XcodeMappingModelReader {
    /// One object of the XML store: its type, attributes and relationships (by target ids).
    struct Object {
        var type: String
        var id: String
        var attributes: [String: String] = [:]
        var relationships: [String: [String]] = [:]
    }

    /// A mapping model file with the model versions it was made between: as the editor embedded them (`nil` when
    /// they cannot be read) and as the paths of the versions in the project.
    struct Document {
        var mapping: NSMappingModel
        var sourceModelPath: String?
        var destinationModelPath: String?
        var sourceModel: NSManagedObjectModel?
        var destinationModel: NSManagedObjectModel?
    }

    static func load(_ url: URL) throws -> NSMappingModel {
        try document(url).mapping
    }

    /// The mapping model in the `xcmapping.xml` at `url`, completed from the models it embeds if they read.
    static func document(_ url: URL) throws -> Document {
        let data = try MappingModelFileLoader.read(url)
        let objects: [Object]
        do {
            objects = try parse(data)
        } catch {
            throw MappingModelFileLoader.error(url, NSCoreDataError, "\(error)")
        }
        do {
            return try decode(objects)
        } catch let error as NSError where error.domain == NSCocoaErrorDomain {
            throw error
        } catch {
            throw MappingModelFileLoader.error(url, NSCoreDataError, "the mapping model is damaged: \(error)")
        }
    }

    static func decode(_ objects: [Object]) throws -> Document {
        var byID: [String: Object] = [:]
        for object in objects { byID[object.id] = object }
        let model = NSMappingModel()
        var document = Document(mapping: model)
        if let root = objects.first(where: { $0.type == "XDDEVMAPPINGMODEL" }) {
            document.sourceModelPath = nonEmpty(root.attributes["sourcemodelpath"])
            document.destinationModelPath = nonEmpty(root.attributes["destinationmodelpath"])
            model._sourceModelVersionName = versionName(document.sourceModelPath)
            model._destinationModelVersionName = versionName(document.destinationModelPath)
            document.sourceModel = embeddedModel(
                root.attributes["sourcemodeldata"], name: model._sourceModelVersionName)
            document.destinationModel = embeddedModel(
                root.attributes["destinationmodeldata"], name: model._destinationModelVersionName)
        }
        let entityObjects = objects.filter { $0.type == "XDDEVENTITYMAPPING" }.sorted {
            (Int($0.attributes["mappingnumber"] ?? "") ?? .max, $0.id) < (
                Int($1.attributes["mappingnumber"] ?? "") ?? .max, $1.id
            )
        }
        model._entityMappings = try entityObjects.map { object in
            try entityMapping(object, byID: byID)
        }
        if let sourceModel = document.sourceModel, let destinationModel = document.destinationModel {
            complete(model, sourceModel: sourceModel, destinationModel: destinationModel)
        }
        return document
    }

    /// Does what Xcode's compiler does with the two model versions: records each entity's version hash in the entity
    /// mappings, and generates the value expressions the editor left to be generated.
    static func complete(
        _ model: NSMappingModel, sourceModel: NSManagedObjectModel, destinationModel: NSManagedObjectModel
    ) {
        for mapping in model._entityMappings {
            mapping.sourceEntityVersionHash = mapping.sourceEntityName.flatMap {
                sourceModel.entitiesByName[$0]?.versionHash
            }
            mapping.destinationEntityVersionHash = mapping.destinationEntityName.flatMap {
                destinationModel.entitiesByName[$0]?.versionHash
            }
        }
        XcodeMappingAutogeneration.complete(model, sourceModel: sourceModel, destinationModel: destinationModel)
    }

    /// `Model.xcdatamodeld/Model 2.xcdatamodel` → `Model 2`.
    private static func versionName(_ path: String?) -> String? {
        guard let path, !path.isEmpty else { return nil }
        let last = path.split(separator: "/").last.map(String.init) ?? path
        return last.hasSuffix(".xcdatamodel") ? String(last.dropLast(".xcdatamodel".count)) : last
    }

    /// The model version the editor embedded, or `nil` if it cannot be read (the mapping then matches models by
    /// version name, and completes its generated expressions against the models it migrates).
    private static func embeddedModel(_ base64: String?, name: String?) -> NSManagedObjectModel? {
        guard let base64, let data = Data(base64Encoded: base64, options: .ignoreUnknownCharacters),
            let archive = try? KeyedArchive(data: data), let xml = try? LegacyModelReader.xml(from: archive)
        else { return nil }
        let url = URL(fileURLWithPath: "/\(name ?? "embedded").xcdatamodel")
        guard let source = try? XCDataModel(data: Data(xml.utf8), name: name ?? "embedded", url: url) else {
            return nil
        }
        let model = NSManagedObjectModel()
        guard (try? XMLModelReader(source).load(into: model)) != nil else { return nil }
        return model
    }

    private static func entityMapping(_ object: Object, byID: [String: Object]) throws -> NSEntityMapping {
        let mapping = NSEntityMapping()
        let source = nonEmpty(object.attributes["sourcename"])
        let destination = nonEmpty(object.attributes["destinationname"])
        mapping.sourceEntityName = source
        mapping.destinationEntityName = destination
        let policy = nonEmpty(object.attributes["migrationpolicyclassname"])
        mapping.entityMigrationPolicyClassName = policy
        switch (source, destination) {
        case let (source?, destination?):
            mapping.name = nonEmpty(object.attributes["name"]) ?? "\(source)To\(destination)"
        case (nil, let destination?): mapping.name = nonEmpty(object.attributes["name"]) ?? destination
        case (let source?, nil): mapping.name = nonEmpty(object.attributes["name"]) ?? source
        case (nil, nil): throw KeyedArchive.Failure(description: "an entity mapping names neither entity")
        }
        switch object.attributes["mappingtypename"] ?? "Undefined" {
        case "Custom": mapping.mappingType = .customEntityMappingType
        case "Add": mapping.mappingType = .addEntityMappingType
        case "Remove": mapping.mappingType = .removeEntityMappingType
        case "Copy": mapping.mappingType = .copyEntityMappingType
        case "Transform": mapping.mappingType = .transformEntityMappingType
        default:
            if policy != nil {
                mapping.mappingType = .customEntityMappingType
            } else if source == nil {
                mapping.mappingType = .addEntityMappingType
            } else if destination == nil {
                mapping.mappingType = .removeEntityMappingType
            } else {
                mapping.mappingType = .copyEntityMappingType
            }
        }
        mapping.userInfo = try userInfo(object.attributes["userinfodata"])
        if let data = object.attributes["sourceexpressiondata"] {
            mapping.sourceExpression = try expression(data)
        } else if let source {
            mapping.sourceExpression = MappingInference.sourceExpression(for: source)
        }
        mapping.attributeMappings = try propertyMappings(object.relationships["attributemappings"], byID: byID)
        mapping.relationshipMappings = try propertyMappings(object.relationships["relationshipmappings"], byID: byID)
        return mapping
    }

    private static func propertyMappings(_ ids: [String]?, byID: [String: Object]) throws -> [NSPropertyMapping] {
        var mappings: [NSPropertyMapping] = []
        for id in ids ?? [] {
            guard let object = byID[id], let name = nonEmpty(object.attributes["name"]) else { continue }
            let mapping = NSPropertyMapping()
            mapping.name = name
            mapping.userInfo = try userInfo(object.attributes["userinfodata"])
            if let data = object.attributes["valueexpressiondata"] {
                mapping.valueExpression = try expression(data)
            } else {
                mapping._generation = .init(
                    isRelationship: object.type == "XDDEVRELATIONSHIPMAPPING",
                    sourceMappingName: nonEmpty(object.attributes["sourcemappingname"]),
                    sourceKeyPath: nonEmpty(object.attributes["sourcekeypath"]))
            }
            mappings.append(mapping)
        }
        return mappings.sorted { ($0.name ?? "") < ($1.name ?? "") }
    }

    private static func nonEmpty(_ text: String?) -> String? {
        guard let text = text?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty else { return nil }
        return text
    }

    private static func archive(_ base64: String) throws -> KeyedArchive {
        guard let data = Data(base64Encoded: base64, options: .ignoreUnknownCharacters) else {
            throw KeyedArchive.Failure(description: "a binary attribute is not Base64")
        }
        return try KeyedArchive(data: data)
    }

    private static func expression(_ base64: String) throws -> NSExpression {
        let archive = try archive(base64)
        return try ArchivedPredicateDecoder(archive: archive).expression(try archive.rootObject())
    }

    private static func userInfo(_ base64: String?) throws -> [AnyHashable: Any]? {
        guard let base64 else { return nil }
        let archive = try archive(base64)
        guard let top = try? archive.rootObject() else { return nil }
        return try CompiledMappingModelReader.userInfo(.uid(top.index), archive)
    }

    // MARK: XML

    struct ParseFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// The objects of an XML store document.
    static func parse(_ data: Data) throws -> [Object] {
        if let problem = XMLParserInputCheck.problem(in: data) {
            throw ParseFailure(description: "malformed XML at line \(problem.line): \(problem.message)")
        }
        let parser = XMLParser(data: data)
        let builder = Builder()
        parser.delegate = builder
        parser.shouldResolveExternalEntities = false
        let parsed = parser.parse()
        if let failure = builder.failure { throw failure }
        guard parsed else {
            let message = parser.parserError.map { ($0 as NSError).localizedDescription } ?? "the document is empty"
            throw ParseFailure(description: "malformed XML at line \(parser.lineNumber): \(message)")
        }
        guard builder.sawDatabase else {
            throw ParseFailure(description: "the file is not an Xcode mapping model (no <database> element)")
        }
        return builder.objects
    }

    private final class Builder: NSObject, XMLParserDelegate {
        var objects: [Object] = []
        var failure: ParseFailure?
        var sawDatabase = false
        private var current: Object?
        private var attributeName: String?
        private var text = ""
        private var depth = 0

        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
            qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]
        ) {
            depth += 1
            if depth > 32 {
                failure = failure ?? ParseFailure(description: "elements nest more than 32 deep")
                parser.abortParsing()
                return
            }
            switch elementName {
            case "database":
                sawDatabase = true
            case "object":
                current = Object(type: attributeDict["type"] ?? "", id: attributeDict["id"] ?? "")
            case "attribute":
                attributeName = attributeDict["name"]
                text = ""
            case "relationship":
                if let name = attributeDict["name"] {
                    current?.relationships[name] = (attributeDict["idrefs"] ?? "").split(separator: " ").map(
                        String.init)
                }
            default:
                break
            }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            if attributeName != nil { text += string }
        }

        func parser(
            _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?
        ) {
            depth -= 1
            switch elementName {
            case "attribute":
                if let name = attributeName { current?.attributes[name] = text }
                attributeName = nil
            case "object":
                if let object = current { objects.append(object) }
                current = nil
            default:
                break
            }
        }

        func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
            failure =
                failure
                ?? ParseFailure(
                    description: "malformed XML at line \(parser.lineNumber): "
                        + (parseError as NSError).localizedDescription)
        }
    }
}
