// What the `coredata` tool needs of a mapping model to choose among mapping model files itself, as
// `NSMappingModel(from:forSourceModel:destinationModel:)` chooses among a bundle's.

extension NSMappingModel {
    /// Whether the mapping model migrates data of `source` to `destination` — by the entity version hashes it
    /// records, or the version names Xcode's editor recorded — completing, when it does, the value expressions the
    /// editor left to be generated.
    package func prepareToMigrate(from source: NSManagedObjectModel, to destination: NSManagedObjectModel) -> Bool {
        guard _maps(source, to: destination) else { return false }
        XcodeMappingAutogeneration.complete(self, sourceModel: source, destinationModel: destination)
        return true
    }

    /// Made by `inferredMappingModel(forSourceModel:destinationModel:)`, which a SQLite store runs in place.
    package var isInferred: Bool { _isInferred }
}

extension NSEntityMapping {
    /// Whether the entity migration policy class the mapping names (if any) is loaded in this process; a migration
    /// that needs one that is not fails with `NSEntityMigrationPolicyError`.
    package var policyClassIsLoaded: Bool {
        guard let name = entityMigrationPolicyClassName, !name.isEmpty else { return true }
        return MigrationPolicyClassRegistry.policyClass(named: name) != nil
    }
}
