import ArgumentParser
import Foundation
import OpenCoreData

/// The options of a fetch from a store, shared by `query` and `explain`.
struct FetchOptions: ParsableArguments {
    @Argument(help: "The SQLite store file.")
    var store: String

    @Option(
        help: "The model: an .xcdatamodeld, .xcdatamodel, .momd or .mom (the version the store was made with is used).")
    var model: String

    @Option(help: "The entity to fetch.")
    var entity: String

    @Option(help: "A predicate in NSPredicate's format, e.g. 'name BEGINSWITH[c] \"a\" AND age > 30'.")
    var predicate: String?

    @Option(
        name: .customLong("sort"),
        help: "A key to sort by, ascending, or key:desc for descending; repeat for ties (--sort name --sort age:desc).")
    var sortKeys: [String] = []

    @Option(help: "Fetch at most this many objects.")
    var limit: Int?

    func validate() throws {
        if let limit, limit < 0 { throw ValidationError("--limit must be 0 (no limit) or more") }
        for key in sortKeys where Self.sortDescriptor(key) == nil {
            throw ValidationError("--sort \(key): give a key, optionally followed by :asc or :desc")
        }
    }

    /// `key`, `key:asc` or `key:desc` as a sort descriptor.
    static func sortDescriptor(_ text: String) -> NSSortDescriptor? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard let key = parts.first, !key.isEmpty, parts.count <= 2 else { return nil }
        switch parts.count == 2 ? parts[1].lowercased() : "asc" {
        case "asc", "ascending": return NSSortDescriptor(key: key, ascending: true)
        case "desc", "descending": return NSSortDescriptor(key: key, ascending: false)
        default: return nil
        }
    }

    /// The fetch request the options describe, for `model`; a predicate that does not parse, or names a key the
    /// entity lacks, is reported as the user's mistake rather than stopping the tool.
    func request<Result>(in model: NSManagedObjectModel) throws -> NSFetchRequest<Result> {
        guard let description = model.entitiesByName[entity] else {
            let names = model.entitiesByName.keys.sorted().joined(separator: ", ")
            throw ValidationError("The model has no entity '\(entity)'; its entities are \(names)")
        }
        let request = NSFetchRequest<Result>(entityName: entity)
        request.entity = description
        if let predicate {
            do {
                request.predicate = try NSPredicate(validatingFormat: predicate)
            } catch {
                throw ValidationError("--predicate: \((error as NSError).localizedDescription)")
            }
        }
        let keys = Set(description.propertiesByName.keys)
        request.sortDescriptors = try sortKeys.compactMap(Self.sortDescriptor).map { descriptor in
            let first = descriptor.key?.split(separator: ".").first.map(String.init) ?? ""
            guard keys.contains(first) else {
                throw ValidationError("--sort: the entity \(entity) has no property '\(first)'")
            }
            return descriptor
        }
        if let limit { request.fetchLimit = limit }
        return request
    }
}

/// Opening a store read-only with the version of a model that it was made with.
enum StoreAccess {
    /// The version of the model at `modelPath` that the store's metadata matches, else the current version (the
    /// store then needs migrating, which adding it read-only reports).
    static func model(at modelPath: String, for metadata: [String: Any]) throws -> (
        name: String, model: NSManagedObjectModel
    ) {
        let url = URL(fileURLWithPath: modelPath)
        let versions = try NSManagedObjectModel.versionsOfModel(at: url)
        if let matching = versions.last(where: {
            $0.model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata)
        }) {
            return matching
        }
        let current = try NSManagedObjectModel.currentVersionNameOfModel(at: url)
        guard let version = versions.first(where: { $0.name == current }) ?? versions.last else {
            throw ToolFailure(message: "The model \(url.path) has no version", code: NSCoreDataError)
        }
        return version
    }

    /// A coordinator with the SQLite store at `storePath` added read-only, with the model version it was made with.
    static func open(_ storePath: String, modelPath: String) throws -> (
        coordinator: NSPersistentStoreCoordinator, store: NSPersistentStore
    ) {
        let url = URL(fileURLWithPath: storePath)
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        let model = try model(at: modelPath, for: metadata).model
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: url,
            options: [NSReadOnlyPersistentStoreOption: true])
        return (coordinator, store)
    }

    /// Runs `body`, turning Core Data's errors into the tool's failure message and code.
    static func reportingErrors<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as NSError where error.domain == NSCocoaErrorDomain {
            throw ToolFailure(message: error.localizedDescription, code: error.code)
        }
    }
}
