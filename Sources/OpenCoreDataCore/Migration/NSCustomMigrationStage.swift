/// A stage from one model version to the next that runs code around the migration: `willMigrateHandler` with the
/// store still at `currentModel`, then lightweight migration to `nextModel`, then `didMigrateHandler` with the store
/// at `nextModel`. Each handler reaches the store through the manager's `container`.
///
/// ```swift
/// let stage = NSCustomMigrationStage(migratingFrom: version1, to: version2)
/// stage.didMigrateHandler = { manager, _ in
///     let context = manager.container!.newBackgroundContext()
///     try context.performAndWait { /* fill the new attribute */ try context.save() }
/// }
/// ```
open class NSCustomMigrationStage: NSMigrationStage, @unchecked Sendable {
    // @unchecked: as NSMigrationStage: the handlers are set before the stage is handed over, then only called.
    /// The model version the stage migrates from.
    public let currentModel: NSManagedObjectModelReference
    /// The model version the stage migrates to.
    public let nextModel: NSManagedObjectModelReference
    /// Runs before the migration, with the store at `currentModel`.
    open var willMigrateHandler: ((NSStagedMigrationManager, NSCustomMigrationStage) throws -> Void)?
    /// Runs after the migration, with the store at `nextModel`.
    open var didMigrateHandler: ((NSStagedMigrationManager, NSCustomMigrationStage) throws -> Void)?

    /// A stage from `currentModel` to `nextModel`.
    public init(migratingFrom currentModel: NSManagedObjectModelReference, to nextModel: NSManagedObjectModelReference)
    {
        self.currentModel = currentModel
        self.nextModel = nextModel
        super.init()
    }
}
