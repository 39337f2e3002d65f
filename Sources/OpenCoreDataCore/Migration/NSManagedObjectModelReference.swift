/// A model version named for staged migration: the model itself, or where to find it, with the version checksum
/// (`NSManagedObjectModel.versionChecksum`, also in a compiled model's `VersionInfo.plist`) it must have.
///
/// ```swift
/// let version2 = NSManagedObjectModelReference(
///     fileURL: bundleURL.appendingPathComponent("Model 2.xcdatamodel"), versionChecksum: "Ah3…=")
/// ```
open class NSManagedObjectModelReference: NSObject, @unchecked Sendable {
    // @unchecked: every stored property is a constant; the model it holds is immutable once in use.
    let _model: NSManagedObjectModel?
    /// Why the model could not be found, for the migration's error.
    let _problem: String?
    /// The version checksum the model must have.
    public let versionChecksum: String

    /// A reference to `model`, which must have `versionChecksum`.
    public init(model: NSManagedObjectModel, versionChecksum: String) {
        _model = model
        _problem = nil
        self.versionChecksum = versionChecksum
        super.init()
    }

    init(model: NSManagedObjectModel?, problem: String?, versionChecksum: String) {
        _model = model
        _problem = problem
        self.versionChecksum = versionChecksum
        super.init()
    }

    /// A reference to the model at `fileURL` (an `.xcdatamodel`, `.mom`, or a bundle's current version).
    public convenience init(fileURL: URL, versionChecksum: String) {
        do {
            self.init(
                model: try NSManagedObjectModel(validatingContentsOf: fileURL), problem: nil,
                versionChecksum: versionChecksum)
        } catch {
            self.init(model: nil, problem: (error as NSError).localizedDescription, versionChecksum: versionChecksum)
        }
    }

    /// A reference to the version with `versionChecksum` of the model named `modelName` in `bundle` (the main
    /// bundle when `nil`).
    public convenience init(name modelName: String, in bundle: Bundle?, versionChecksum: String) {
        let found = ModelBundleLocator.modelURL(named: modelName, in: [bundle ?? .main]).flatMap { url in
            (try? NSManagedObjectModel.versionsOfModel(at: url))?.first { $0.model.versionChecksum == versionChecksum }
        }
        self.init(
            model: found?.model, problem: found == nil ? "no version of model '\(modelName)' has that checksum" : nil,
            versionChecksum: versionChecksum)
    }

    /// A reference to the model version in `bundle` (the main bundle when `nil`) whose entities have
    /// `versionHash` (entity name → version hash, as store metadata records them).
    public convenience init(
        entityVersionHashes versionHash: [AnyHashable: Any], in bundle: Bundle?, versionChecksum: String
    ) {
        var hashes: [String: Any] = [:]
        for (key, value) in versionHash { if let key = key as? String { hashes[key] = value } }
        let model = NSManagedObjectModel.mergedModel(
            from: [bundle ?? .main], forStoreMetadata: [NSStoreModelVersionHashesKey: hashes])
        self.init(
            model: model, problem: model == nil ? "no model in the bundle has those entity version hashes" : nil,
            versionChecksum: versionChecksum)
    }

    /// The model referred to. Stops the program if it cannot be found or has another checksum, as Apple's framework
    /// raises; a staged migration reports the same as an error before using it.
    open var resolvedModel: NSManagedObjectModel {
        do {
            return try _resolve()
        } catch {
            preconditionFailure((error as NSError).localizedDescription)
        }
    }

    func _resolve() throws -> NSManagedObjectModel {
        guard let model = _model else {
            throw coreDataError(
                NSMigrationMissingSourceModelError,
                "The model reference with checksum \(versionChecksum) names no model: \(_problem ?? "not found")")
        }
        guard model.versionChecksum == versionChecksum else {
            throw coreDataError(
                NSMigrationError,
                "The model reference says checksum \(versionChecksum), but its model's checksum is "
                    + "\(model.versionChecksum); update the reference to the model version it names")
        }
        return model
    }
}
