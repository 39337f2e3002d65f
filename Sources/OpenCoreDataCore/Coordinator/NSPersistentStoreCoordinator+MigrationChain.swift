// Migration through intermediate model versions: an OpenCoreData option beyond Apple's framework.
//
// Apple's automatic migration uses one mapping model, from the store's model version straight to the current one, or
// infers one; an app whose versions 1 → 2 → 3 each came with a mapping model must chain the steps itself (Apple's
// answer today is NSStagedMigrationManager, whose custom stages run lightweight migrations only). With
// `OpenCoreDataMigrateThroughModelVersionsOption`, the coordinator finds the chain in the program's bundles: the
// model versions there, and the mapping models between them. Each step migrates into a new file beside the store;
// only when every step succeeded does the last one replace the store, so a failure leaves the store as it was.

/// With `NSMigratePersistentStoresAutomaticallyOption`: when no mapping model in the program's bundles goes from the
/// store's model version straight to the coordinator's, migrate through the model versions in the bundles, one
/// mapping model at a time (shortest chain first). With `NSInferMappingModelAutomaticallyOption` too, the last step
/// may be inferred, from the furthest version the mapping models reach. Not part of Apple's framework: on Apple
/// platforms the option is ignored (use `NSStagedMigrationManager`, or migrate step by step with
/// `NSMigrationManager`).
///
/// ```swift
/// let options: [AnyHashable: Any] = [
///     NSMigratePersistentStoresAutomaticallyOption: true,
///     OpenCoreDataMigrateThroughModelVersionsOption: true,
/// ]
/// try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: options)
/// ```
public let OpenCoreDataMigrateThroughModelVersionsOption = "OpenCoreDataMigrateThroughModelVersionsOption"

extension NSPersistentStoreCoordinator {
    /// One step of a chain: a mapping model and the two model versions it maps.
    struct MigrationStep {
        let source: NSManagedObjectModel
        let destination: NSManagedObjectModel
        let mapping: NSMappingModel
    }

    /// The shortest chain of mapping models in `bundles` from `source` to `destination` through the model versions
    /// of `bundles`; with `inferringLastStep`, when no chain reaches `destination`, the chain to the furthest version
    /// from which a mapping model can be inferred to it (possibly none: then the only step is inferred). `nil` if
    /// there is no way.
    static func _migrationChain(
        from source: NSManagedObjectModel, to destination: NSManagedObjectModel, in bundles: [Bundle],
        inferringLastStep: Bool
    ) -> [MigrationStep]? {
        // The versions, each once (by checksum), the destination last so that a chain ends there.
        var versions: [NSManagedObjectModel] = []
        var checksums: Set<String> = [source.versionChecksum, destination.versionChecksum]
        for url in ModelBundleLocator.modelURLs(in: bundles) {
            for version in (try? NSManagedObjectModel.versionsOfModel(at: url)) ?? []
            where checksums.insert(version.model.versionChecksum).inserted {
                versions.append(version.model)
            }
        }
        versions = [source] + versions + [destination]
        let target = versions.count - 1

        // Breadth first from the source; each step is a mapping model of the bundles.
        var previous: [Int: (from: Int, mapping: NSMappingModel)] = [:]
        var reached = [0]
        var frontier = [0]
        while !frontier.isEmpty, previous[target] == nil {
            var next: [Int] = []
            for from in frontier {
                for to in versions.indices where to != 0 && previous[to] == nil {
                    guard
                        let mapping = NSMappingModel(
                            from: bundles, forSourceModel: versions[from], destinationModel: versions[to])
                    else { continue }
                    previous[to] = (from, mapping)
                    next.append(to)
                    reached.append(to)
                }
            }
            frontier = next
        }
        func steps(to end: Int) -> [MigrationStep] {
            var result: [MigrationStep] = []
            var current = end
            while let (from, mapping) = previous[current] {
                result.insert(
                    MigrationStep(source: versions[from], destination: versions[current], mapping: mapping), at: 0)
                current = from
            }
            return result
        }
        if previous[target] != nil { return steps(to: target) }
        guard inferringLastStep else { return nil }
        for end in reached.reversed() {
            guard
                let inferred = try? NSMappingModel.inferredMappingModel(
                    forSourceModel: versions[end], destinationModel: destination)
            else { continue }
            return steps(to: end) + [MigrationStep(source: versions[end], destination: destination, mapping: inferred)]
        }
        return nil
    }

    /// Runs `steps` on the store at `url`, each into a new file beside it; the last file then replaces the store.
    /// The intermediate files are removed whatever happens; on failure the store is as it was.
    static func _migrateThroughChain(
        _ storeClass: NSPersistentStore.Type, type: String, at url: URL, options: [AnyHashable: Any]?,
        steps: [MigrationStep]
    ) throws {
        var written: [URL] = []
        defer {
            for staging in written { _discardStaging(storeClass, at: staging) }
        }
        var stepOptions = options ?? [:]
        stepOptions[NSMigratePersistentStoresAutomaticallyOption] = false
        try _reportingMigrationErrors(at: url) {
            var current = url
            for (index, step) in steps.enumerated() {
                let next = _stagingURL(storeClass, for: url, step: index + 1)
                written.append(next)
                let manager = NSMigrationManager(sourceModel: step.source, destinationModel: step.destination)
                try manager.migrateStore(
                    from: current, sourceType: type, options: current == url ? options : stepOptions,
                    with: step.mapping, toDestinationURL: next, destinationType: type, destinationOptions: stepOptions)
                current = next
            }
            try storeClass._replaceStore(at: url, withMigratedStoreAt: current)
        }
    }
}
