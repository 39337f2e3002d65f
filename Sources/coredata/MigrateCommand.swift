import ArgumentParser
import Foundation
import OpenCoreData

/// `coredata migrate <store> --model <bundle>`: takes a SQLite store to another version of its model — the current
/// one unless `--to` names another — with the mapping models given (or found beside the model), inferring what they
/// do not cover, as Core Data's automatic migration does.
///
/// ```
/// $ coredata migrate Books.sqlite --model Model.xcdatamodeld --dry-run
/// $ coredata migrate Books.sqlite --model Model.xcdatamodeld --mapping Model1_to_Model2.xcmappingmodel
/// ```
struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Migrate a SQLite store to another version of its model (or print the plan with --dry-run).",
        discussion: """
            The store's version hashes say which version of the model it was made with. Each step of the plan is a \
            mapping model (.cdm or .xcmappingmodel) that applies, or, for what none covers, a mapping inferred as \
            lightweight migration infers it. Without --mapping, the mapping models in the model's folder are used. \
            Every step writes a new file beside the store; the store is replaced only once all have succeeded, so \
            a failure leaves it as it was.
            """
    )

    @Argument(help: "The SQLite store file.")
    var store: String

    @Option(help: "The model: an .xcdatamodeld or .momd bundle holding the store's version and the destination's.")
    var model: String

    @Option(
        name: .customLong("mapping"), parsing: .upToNextOption,
        help: "Mapping models to use (.cdm files or .xcmappingmodel folders); by default those beside the model.")
    var mappings: [String] = []

    @Option(name: .customLong("to"), help: "The version to migrate to (the model's current version by default).")
    var destinationVersion: String?

    @Flag(help: "Print the plan — each step, inferred or mapped, and what happens to each entity — and stop.")
    var dryRun = false

    func run() throws {
        do {
            try migrate()
        } catch let failure as ToolFailure {
            throw failure
        } catch let error as NSError where error.domain == NSCocoaErrorDomain {
            throw ToolFailure(message: error.localizedDescription, code: error.code)
        }
    }

    private func migrate() throws {
        let storeURL = URL(fileURLWithPath: store)
        let modelURL = URL(fileURLWithPath: model)
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            ofType: NSSQLiteStoreType, at: storeURL)
        let versions = try NSManagedObjectModel.versionsOfModel(at: modelURL)
        guard
            let destinationName = try destinationVersion ?? NSManagedObjectModel.currentVersionNameOfModel(at: modelURL)
                ?? versions.last?.name
        else {
            throw ToolFailure(
                message: "The model \(modelURL.path) has no version", code: NSMigrationMissingSourceModelError)
        }
        let plan = try MigrationPlan.make(
            metadata: metadata, versions: versions, destinationName: destinationName,
            mappingFiles: try mappingFiles(beside: modelURL))
        print("Store: \(storeURL.path)")
        print("Model: \(modelURL.lastPathComponent), the store's version \(plan.sourceName)")
        guard !plan.steps.isEmpty else {
            print("The store is at version \(plan.destinationName) already: nothing to migrate.")
            return
        }
        var rows: [String: Int] = [:]
        for entity in (try? SQLiteStoreInspector.summary(of: storeURL))?.entities ?? [] {
            if let count = entity.rows { rows[entity.name] = count }
        }
        print(plan.render(rows: rows), terminator: "")
        guard !dryRun else {
            print("\nDry run: the store was not changed.")
            return
        }
        // A policy is the app's code: without it, the step that needs it would fail half-way through the plan.
        for step in plan.steps {
            for entityMapping in step.mapping.entityMappings where !entityMapping.policyClassIsLoaded {
                throw ToolFailure(
                    message: "The entity mapping '\(entityMapping.name ?? "")' of "
                        + "\(step.mappingFile?.lastPathComponent ?? "the mapping model") needs the migration policy "
                        + "class \(entityMapping.entityMigrationPolicyClassName ?? ""), which is the app's code and "
                        + "not in this tool; migrate the store from the app (NSMigrationManager), or give a mapping "
                        + "model without it. The store was not changed",
                    code: NSEntityMigrationPolicyError)
            }
        }
        print("")
        let started = Date()
        try Self.run(plan, on: storeURL)
        let seconds = String(format: "%.2f", Date().timeIntervalSince(started))
        print("Migrated \(storeURL.lastPathComponent) to \(plan.destinationName) in \(seconds) s.")
    }

    /// The mapping models given, or those in the model's folder; each read now, so that a file that does not read is
    /// reported before anything runs.
    private func mappingFiles(beside modelURL: URL) throws -> [(url: URL, mapping: NSMappingModel)] {
        var urls = mappings.map { URL(fileURLWithPath: $0) }
        if urls.isEmpty {
            let folder = modelURL.standardizedFileURL.deletingLastPathComponent()
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            urls = names.sorted().filter { ["cdm", "xcmappingmodel"].contains(($0 as NSString).pathExtension) }.map {
                folder.appendingPathComponent($0)
            }
        }
        return try urls.map { url in (url, try NSMappingModel(validatingContentsOf: url)) }
    }

    // MARK: Running

    /// Runs every step into a new file beside the store, then puts the last over the store.
    static func run(_ plan: MigrationPlan, on storeURL: URL) throws {
        let folder = storeURL.deletingLastPathComponent()
        let base = ".\(storeURL.lastPathComponent).migrating-\(UUID().uuidString)"
        var made: [URL] = []
        let coordinator = NSPersistentStoreCoordinator(
            managedObjectModel: plan.steps.last?.destination ?? NSManagedObjectModel())
        // The steps' files are this command's own, which nothing else has open: removed, not just emptied as
        // destroyPersistentStore empties a store that others may use.
        defer {
            for url in made {
                for suffix in ["", "-wal", "-shm", "-journal"] {
                    try? FileManager.default.removeItem(atPath: url.path + suffix)
                }
            }
        }
        var current = storeURL
        for (number, step) in plan.steps.enumerated() {
            let next = folder.appendingPathComponent("\(base)-\(number + 1).sqlite")
            made.append(next)
            let how = step.mappingFile == nil ? "inferred" : "mapped"
            let title = "Step \(number + 1)/\(plan.steps.count), \(step.sourceName) → \(step.destinationName) (\(how))"
            let manager = NSMigrationManager(sourceModel: step.source, destinationModel: step.destination)
            try ProgressBar.run(title, progress: { manager.migrationProgress }) {
                try manager.migrateStore(
                    from: current, sourceType: NSSQLiteStoreType, with: step.mapping, toDestinationURL: next,
                    destinationType: NSSQLiteStoreType)
            }
            current = next
        }
        try coordinator.replacePersistentStore(
            at: storeURL, withPersistentStoreFrom: current, ofType: NSSQLiteStoreType)
    }
}

