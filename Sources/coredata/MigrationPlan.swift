import Foundation
import OpenCoreData

/// How `coredata migrate` takes a store from the model version it was made with to another: one step per mapping
/// model that applies, in turn, and an inferred (lightweight) step for what no mapping model covers.
struct MigrationPlan {
    struct Step {
        var sourceName: String
        var destinationName: String
        var source: NSManagedObjectModel
        var destination: NSManagedObjectModel
        var mapping: NSMappingModel
        /// The file of a mapping model; `nil` for an inferred one.
        var mappingFile: URL?
    }

    var sourceName: String
    var destinationName: String
    var steps: [Step]

    /// The plan for a store whose metadata is `metadata`, from the versions of its model bundle to `destinationName`,
    /// with the mapping models of `mappingFiles` where they apply.
    static func make(
        metadata: [String: Any], versions: [(name: String, model: NSManagedObjectModel)], destinationName: String,
        mappingFiles: [(url: URL, mapping: NSMappingModel)]
    ) throws -> MigrationPlan {
        guard
            let sourceIndex = versions.firstIndex(where: { version in
                version.model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata)
            })
        else {
            throw ToolFailure(
                message: "The store was not made with any version of the model (versions: "
                    + versions.map(\.name).joined(separator: ", ")
                    + "); give the model bundle that holds the version the store was made with",
                code: NSMigrationMissingSourceModelError)
        }
        guard let destinationIndex = versions.firstIndex(where: { $0.name == destinationName }) else {
            throw ToolFailure(
                message: "The model has no version named '\(destinationName)' (versions: "
                    + versions.map(\.name).joined(separator: ", ") + ")",
                code: NSMigrationMissingSourceModelError)
        }
        var plan = MigrationPlan(
            sourceName: versions[sourceIndex].name, destinationName: destinationName, steps: [])
        var position = sourceIndex
        var visited: Set<Int> = [sourceIndex]
        while position != destinationIndex {
            // A mapping model straight to the destination first, else one to the version nearest to it.
            var next: (index: Int, file: URL, mapping: NSMappingModel)?
            let targets = [destinationIndex] + versions.indices.reversed().filter { $0 != destinationIndex }
            search: for target in targets where !visited.contains(target) {
                for file in mappingFiles
                where file.mapping.prepareToMigrate(from: versions[position].model, to: versions[target].model) {
                    next = (target, file.url, file.mapping)
                    break search
                }
            }
            if let next {
                plan.steps.append(
                    Step(
                        sourceName: versions[position].name, destinationName: versions[next.index].name,
                        source: versions[position].model, destination: versions[next.index].model,
                        mapping: next.mapping, mappingFile: next.file))
                position = next.index
                visited.insert(position)
                continue
            }
            let source = versions[position]
            let destination = versions[destinationIndex]
            let inferred: NSMappingModel
            do {
                inferred = try NSMappingModel.inferredMappingModel(
                    forSourceModel: source.model, destinationModel: destination.model)
            } catch {
                throw ToolFailure(
                    message: "No mapping model migrates \(source.name) to \(destination.name), and none can be "
                        + "inferred: \((error as NSError).localizedDescription); give one with --mapping",
                    code: NSMigrationMissingMappingModelError)
            }
            plan.steps.append(
                Step(
                    sourceName: source.name, destinationName: destination.name, source: source.model,
                    destination: destination.model, mapping: inferred, mappingFile: nil))
            position = destinationIndex
        }
        return plan
    }

    // MARK: Printing

    /// The plan as text: each step, and in it each entity mapping with what it does, the rows of the store's
    /// entities when `rows` gives them.
    func render(rows: [String: Int]) -> String {
        var lines: [String] = []
        lines.append("Plan: \(sourceName) → \(destinationName), \(steps.count) step\(steps.count == 1 ? "" : "s")")
        for (number, step) in steps.enumerated() {
            let how =
                step.mappingFile.map { "mapped by \($0.lastPathComponent)" }
                ?? "inferred (lightweight migration)"
            lines.append("")
            lines.append("Step \(number + 1): \(step.sourceName) → \(step.destinationName), \(how)")
            for entityMapping in step.mapping.entityMappings {
                lines += Self.describe(entityMapping, step: step, rows: number == 0 ? rows : [:])
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func typeName(_ type: NSEntityMappingType) -> String {
        switch type {
        case .undefinedEntityMappingType: return "undefined"
        case .customEntityMappingType: return "custom"
        case .addEntityMappingType: return "add"
        case .removeEntityMappingType: return "remove"
        case .copyEntityMappingType: return "copy"
        case .transformEntityMappingType: return "transform"
        }
    }

    /// One entity mapping: its entities, type and policy, then the properties it does not simply copy — new ones,
    /// renamed or computed ones, and the source's properties that no value expression reads (dropped, unless a
    /// policy reads them in code).
    static func describe(_ mapping: NSEntityMapping, step: Step, rows: [String: Int]) -> [String] {
        var header = "  \(mapping.sourceEntityName ?? "(none)") → \(mapping.destinationEntityName ?? "(none)"): "
        header += typeName(mapping.mappingType)
        if let policy = mapping.entityMigrationPolicyClassName, !policy.isEmpty, policy != "NSEntityMigrationPolicy" {
            header += ", policy \(policy)"
            // The policy is the app's code, which this tool does not have.
            if !mapping.policyClassIsLoaded { header += " (not in this tool: the migration will fail)" }
        }
        if let name = mapping.sourceEntityName, let count = rows[name] {
            header += " (\(count) row\(count == 1 ? "" : "s"))"
        }
        var lines = [header]
        guard mapping.mappingType != .addEntityMappingType, mapping.mappingType != .removeEntityMappingType else {
            return lines
        }
        let propertyMappings = (mapping.attributeMappings ?? []) + (mapping.relationshipMappings ?? [])
        var read = Set<String>()
        for propertyMapping in propertyMappings {
            let name = propertyMapping.name ?? ""
            guard let expression = propertyMapping.valueExpression?.description else {
                lines.append("      + \(name): new, default value")
                continue
            }
            read.formUnion(sourceKeys(in: expression))
            // Copies of the property of the same name, values or related objects, go without saying.
            if expression == "$source.\(name)"
                || (expression.hasPrefix("FUNCTION($manager, \"destinationInstancesFor")
                    && expression.hasSuffix(", $source.\(name))"))
            {
                continue
            }
            lines.append("      ~ \(name) ← \(expression)")
        }
        if let sourceName = mapping.sourceEntityName, let entity = step.source.entitiesByName[sourceName] {
            let unread = entity.properties.filter { property in
                !property.isTransient && !(property is NSFetchedPropertyDescription) && !read.contains(property.name)
            }
            for property in unread.sorted(by: { $0.name < $1.name }) {
                lines.append("      - \(property.name): read by no value expression")
            }
        }
        return lines
    }

    private static func isKeyCharacter(_ character: Character) -> Bool {
        character.isLetter || character.isNumber || character == "_"
    }

    /// The keys of the source object an expression reads (`$source.name` → `name`).
    static func sourceKeys(in expression: String) -> Set<String> {
        var keys = Set<String>()
        var rest = Substring(expression)
        while let range = rest.range(of: "$source.") {
            rest = rest[range.upperBound...]
            let key = rest.prefix(while: isKeyCharacter)
            if !key.isEmpty { keys.insert(String(key)) }
        }
        return keys
    }
}
