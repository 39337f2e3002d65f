/// One stage of a staged migration (`NSStagedMigrationManager`): `NSLightweightMigrationStage` or
/// `NSCustomMigrationStage`.
open class NSMigrationStage: NSObject, @unchecked Sendable {
    // @unchecked: `label` is configured before the stage is handed to NSStagedMigrationManager, which only reads it.
    /// A name for the stage, for messages.
    open var label: String?

    public override init() {
        super.init()
    }
}