/// A progress bar for work that runs on the calling thread while another draws it: redrawn in place on a terminal,
/// a line per tenth otherwise (a log, a pipe).
enum ProgressBar {
    /// How the work ended, handed to the drawing thread.
    private final class Outcome: @unchecked Sendable {
        // @unchecked: `value` is touched under `lock` only.
        private let lock = NSLock()
        private var value: Bool?

        var succeeded: Bool? {
            get { lock.withLock { value } }
            set { lock.withLock { value = newValue } }
        }
    }

    static func run(_ title: String, progress: @escaping @Sendable () -> Float, _ work: () throws -> Void) throws {
        let interactive = isatty(STDOUT_FILENO) != 0
        let outcome = Outcome()
        let finished = DispatchSemaphore(value: 0)
        let drawn = DispatchSemaphore(value: 0)
        let drawer = Thread {
            var shown = -1
            while true {
                let ended = finished.wait(timeout: .now() + .milliseconds(100)) == .success
                let succeeded = outcome.succeeded
                let fraction = ended && succeeded == true ? 1 : Double(progress())
                let percent = Int((fraction * 100).rounded(.down))
                var text = line(title, fraction)
                if ended && succeeded != true { text += " failed" }
                if interactive {
                    print("\r" + text, terminator: ended ? "\n" : "")
                } else if percent / 10 > shown / 10 || (ended && (percent != shown || succeeded != true)) {
                    print(text)
                }
                fflush(nil)
                shown = max(shown, percent)
                if ended { break }
            }
            drawn.signal()
        }
        drawer.start()
        do {
            try work()
            outcome.succeeded = true
        } catch {
            outcome.succeeded = false
            finished.signal()
            drawn.wait()
            throw error
        }
        finished.signal()
        drawn.wait()
    }

    static func line(_ title: String, _ fraction: Double) -> String {
        let width = 30
        let filled = max(0, min(width, Int((fraction * Double(width)).rounded(.down))))
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        return "\(title) [\(bar)] \(Int((fraction * 100).rounded(.down)))%"
    }
}
