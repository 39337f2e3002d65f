/// One stage of a staged migration (`NSStagedMigrationManager`): `NSLightweightMigrationStage` or
/// `NSCustomMigrationStage`.
open class NSMigrationStage: NSObject, @unchecked Sendable {
    /// A name for the stage, for messages.
    open var label: String?

    public override init() {
        super.init()
    }
}
