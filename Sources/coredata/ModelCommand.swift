import ArgumentParser
import OpenCoreData

/// `coredata model <bundle>`: what a model holds — its versions, and for each its entities with their attributes,
/// relationships and version hashes, the hashes a store records to recognise its model.
struct ModelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "model",
        abstract: "Print a model's versions, entities, attributes, relationships and version hashes.",
        discussion: """
            Reads Xcode model bundles (.xcdatamodeld), single versions (.xcdatamodel) and compiled models \
            (.momd, .mom). Version hashes are printed in Base64, as store metadata holds them \
            (NSStoreModelVersionHashes).

            With --diff, compares two versions: entities and properties added, removed, renamed and changed, \
            with their version hashes, and whether lightweight migration can be inferred between them. Each \
            version is a model file (a bundle stands for its current version) or, after a model bundle, the name \
            of one of its versions:

              coredata model --diff Old.xcdatamodel New.xcdatamodel
              coredata model Model.xcdatamodeld --diff "Model" "Model 2"
            """
    )

    @Argument(help: "The model: an .xcdatamodeld, .xcdatamodel, .momd or .mom.")
    var path: String?

    @Option(
        name: .customLong("diff"), parsing: .upToNextOption,
        help: "Compare two versions: model files, or version names of the model given.")
    var diff: [String] = []

    @Option(name: .customLong("version"), help: "Print this version instead of the current one.")
    var versionName: String?

    @Flag(name: .customLong("all-versions"), help: "Print every version, not only the current one.")
    var allVersions = false

    @Flag(help: "Also print each property's version hash.")
    var propertyHashes = false

    func validate() throws {
        if diff.isEmpty {
            guard path != nil else { throw ValidationError("Give the model to print, or --diff and two versions") }
        } else {
            guard diff.count == 2 else {
                throw ValidationError("--diff compares two versions; \(diff.count) were given")
            }
            guard versionName == nil, !allVersions else {
                throw ValidationError("--diff names its two versions; leave out --version and --all-versions")
            }
        }
    }

    func run() throws {
        do {
            if diff.isEmpty {
                try render(URL(fileURLWithPath: path ?? ""))
            } else {
                let old = try version(diff[0])
                let new = try version(diff[1])
                print(
                    ModelDiff.render(from: old.model, named: old.name, to: new.model, named: new.name), terminator: "")
            }
        } catch let error as NSError where error.domain == NSCocoaErrorDomain {
            throw ModelToolError(message: error.localizedDescription)
        }
    }

    /// A version to compare: the name of a version of the model given, else a model file (its current version).
    private func version(_ specifier: String) throws -> (name: String, model: NSManagedObjectModel) {
        let url = URL(fileURLWithPath: specifier)
        let isModelFile =
            ["xcdatamodeld", "xcdatamodel", "momd", "mom"].contains(url.pathExtension.lowercased())
            && FileManager.default.fileExists(atPath: url.path)
        if let path, !isModelFile {
            let versions = try NSManagedObjectModel.versionsOfModel(at: URL(fileURLWithPath: path))
            guard let version = versions.first(where: { $0.name == specifier }) else {
                throw ValidationError(
                    "No version named '\(specifier)'; the versions are \(versions.map(\.name).joined(separator: ", "))")
            }
            return version
        }
        let versions = try NSManagedObjectModel.versionsOfModel(at: url)
        let current = try NSManagedObjectModel.currentVersionNameOfModel(at: url)
        guard let version = versions.first(where: { $0.name == current }) ?? versions.last else {
            throw ValidationError("The model \(url.path) has no version")
        }
        return version
    }

    private func render(_ url: URL) throws {
        let versions = try NSManagedObjectModel.versionsOfModel(at: url)
        let current = try NSManagedObjectModel.currentVersionNameOfModel(at: url)
        print("Model \(url.lastPathComponent)")
        let names = versions.map { $0.name == current ? "\($0.name) (current)" : $0.name }
        print("Versions: \(names.joined(separator: ", "))")
        if current == nil, versions.count > 1 {
            print("Warning: the bundle does not say which version is current")
        }
        let shown: [(name: String, model: NSManagedObjectModel)]
        if allVersions {
            shown = versions
        } else if let versionName {
            guard let version = versions.first(where: { $0.name == versionName }) else {
                throw ValidationError(
                    "No version named '\(versionName)'; the versions are \(versions.map(\.name).joined(separator: ", "))"
                )
            }
            shown = [version]
        } else {
            shown =
                versions.filter { $0.name == current }.isEmpty
                ? Array(versions.suffix(1))
                : versions.filter {
                    $0.name == current
                }
        }
        for version in shown {
            print("")
            print(Self.describe(version.model, name: version.name, propertyHashes: propertyHashes), terminator: "")
        }
    }

    /// The text for one version.
    static func describe(_ model: NSManagedObjectModel, name: String, propertyHashes: Bool) -> String {
        var out = "Version \(name)"
        if !model.versionIdentifiers.isEmpty {
            out += " (identifiers: \(model.versionIdentifiers.map { "\($0)" }.sorted().joined(separator: ", ")))"
        }
        out += "\n  checksum \(model.versionChecksum)\n"
        for configuration in model.configurations {
            let members = model.entities(forConfigurationName: configuration)?.compactMap(\.name).sorted() ?? []
            out += "  configuration \(configuration): \(members.joined(separator: ", "))\n"
        }
        for template in model.fetchRequestTemplatesByName.keys.sorted() {
            let request = model.fetchRequestTemplatesByName[template]
            let predicate = request?.predicate.map { " where \($0.predicateFormat)" } ?? ""
            out += "  fetch request \(template): \(request?.entityName ?? "?")\(predicate)\n"
        }
        for entity in model.entities.sorted(by: { ($0.name ?? "") < ($1.name ?? "") }) {
            out += "\n  Entity \(entity.name ?? "")"
            var traits: [String] = []
            if entity.managedObjectClassName != "NSManagedObject" {
                traits.append("class \(entity.managedObjectClassName ?? "")")
            }
            if let parent = entity.superentity?.name { traits.append("parent \(parent)") }
            if entity.isAbstract { traits.append("abstract") }
            if !entity.subentities.isEmpty {
                traits.append("subentities \(entity.subentities.compactMap(\.name).sorted().joined(separator: ", "))")
            }
            if !traits.isEmpty { out += " (\(traits.joined(separator: "; ")))" }
            out += "\n    version hash \(entity.versionHash.base64EncodedString())\n"
            let own = entity.properties.filter { $0.entity === entity }.sorted { $0.name < $1.name }
            let width = own.map(\.name.count).max() ?? 0
            for property in own {
                let padded = property.name.padding(toLength: width, withPad: " ", startingAt: 0)
                out += "    \(padded)  \(describe(property))\n"
                if propertyHashes {
                    out +=
                        "    \(String(repeating: " ", count: width))  hash \(property.versionHash.base64EncodedString())\n"
                }
            }
            for constraint in entity.uniquenessConstraints where !constraint.isEmpty {
                let names = constraint.map { ($0 as? NSPropertyDescription)?.name ?? "\($0)" }
                out += "    unique (\(names.joined(separator: ", ")))\n"
            }
            for index in entity.indexes {
                let elements = index.elements.map { ($0.propertyName ?? "?") + ($0.isAscending ? "" : " desc") }
                out += "    index \(index.name) (\(elements.joined(separator: ", ")))\n"
            }
        }
        return out
    }

    static func describe(_ property: NSPropertyDescription) -> String {
        var words: [String] = []
        switch property {
        case let derived as NSDerivedAttributeDescription:
            words.append(typeName(derived.attributeType))
            words.append("derived from \(derived.derivationExpression.map { "\($0)" } ?? "?")")
        case let attribute as NSAttributeDescription:
            var type = typeName(attribute.attributeType)
            if let composite = attribute as? NSCompositeAttributeDescription {
                type += " (\(composite.elements.map(\.name).joined(separator: ", ")))"
            }
            if attribute.attributeType == .transformableAttributeType {
                type += " (\(attribute.attributeValueClassName ?? "NSObject")"
                type += attribute.valueTransformerName.map { " via \($0))" } ?? ")"
            }
            words.append(type)
            if let text = attribute.defaultValue as? String {
                words.append("default \"\(text)\"")
            } else if let value = attribute.defaultValue {
                words.append("default \(value)")
            }
            if attribute.allowsExternalBinaryDataStorage { words.append("external storage") }
        case let relationship as NSRelationshipDescription:
            let destination = relationship.destinationEntity?.name ?? "?"
            words.append(relationship.isToMany ? "→→ \(destination)" : "→ \(destination)")
            if relationship.isToMany {
                words.append(relationship.isOrdered ? "to-many ordered" : "to-many")
                if relationship.minCount > 0 || relationship.maxCount > 0 {
                    words.append(
                        "count \(relationship.minCount)…\(relationship.maxCount == 0 ? "" : "\(relationship.maxCount)")"
                    )
                }
            } else {
                words.append("to-one")
            }
            words.append(deleteRuleName(relationship.deleteRule))
            if let inverse = relationship.inverseRelationship?.name { words.append("inverse \(inverse)") }
        case let fetched as NSFetchedPropertyDescription:
            let request = fetched.fetchRequest
            words.append("fetched \(request?.entityName ?? "?")")
            if let predicate = request?.predicate { words.append("where \(predicate.predicateFormat)") }
        default:
            break
        }
        words.append(property.isOptional ? "optional" : "required")
        if property.isTransient { words.append("transient") }
        if property.isIndexed { words.append("indexed") }
        if property.renamingIdentifier != property.name, let renaming = property.renamingIdentifier {
            words.append("renamed from \(renaming)")
        }
        if let modifier = property.versionHashModifier { words.append("hash modifier \(modifier)") }
        return words.joined(separator: ", ")
    }

    static func typeName(_ type: NSAttributeType) -> String {
        switch type {
        case .undefinedAttributeType: return "Undefined"
        case .integer16AttributeType: return "Integer 16"
        case .integer32AttributeType: return "Integer 32"
        case .integer64AttributeType: return "Integer 64"
        case .decimalAttributeType: return "Decimal"
        case .doubleAttributeType: return "Double"
        case .floatAttributeType: return "Float"
        case .stringAttributeType: return "String"
        case .booleanAttributeType: return "Boolean"
        case .dateAttributeType: return "Date"
        case .binaryDataAttributeType: return "Binary"
        case .UUIDAttributeType: return "UUID"
        case .URIAttributeType: return "URI"
        case .transformableAttributeType: return "Transformable"
        case .objectIDAttributeType: return "ObjectID"
        case .compositeAttributeType: return "Composite"
        }
    }

    static func deleteRuleName(_ rule: NSDeleteRule) -> String {
        switch rule {
        case .noActionDeleteRule: return "no action"
        case .nullifyDeleteRule: return "nullify"
        case .cascadeDeleteRule: return "cascade"
        case .denyDeleteRule: return "deny"
        }
    }
}

/// A model that cannot be read, reported by its message alone (the NSError's dump is for programs).
struct ModelToolError: Error, CustomStringConvertible {
    var message: String

    var description: String { message }
}
