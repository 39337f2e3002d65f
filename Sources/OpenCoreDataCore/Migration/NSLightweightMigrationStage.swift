/// A stage of model versions, in order, that lightweight migration moves between: a store of any of them migrates
/// to the last one with an inferred mapping model.
///
/// ```swift
/// let stage = NSLightweightMigrationStage([version1Checksum, version2Checksum, version3Checksum])
/// stage.label = "V1 to V3"
/// ```
///
/// The models are found by checksum among the models the migration knows: the custom stages' model references,
/// the coordinator's model, the model the store keeps, and the models of the program's bundles.
open class NSLightweightMigrationStage: NSMigrationStage, @unchecked Sendable {
    // @unchecked: as NSMigrationStage; `versionChecksums` is a constant.
    /// The version checksums of the stage's models, oldest first.
    public let versionChecksums: [String]

    /// A stage through the model versions with `versionChecksums`, oldest first.
    public init(_ versionChecksums: [String]) {
        self.versionChecksums = versionChecksums
        super.init()
    }
}
