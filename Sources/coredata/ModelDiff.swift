import Foundation
import OpenCoreData

/// What changed between two model versions, for `coredata model --diff`: entities and properties added, removed,
/// renamed (through renaming identifiers) and changed, with the version hashes that decide whether a store of one
/// opens with the other, and whether lightweight migration can be inferred between them.
enum ModelDiff {
    static func render(
        from old: NSManagedObjectModel, named oldName: String, to new: NSManagedObjectModel, named newName: String
    ) -> String {
        var lines = ["Model \(oldName) → \(newName)"]
        let oldEntities = old.entitiesByName
        let newEntities = new.entitiesByName
        // An entity of the new version renamed from one of the old: its renaming identifier names an old entity
        // that the new version no longer has.
        var renamedFrom: [String: String] = [:]
        for (name, entity) in newEntities where oldEntities[name] == nil {
            if let previous = entity.renamingIdentifier, previous != name, oldEntities[previous] != nil,
                newEntities[previous] == nil
            {
                renamedFrom[name] = previous
            }
        }
        let renamedOld = Set(renamedFrom.values)
        let added = newEntities.keys.filter { oldEntities[$0] == nil && renamedFrom[$0] == nil }.sorted()
        let removed = oldEntities.keys.filter { newEntities[$0] == nil && !renamedOld.contains($0) }.sorted()
        var unchanged: [String] = []
        var changes: [String] = []
        for name in newEntities.keys.sorted() {
            guard let entity = newEntities[name], let previous = oldEntities[renamedFrom[name] ?? name] else {
                continue
            }
            let details = entityChanges(from: previous, to: entity)
            if details.isEmpty && renamedFrom[name] == nil {
                unchanged.append(name)
                continue
            }
            var header = "~ entity \(name)"
            if let oldName = renamedFrom[name] { header += " (renamed from \(oldName))" }
            header += hashChange(previous.versionHash, entity.versionHash)
            changes.append(header)
            changes += details.map { "    " + $0 }
        }
        if added.isEmpty && removed.isEmpty && changes.isEmpty {
            lines.append("No differences: the versions have the same entities, properties and version hashes.")
            return lines.joined(separator: "\n") + "\n"
        }
        lines.append("")
        for name in added {
            lines.append("+ entity \(name)  hash \(newEntities[name]?.versionHash.base64EncodedString() ?? "")")
            for property in (newEntities[name]?.properties ?? []).filter({ $0.entity.name == name })
                .sorted(by: { $0.name < $1.name })
            {
                lines.append("    + \(kind(property)) \(property.name): \(ModelCommand.describe(property))")
            }
        }
        for name in removed {
            lines.append("- entity \(name)  hash \(oldEntities[name]?.versionHash.base64EncodedString() ?? "")")
        }
        lines += changes
        if !unchanged.isEmpty {
            lines.append("= unchanged: \(unchanged.joined(separator: ", "))")
        }
        lines.append("")
        let compatible =
            old.entityVersionHashesByName == new.entityVersionHashesByName
            ? "yes, the version hashes are the same" : "no, the version hashes differ (a store needs migrating)"
        lines.append("A store of \(oldName) opens with \(newName): \(compatible)")
        do {
            _ = try NSMappingModel.inferredMappingModel(forSourceModel: old, destinationModel: new)
            lines.append("Lightweight migration: can be inferred")
        } catch {
            lines.append("Lightweight migration: cannot be inferred: \((error as NSError).localizedDescription)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func hashChange(_ old: Data, _ new: Data) -> String {
        old == new
            ? "  hash unchanged \(new.base64EncodedString())"
            : "  hash \(old.base64EncodedString()) → \(new.base64EncodedString())"
    }

    private static func kind(_ property: NSPropertyDescription) -> String {
        switch property {
        case is NSRelationshipDescription: return "relationship"
        case is NSFetchedPropertyDescription: return "fetched property"
        default: return "attribute"
        }
    }

    /// The entity's own traits, as `coredata model` prints them.
    private static func traits(_ entity: NSEntityDescription) -> String {
        var words: [String] = []
        if entity.managedObjectClassName != "NSManagedObject" {
            words.append("class \(entity.managedObjectClassName ?? "")")
        }
        if let parent = entity.superentity?.name { words.append("parent \(parent)") }
        if entity.isAbstract { words.append("abstract") }
        if let modifier = entity.versionHashModifier, !modifier.isEmpty { words.append("hash modifier \(modifier)") }
        return words.isEmpty ? "(plain)" : words.joined(separator: ", ")
    }

    /// The differences between two versions of one entity: its own traits, then its properties (those it declares).
    private static func entityChanges(from old: NSEntityDescription, to new: NSEntityDescription) -> [String] {
        var lines: [String] = []
        if traits(old) != traits(new) { lines.append("~ entity: \(traits(old)) → \(traits(new))") }
        let oldProperties = Dictionary(
            old.properties.filter { $0.entity === old }.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let newProperties = Dictionary(
            new.properties.filter { $0.entity === new }.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var renamedFrom: [String: String] = [:]
        for (name, property) in newProperties where oldProperties[name] == nil {
            if let previous = property.renamingIdentifier, previous != name, oldProperties[previous] != nil,
                newProperties[previous] == nil
            {
                renamedFrom[name] = previous
            }
        }
        let renamedOld = Set(renamedFrom.values)
        for name in newProperties.keys.sorted() {
            guard let property = newProperties[name] else { continue }
            let hash = property.versionHash.base64EncodedString()
            guard let previous = oldProperties[renamedFrom[name] ?? name] else {
                lines.append("+ \(kind(property)) \(name): \(ModelCommand.describe(property))  hash \(hash)")
                continue
            }
            let before = ModelCommand.describe(previous)
            var after = ModelCommand.describe(property)
            if let oldName = renamedFrom[name] {
                after = after.replacingOccurrences(of: ", renamed from \(oldName)", with: "")
                var line = "~ \(kind(property)) \(name): renamed from \(oldName)"
                if before != after { line += "; \(before) → \(after)" }
                lines.append(line + hashChange(previous.versionHash, property.versionHash))
            } else if before != after || previous.versionHash != property.versionHash {
                lines.append(
                    "~ \(kind(property)) \(name): \(before) → \(after)"
                        + hashChange(previous.versionHash, property.versionHash))
            }
        }
        for name in oldProperties.keys.sorted() where newProperties[name] == nil && !renamedOld.contains(name) {
            guard let property = oldProperties[name] else { continue }
            lines.append(
                "- \(kind(property)) \(name): \(ModelCommand.describe(property))  hash "
                    + property.versionHash.base64EncodedString())
        }
        return lines
    }
}
