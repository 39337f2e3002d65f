extension NSManagedObjectModel {
    /// Loads the model at `url`: an Xcode model bundle (`.xcdatamodeld`, its current version), one version of it
    /// (`.xcdatamodel`), a compiled model folder (`.momd`, its current version) or a compiled model (`.mom`).
    ///
    /// Returns `nil` if the file is missing or is not a valid model, as Apple's framework does; to learn why, use
    /// ``init(validatingContentsOf:)``.
    ///
    /// ```swift
    /// let url = Bundle.module.url(forResource: "Company", withExtension: "xcdatamodeld")!
    /// let model = NSManagedObjectModel(contentsOf: url)
    /// ```
    public convenience init?(contentsOf url: URL) {
        self.init()
        do {
            try ModelFileLoader.load(url, into: self)
        } catch {
            return nil
        }
    }

    /// Loads the model at `url` like ``init(contentsOf:)``, but throws an `NSError` saying what is wrong.
    ///
    /// The error is in `NSCocoaErrorDomain`: `NSFileReadNoSuchFileError` (260) when nothing is at `url`,
    /// `NSCoreDataError` (134060) when the content is not a valid model — malformed XML, an unknown attribute
    /// type, a relationship whose destination or inverse does not exist, entities that inherit from each other in a
    /// cycle, a bundle without a current version. Its message names the file, the entity, the property and the
    /// line, which `userInfo` also holds (`NSFilePathErrorKey`, `"entity"`, `"property"`, `"line"`).
    ///
    /// ```swift
    /// do {
    ///     let model = try NSManagedObjectModel(validatingContentsOf: url)
    /// } catch {
    ///     print(error.localizedDescription)
    ///     // Cannot load the managed object model …/Model.xcdatamodel/contents:12: entity 'Employee',
    ///     // property 'company': the destination entity 'Firm' is not in the model
    /// }
    /// ```
    public convenience init(validatingContentsOf url: URL) throws {
        self.init()
        try ModelFileLoader.load(url, into: self)
    }

    /// Every version of the model at `url`, in version order (`Model`, `Model 2`, …), for migration: each version
    /// of an `.xcdatamodeld` or `.momd`, or the single model of an `.xcdatamodel` or `.mom`.
    ///
    /// ```swift
    /// for (name, model) in try NSManagedObjectModel.versionsOfModel(at: url) {
    ///     print(name, model.entities.count)
    /// }
    /// ```
    public static func versionsOfModel(at url: URL) throws -> [(name: String, model: NSManagedObjectModel)] {
        try ModelFileLoader.versions(of: url).versions
    }

    /// The name of the current version of the model at `url` (Xcode's `.xccurrentversion`, a `.momd`'s
    /// `VersionInfo.plist`), or the name of a single-version model; `nil` when a bundle of several versions does not
    /// say which is current.
    public static func currentVersionNameOfModel(at url: URL) throws -> String? {
        try ModelFileLoader.versions(of: url).current
    }

    /// The model made by merging the models of `bundles` (the main bundle if `nil`): the current version of
    /// every `.momd`, `.mom`, `.xcdatamodeld` and `.xcdatamodel` among their resources, SwiftPM resource bundles
    /// included. `nil` if two of them define an entity with the same name; an empty model if there is none.
    ///
    /// ```swift
    /// let model = NSManagedObjectModel.mergedModel(from: [Bundle.module])!
    /// ```
    public class func mergedModel(from bundles: [Bundle]?) -> NSManagedObjectModel? {
        var models: [NSManagedObjectModel] = []
        for url in ModelBundleLocator.modelURLs(in: bundles ?? [Bundle.main]) {
            guard let model = NSManagedObjectModel(contentsOf: url) else { continue }
            models.append(model)
        }
        if models.count == 1 { return models[0] }
        return NSManagedObjectModel(byMerging: models)
    }

    /// The model, made from the versions of the models in `bundles` (the main bundle if `nil`), that matches the
    /// store whose metadata is given: for each model, its version whose entities all have the hashes the store
    /// recorded, merged. `nil` if no combination matches.
    ///
    /// ```swift
    /// let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: storeURL)
    /// let sourceModel = NSManagedObjectModel.mergedModel(from: [Bundle.module], forStoreMetadata: metadata)
    /// ```
    public class func mergedModel(from bundles: [Bundle]?, forStoreMetadata metadata: [String: Any])
        -> NSManagedObjectModel?
    {
        guard let stored = metadata[NSStoreModelVersionHashesKey] as? [String: Any] else { return nil }
        var chosen: [NSManagedObjectModel] = []
        for url in ModelBundleLocator.modelURLs(in: bundles ?? [Bundle.main]) {
            guard let versions = try? versionsOfModel(at: url) else { continue }
            let matching = versions.map(\.model).first { model in
                !model._entities.isEmpty
                    && model.entityVersionHashesByName.allSatisfy { name, hash in
                        ModelVersionHasher.storedHash(stored[name]) == hash
                    }
            }
            if let matching { chosen.append(matching) }
        }
        guard !chosen.isEmpty else { return nil }
        let merged = chosen.count == 1 ? chosen[0] : NSManagedObjectModel(byMerging: chosen)
        guard let merged, merged.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) else {
            return nil
        }
        return merged
    }

    /// The Base64-encoded digest of the model's entity version hashes, the same for equal models; Core Data
    /// records it in store metadata (`NSStoreModelVersionChecksumKey`) and in a compiled model's
    /// `VersionInfo.plist`.
    public var versionChecksum: String {
        ModelVersionHasher.versionChecksum(of: entityVersionHashesByName)
    }
}
