import Foundation

// The entity numbers of an existing store are the store's: its `Z_PRIMARYKEY` table says which `Z_ENT` belongs to
// which entity, and its rows, its `Z<n>_<NAME>` entity columns and its join table names `Z_<n><NAME>` were written
// with those numbers. A new store numbers its entities depth first, siblings by name, as Apple's framework does
// today; a store written by an older Xcode, or one whose later model versions added entities, may be numbered
// otherwise. Recomputing the numbers from the model would read such a store's rows as the wrong entities.

extension SQLiteModelMapping {
    /// The numbers that `Z_PRIMARYKEY` of the store behind `connection` gives the entities that `configuration` of
    /// `model` stores, by entity name. Fails with `NSPersistentStoreIncompatibleVersionHashError` when the table
    /// numbers an entity the model lacks, lacks one the configuration stores, or gives an entity another superentity
    /// than the model does; with `NSFileReadCorruptFileError` when its numbers cannot be entity numbers. The
    /// errors carry the store's `metadata`, when given, as Apple's incompatibility errors do.
    static func storeNumbering(
        of connection: SQLiteConnection, model: NSManagedObjectModel, configuration: String?, url: URL,
        metadata: [String: Any]? = nil
    ) throws -> [String: Int64] {
        func failure(_ code: Int, _ reason: String) -> NSError {
            var info: [String: Any] = [NSURLErrorKey: url, "reason": reason]
            if let metadata { info["metadata"] = metadata }
            return coreDataError(
                code, "The store at \(url.path) cannot be opened with this model: \(reason)", userInfo: info)
        }
        let incompatible = NSPersistentStoreIncompatibleVersionHashError
        let corrupt = CocoaError.Code.fileReadCorruptFile.rawValue
        let rows = try SQLiteStoreMetadata.entityRows(connection).filter { $0.number < firstInternalEntityNumber }
        // Apple's lightweight migration renames an entity in place without renaming its Z_PRIMARYKEY row (the corpus
        // store SampleModel_V2 of CoreDataPlus has its old name), so a row may name an entity by its renaming
        // identifier.
        let byName = model.entitiesByName
        var byOldName: [String: String] = [:]
        for (name, entity) in byName {
            if let old = entity._renamingIdentifier, old != name, byName[old] == nil { byOldName[old] = name }
        }
        var numbers: [String: Int64] = [:]
        var superNumbers: [String: Int64] = [:]
        for row in rows {
            guard row.number >= 1 else {
                throw failure(corrupt, "Z_PRIMARYKEY gives entity '\(row.name)' the number \(row.number)")
            }
            guard let name = byName[row.name] != nil ? row.name : byOldName[row.name] else {
                throw failure(
                    incompatible, "the store has entity '\(row.name)' (Z_ENT \(row.number)), which the model lacks")
            }
            guard numbers.updateValue(row.number, forKey: name) == nil else {
                throw failure(corrupt, "Z_PRIMARYKEY numbers entity '\(name)' twice")
            }
            superNumbers[name] = row.superNumber
        }
        let members = model.entities(forConfigurationName: configuration) ?? model.entities
        let memberNames = Set(members.compactMap(\._name))
        for entity in members {
            let name = entity._name ?? ""
            guard let number = numbers[name] else {
                throw failure(incompatible, "the model has entity '\(name)', which the store lacks (in Z_PRIMARYKEY)")
            }
            let parent = entity._superentity?._name.flatMap { memberNames.contains($0) ? $0 : nil }
            let expected = parent.flatMap { numbers[$0] } ?? 0
            guard superNumbers[name] == expected else {
                let model = parent.map { "'\($0)'" } ?? "none"
                throw failure(
                    incompatible,
                    """
                    entity '\(name)' (Z_ENT \(number)) has superentity number \(superNumbers[name] ?? 0) in the \
                    store, and superentity \(model) in the model
                    """)
            }
        }
        return numbers.filter { memberNames.contains($0.key) }
    }
}
