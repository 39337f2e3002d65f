/// The option key of a staged migration: an `NSStagedMigrationManager` whose stages migrate the store when it is
/// added.
public let NSPersistentStoreStagedMigrationManagerOptionKey = "NSPersistentStoreStagedMigrationManagerOptionKey"

/// Migrates a store through a sequence of stages when it is added — lightweight stages between model versions
/// lightweight migration can infer, custom stages that run code before and after a migration — so that a store of
/// any earlier version reaches the current one step by step.
///
/// ```swift
/// let manager = NSStagedMigrationManager([
///     NSLightweightMigrationStage([v1, v2]),
///     NSCustomMigrationStage(migratingFrom: reference2, to: reference3),
/// ])
/// description.setOption(manager, forKey: NSPersistentStoreStagedMigrationManagerOptionKey)
/// ```
///
/// A stage applies when the store's model (known by the version checksum of the hashes its metadata records) is one
/// of the stage's versions other than its last; stages that do not apply are skipped. A failing stage stops the
/// migration with its error; the stages before it stay done, each having left the store whole.
open class NSStagedMigrationManager: NSObject, @unchecked Sendable {
    // @unchecked: `stages` is a constant; `_container` is set and cleared by the coordinator around the migration
    // that uses the manager, on that migration's thread.
    /// The stages, in order.
    public let stages: [NSMigrationStage]
    var _container: NSPersistentContainer?

    /// A manager running `stages` in order.
    public init(_ stages: [NSMigrationStage]) {
        self.stages = stages
        super.init()
    }

    /// During a custom stage's handler, a container with the store loaded at the handler's model version.
    open var container: NSPersistentContainer? { _container }
}
