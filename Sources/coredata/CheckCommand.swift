import ArgumentParser
import Foundation
import OpenCoreData

/// `coredata check <store> [--model <bundle>]`: whether a SQLite store's file is sound (`PRAGMA integrity_check`)
/// and, with a model, whether the model's current version opens it as it is — the version hashes the store records
/// against the model's. Exits with status 1 when anything is wrong, for scripts and CI.
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check a SQLite store's integrity and, with --model, that the model's current version opens it.",
        discussion: """
            Reads the store without writing to it. The exit status is 0 when the file is sound and (with --model) \
            the store matches the model's current version, 1 otherwise.

            Examples:
              coredata check Books.sqlite
              coredata check Books.sqlite --model Model.xcdatamodeld && echo ready
            """
    )

    @Argument(help: "The SQLite store file.")
    var store: String

    @Option(help: "The model to compare the store with: an .xcdatamodeld, .xcdatamodel, .momd or .mom.")
    var model: String?

    func run() throws {
        let problems = try StoreAccess.reportingErrors { try check() }
        if problems == 0 {
            print(Terminal.green("OK"))
        } else {
            print(Terminal.red("\(problems) \(problems == 1 ? "problem" : "problems") found"))
            throw ExitCode.failure
        }
    }

    /// Prints the report and returns the number of problems found.
    private func check() throws -> Int {
        let url = URL(fileURLWithPath: store)
        print("Store: \(url.path)")
        var problems = 0
        let integrity = try SQLiteStoreInspector.integrityProblems(of: url)
        if integrity.isEmpty {
            print("Integrity: ok")
        } else {
            print("Integrity: \(integrity.count) \(integrity.count == 1 ? "problem" : "problems")")
            for line in integrity.prefix(100) { print("  \(line)") }
            problems += integrity.count
        }
        guard let model else { return problems }
        let modelURL = URL(fileURLWithPath: model)
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        let versions = try NSManagedObjectModel.versionsOfModel(at: modelURL)
        let currentName = try NSManagedObjectModel.currentVersionNameOfModel(at: modelURL) ?? versions.last?.name
        guard let current = versions.first(where: { $0.name == currentName }) ?? versions.last else {
            throw ToolFailure(message: "The model \(modelURL.path) has no version", code: NSCoreDataError)
        }
        print("Model: \(modelURL.lastPathComponent), current version \(current.name)")
        let storeVersion = versions.last {
            $0.model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata)
        }
        if current.model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) {
            print("Compatibility: the current version opens the store")
            return problems
        }
        if let storeVersion {
            print(
                "Compatibility: the store was made with version \(storeVersion.name); it needs migrating to "
                    + "\(current.name) (coredata migrate)")
        } else {
            print("Compatibility: no version of the model matches the store")
        }
        let differences = Self.differences(store: metadata, model: current.model)
        for line in differences { print("  \(line)") }
        return problems + max(1, differences.count)
    }

    /// The entities whose version hashes differ between the store's metadata and `model`, one line each.
    static func differences(store metadata: [String: Any], model: NSManagedObjectModel) -> [String] {
        var stored: [String: Data] = [:]
        for (name, value) in metadata[NSStoreModelVersionHashesKey] as? [String: Any] ?? [:] {
            if let data = value as? Data { stored[name] = data }
        }
        let modelled = model.entityVersionHashesByName
        var lines: [String] = []
        for name in Set(stored.keys).union(modelled.keys).sorted() {
            switch (stored[name], modelled[name]) {
            case (let old?, let new?) where old != new:
                lines.append(
                    "\(name): version hash \(old.base64EncodedString()) in the store, "
                        + "\(new.base64EncodedString()) in the model")
            case (nil, _?):
                lines.append("\(name): in the model, not in the store")
            case (_?, nil):
                lines.append("\(name): in the store, not in the model")
            default:
                continue
            }
        }
        return lines
    }
}
