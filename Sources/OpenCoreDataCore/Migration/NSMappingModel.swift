/// How to migrate the data of one model version to another: one entity mapping per pair of source and destination
/// entities.
///
/// A mapping model is built in code, loaded from a file (`init(contentsOf:)`: Xcode's `.xcmappingmodel` or the
/// compiled `.cdm`), found among a program's resources for a pair of models (`init(from:forSourceModel:
/// destinationModel:)`), or inferred from the differences between two models
/// (`inferredMappingModel(forSourceModel:destinationModel:)`).
///
/// ```swift
/// let mapping = NSMappingModel(from: [Bundle.module], forSourceModel: version1, destinationModel: version2)
///     ?? (try NSMappingModel.inferredMappingModel(forSourceModel: version1, destinationModel: version2))
/// ```
open class NSMappingModel: NSObject, @unchecked Sendable {
    // @unchecked: a mapping model is configured (or loaded) on one thread and then only read by the migration that uses
    // it, as a managed object model is.
    /// Equal to a mapping that describes the same (see `NSMappingModel+Equality.swift`).
    open override func isEqual(_ object: Any?) -> Bool { _describesSameMapping(as: object) }
    open override var hash: Int { _mappingHash }

    var _entityMappings: [NSEntityMapping] = []
    /// Made by `inferredMappingModel(forSourceModel:destinationModel:)`: a store that can migrate in place (SQLite)
    /// does so for such a mapping.
    var _isInferred = false
    /// Where the mapping model was loaded from, for messages.
    var _sourceURL: URL?
    /// For a mapping model from Xcode's editor: the names of the model versions it was made between (the last
    /// component of the paths it records, without extension), used to match it when its entity mappings carry no
    /// version hashes.
    var _sourceModelVersionName: String?
    var _destinationModelVersionName: String?

    /// An empty mapping model, to be filled in code.
    public override init() {
        super.init()
    }

    /// The mapping model at `url`: a compiled `.cdm` file or an Xcode `.xcmappingmodel` folder. `nil` if the file
    /// is missing or is not a mapping model; `init(validatingContentsOf:)` says why.
    public convenience init?(contentsOf url: URL?) {
        guard let url, let loaded = try? MappingModelFileLoader.load(url) else { return nil }
        self.init()
        _adopt(loaded)
    }

    /// The mapping model at `url`, like `init(contentsOf:)`, but throwing an `NSError` that says what is wrong: the
    /// file-system code when nothing readable is there, `NSCoreDataError` (134060) when the content is not a valid
    /// mapping model.
    public convenience init(validatingContentsOf url: URL) throws {
        let loaded = try MappingModelFileLoader.load(url)
        self.init()
        _adopt(loaded)
    }

    /// The mapping model among the resources of `bundles` (the main bundle and the other loaded bundles when `nil`)
    /// that maps `sourceModel` to `destinationModel`; `nil` if there is none. Both compiled mapping models (`.cdm`)
    /// and Xcode's `.xcmappingmodel` folders are searched.
    public convenience init?(
        from bundles: [Bundle]?, forSourceModel sourceModel: NSManagedObjectModel?,
        destinationModel: NSManagedObjectModel?
    ) {
        guard let sourceModel, let destinationModel,
            let found = MappingModelFileLoader.mappingModel(
                in: bundles ?? ModelBundleLocator.candidateBundles(), from: sourceModel, to: destinationModel)
        else { return nil }
        self.init()
        _adopt(found)
    }

    private func _adopt(_ other: NSMappingModel) {
        _entityMappings = other._entityMappings
        _isInferred = other._isInferred
        _sourceURL = other._sourceURL
        _sourceModelVersionName = other._sourceModelVersionName
        _destinationModelVersionName = other._destinationModelVersionName
    }

    /// The entity mappings, in the order the migration runs them.
    open var entityMappings: [NSEntityMapping]! {
        get { _entityMappings }
        set { _entityMappings = newValue ?? [] }
    }

    /// The entity mappings by name.
    open var entityMappingsByName: [String: NSEntityMapping] {
        var byName: [String: NSEntityMapping] = [:]
        for mapping in _entityMappings where byName[mapping.name] == nil { byName[mapping.name] = mapping }
        return byName
    }

    /// Whether the mapping model migrates data of `source` to `destination`: each entity mapping names entities of
    /// those models, with their version hashes where it records them. A mapping model from Xcode's editor whose
    /// hashes are unknown must have been made between versions of the same names.
    func _maps(_ source: NSManagedObjectModel, to destination: NSManagedObjectModel) -> Bool {
        guard !_entityMappings.isEmpty else { return false }
        var hashesChecked = false
        for mapping in _entityMappings {
            if let name = mapping.sourceEntityName {
                guard let entity = source.entitiesByName[name] else { return false }
                if let hash = mapping.sourceEntityVersionHash {
                    guard hash == entity.versionHash else { return false }
                    hashesChecked = true
                }
            }
            if let name = mapping.destinationEntityName {
                guard let entity = destination.entitiesByName[name] else { return false }
                if let hash = mapping.destinationEntityVersionHash {
                    guard hash == entity.versionHash else { return false }
                    hashesChecked = true
                }
            }
        }
        if hashesChecked { return true }
        guard let sourceName = _sourceModelVersionName, let destinationName = _destinationModelVersionName else {
            return false
        }
        return source._versionName == sourceName && destination._versionName == destinationName
    }

    open override var description: String {
        "(<NSMappingModel: \(Unmanaged.passUnretained(self).toOpaque())>) entityMappings {"
            + _entityMappings.map { $0.name ?? "" }.joined(separator: ", ") + "}"
    }
}
