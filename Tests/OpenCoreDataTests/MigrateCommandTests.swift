// Tests of the coredata tool: they do not build against Apple's Core Data.
#if !canImport(CoreData)

import Foundation
import OpenCoreData
import Testing

/// `coredata migrate <store> --model <bundle> [--mapping …] [--dry-run]`: the plan — a step per mapping model that
/// applies, an inferred step for the rest, what happens to each entity — and the migration, which replaces the store
/// only once every step has succeeded.
@Suite struct MigrateCommandTests {
    /// A copy of the test target's Inventory model bundle (versions `Inventory` and `Inventory 2`) alone in a folder,
    /// so that no mapping model lies beside it.
    static func inventoryBundle(in directory: SQLiteTestDirectory) throws -> URL {
        let source = try #require(Bundle.module.url(forResource: "Inventory", withExtension: "xcdatamodeld"))
        let folder = directory.url.appendingPathComponent("Model", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let copy = folder.appendingPathComponent("Inventory.xcdatamodeld")
        try FileManager.default.copyItem(at: source, to: copy)
        return copy
    }

    /// A store of version `Inventory` holding items of these names and quantities.
    static func inventoryStore(_ items: [(String, Int)], bundle: URL, in directory: SQLiteTestDirectory) throws -> URL {
        let model = try NSManagedObjectModel.versionsOfModel(at: bundle)[0].model
        let url = directory.store("Inventory.sqlite")
        let coordinator = try SQLiteStack.coordinator(model, at: url)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            for (name, quantity) in items {
                let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
                item.setValue(name, forKey: "name")
                item.setValue(quantity, forKey: "quantity")
            }
            try context.save()
        }
        for store in coordinator.persistentStores { try coordinator.remove(store) }
        return url
    }

    /// The items of the store at `url`, read with version `Inventory 2` without migration options (so that the
    /// store must be at that version), as "name quantity sku".
    static func items(at url: URL, bundle: URL) throws -> [String] {
        let model = try NSManagedObjectModel.versionsOfModel(at: bundle)[1].model
        let context = SQLiteStack.context(try SQLiteStack.coordinator(model, at: url))
        return try context.performAndWait {
            try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item")).map { item in
                ["name", "quantity", "sku"].map { "\(item.value(forKey: $0) ?? "-")" }.joined(separator: " ")
            }.sorted()
        }
    }

    /// The files of the directory that are not the store's own, such as a step's file left behind.
    static func strayFiles(in directory: SQLiteTestDirectory) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter {
            !$0.hasPrefix("Inventory.sqlite") && $0 != "Model" && $0 != "Mappings"
        }
    }

    static func rows(of entity: String, at url: URL) throws -> Int {
        try SQLiteStoreInspector.summary(of: url).entities.first { $0.name == entity }?.rows ?? -1
    }

    @Test func aDryRunPrintsTheInferredPlanAndLeavesTheStoreAlone() throws {
        let directory = SQLiteTestDirectory()
        let bundle = try Self.inventoryBundle(in: directory)
        let store = try Self.inventoryStore([("BOX-1", 3), ("CUP-22", 7)], bundle: bundle, in: directory)
        let before = MigrationCorpus.contents(of: store)
        let (status, output) = try CoreDataTool.run(["migrate", store.path, "--model", bundle.path, "--dry-run"])
        #expect(status == 0, "\(output)")
        let lines = output.split(separator: "\n").map(String.init)
        #expect(lines.contains("Model: Inventory.xcdatamodeld, the store's version Inventory"))
        #expect(lines.contains("Plan: Inventory → Inventory 2, 1 step"))
        #expect(lines.contains("Step 1: Inventory → Inventory 2, inferred (lightweight migration)"))
        #expect(lines.contains("  Item → Item: transform (2 rows)"))
        #expect(lines.contains("      + price: new, default value"))
        #expect(lines.contains("      + sku: new, default value"))
        #expect(lines.contains("  (none) → Warehouse: add"))
        #expect(lines.contains("Dry run: the store was not changed."))
        #expect(MigrationCorpus.contents(of: store) == before)
    }

    @Test func aStoreMigratesByInferenceWithAProgressBar() throws {
        let directory = SQLiteTestDirectory()
        let bundle = try Self.inventoryBundle(in: directory)
        let store = try Self.inventoryStore([("BOX-1", 3), ("CUP-22", 7)], bundle: bundle, in: directory)
        let (status, output) = try CoreDataTool.run(["migrate", store.path, "--model", bundle.path])
        #expect(status == 0, "\(output)")
        #expect(output.contains("Step 1/1, Inventory → Inventory 2 (inferred) [##############################] 100%"))
        #expect(output.contains("Migrated Inventory.sqlite to Inventory 2 in "))
        #expect(try Self.items(at: store, bundle: bundle) == ["BOX-1 3 -", "CUP-22 7 -"])
        #expect(try Self.strayFiles(in: directory) == [])
        // Migrated, it needs nothing more.
        let (again, text) = try CoreDataTool.run(["migrate", store.path, "--model", bundle.path])
        #expect(again == 0)
        #expect(text.contains("The store is at version Inventory 2 already: nothing to migrate."))
    }

    /// The test target's mapping model, compiled by the build plugin, maps `sku` from `name`.
    @Test func aMappingModelGivenIsAStepOfThePlan() throws {
        let directory = SQLiteTestDirectory()
        let bundle = try Self.inventoryBundle(in: directory)
        let store = try Self.inventoryStore([("BOX-1", 3), ("CUP-22", 7)], bundle: bundle, in: directory)
        let mapping = try #require(Bundle.module.url(forResource: "Inventory1to2", withExtension: "cdm"))
        let (planned, plan) = try CoreDataTool.run([
            "migrate", store.path, "--model", bundle.path, "--mapping", mapping.path, "--dry-run",
        ])
        #expect(planned == 0, "\(plan)")
        let lines = plan.split(separator: "\n").map(String.init)
        #expect(lines.contains("Step 1: Inventory → Inventory 2, mapped by Inventory1to2.cdm"))
        #expect(lines.contains("  Item → Item: copy (2 rows)"))
        #expect(lines.contains("      ~ sku ← $source.name"))
        #expect(lines.contains("      + price: new, default value"))

        let (status, output) = try CoreDataTool.run([
            "migrate", store.path, "--model", bundle.path, "--mapping", mapping.path,
        ])
        #expect(status == 0, "\(output)")
        #expect(output.contains("(mapped) [##############################] 100%"))
        #expect(try Self.items(at: store, bundle: bundle) == ["BOX-1 3 BOX-1", "CUP-22 7 CUP-22"])
        #expect(try Self.strayFiles(in: directory) == [])
    }

    /// Without `--mapping`, the mapping models beside the model are used: the test bundle's resources hold the model
    /// bundle with its mapping model, copied and compiled.
    @Test func mappingModelsBesideTheModelAreFound() throws {
        let directory = SQLiteTestDirectory()
        let bundle = try #require(Bundle.module.url(forResource: "Inventory", withExtension: "xcdatamodeld"))
        let store = try Self.inventoryStore([("BOX-1", 3)], bundle: bundle, in: directory)
        let (status, output) = try CoreDataTool.run(["migrate", store.path, "--model", bundle.path, "--dry-run"])
        #expect(status == 0, "\(output)")
        #expect(output.contains("Step 1: Inventory → Inventory 2, mapped by Inventory1to2.cdm"))
    }

    /// A step that fails — here the destination's validation, `sku` must look like `ABC-123` — leaves the store as it
    /// was and no step's file behind, and says why with Core Data's code.
    @Test func aFailedMigrationLeavesTheStoreAsItWas() throws {
        let directory = SQLiteTestDirectory()
        let bundle = try Self.inventoryBundle(in: directory)
        let store = try Self.inventoryStore([("BOX-1", 3), ("not a sku", 7)], bundle: bundle, in: directory)
        let before = MigrationCorpus.contents(of: store)
        let mapping = try #require(Bundle.module.url(forResource: "Inventory1to2", withExtension: "cdm"))
        let (status, output) = try CoreDataTool.run([
            "migrate", store.path, "--model", bundle.path, "--mapping", mapping.path,
        ])
        #expect(status == 1)
        #expect(output.contains(" failed"))
        #expect(output.contains("sku"))
        #expect(output.contains("(error 1341"))
        #expect(MigrationCorpus.contents(of: store) == before)
        #expect(try Self.strayFiles(in: directory) == [])
    }

    /// A tool killed with SIGKILL half-way through a step loses nothing: the store is byte for byte as it was and
    /// opens with its version, nothing but the step's hidden scratch file is left beside it, and the tool migrates the
    /// store when run again.
    @Test func aToolKilledHalfWayLeavesTheStoreAsItWas() throws {
        let directory = SQLiteTestDirectory()
        let bundle = try Self.inventoryBundle(in: directory)
        let count = 20_000
        let store = try Self.inventoryStore(
            (0..<count).map { ("BOX-\($0)", $0 % 100) }, bundle: bundle, in: directory)
        let before = MigrationCorpus.contents(of: store)
        let mapping = try #require(Bundle.module.url(forResource: "Inventory1to2", withExtension: "cdm"))
        let arguments = ["migrate", store.path, "--model", bundle.path, "--mapping", mapping.path]
        // The first line of the progress bar comes a tenth of a second into the step, 20,000 objects before its end.
        let (killed, status, output) = try CoreDataTool.run(arguments) { output in
            output.split(separator: "\n").contains { $0.hasPrefix("Step 1/1") && !$0.hasSuffix(" 100%") }
        }
        #expect(killed && status == SIGKILL, "\(output)")
        #expect(!output.contains("Migrated "))
        #expect(MigrationCorpus.contents(of: store) == before)
        let versions = try NSManagedObjectModel.versionsOfModel(at: bundle)
        let old = try SQLiteStack.coordinator(versions[0].model, at: store)
        let context = SQLiteStack.context(old)
        #expect(
            try context.performAndWait { try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Item")) }
                == count)
        try SQLiteStack.close(old)
        #expect(
            try Self.strayFiles(in: directory).allSatisfy {
                $0.hasPrefix(".") && $0.contains(".Inventory.sqlite.migrating-")
            })

        let (again, text) = try CoreDataTool.run(arguments)
        #expect(again == 0, "\(text)")
        #expect(try Self.rows(of: "Item", at: store) == count)
    }

    /// wibosco's store of version 1 goes to version 4 in two steps: its own mapping model to version 2 (which renames
    /// `color` to `hexColor` by a value expression), then an inferred step for the rest.
    @Test(.enabled(if: SQLiteCorpus.isAvailable))
    func aChainOfStepsTakesAStoreAcrossVersions() throws {
        let directory = SQLiteTestDirectory()
        let store = try directory.copyCorpusStore(MigrationCorpus.Wibosco.store("1"))
        let bundle = MigrationCorpus.Wibosco.bundle
        let first = MigrationCorpus.Wibosco.mapping("Migration1to2")
        let (planned, plan) = try CoreDataTool.run([
            "migrate", store.path, "--model", bundle.path, "--mapping", first.path, "--dry-run",
        ])
        #expect(planned == 0, "\(plan)")
        let lines = plan.split(separator: "\n").map(String.init)
        #expect(lines.contains("Plan: CoreDataMigration_Example → CoreDataMigration_Example 4, 2 steps"))
        #expect(
            lines.contains(
                "Step 1: CoreDataMigration_Example → CoreDataMigration_Example 2, mapped by Migration1to2.xcmappingmodel"
            ))
        #expect(lines.contains("      ~ hexColor ← $source.color"))
        #expect(
            lines.contains(
                "Step 2: CoreDataMigration_Example 2 → CoreDataMigration_Example 4, inferred (lightweight migration)"))
        let posts = try Self.rows(of: "Post", at: store)
        #expect(posts > 0)

        let (status, output) = try CoreDataTool.run([
            "migrate", store.path, "--model", bundle.path, "--mapping", first.path,
        ])
        #expect(status == 0, "\(output)")
        let models = try MigrationCorpus.Wibosco.models()
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: store)
        #expect(models[3].isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        #expect(try Self.rows(of: "Post", at: store) == posts)
    }

    /// wibosco's mapping model from version 2 to 3 needs the app's policy class, which the tool does not have: the
    /// plan says so, and the migration refuses before it starts.
    @Test(.enabled(if: SQLiteCorpus.isAvailable))
    func aPolicyTheToolLacksIsRefusedBeforeAnythingRuns() throws {
        let directory = SQLiteTestDirectory()
        let store = try directory.copyCorpusStore(MigrationCorpus.Wibosco.store("2"))
        let before = MigrationCorpus.contents(of: store)
        let arguments = [
            "migrate", store.path, "--model", MigrationCorpus.Wibosco.bundle.path, "--mapping",
            MigrationCorpus.Wibosco.mapping("Migration2to3").path, "--to", "CoreDataMigration_Example 3",
        ]
        let (planned, plan) = try CoreDataTool.run(arguments + ["--dry-run"])
        #expect(planned == 0, "\(plan)")
        #expect(
            plan.contains(
                "policy CoreDataMigration_Example.Post2ToPost3MigrationPolicy (not in this tool: the migration will fail)"
            ))
        let (status, output) = try CoreDataTool.run(arguments)
        #expect(status == 1)
        #expect(output.contains("(error 134170)"))
        #expect(MigrationCorpus.contents(of: store) == before)
    }

    @Test func whatCannotBePlannedIsAnError() throws {
        let directory = SQLiteTestDirectory()
        let bundle = try Self.inventoryBundle(in: directory)
        let store = try Self.inventoryStore([("BOX-1", 3)], bundle: bundle, in: directory)
        let (unknown, text) = try CoreDataTool.run([
            "migrate", store.path, "--model", bundle.path, "--to", "Inventory 9",
        ])
        #expect(unknown == 1)
        #expect(text.contains("no version named 'Inventory 9'"))
        // A store of another model altogether.
        let other = directory.store("Other.sqlite")
        let coordinator = try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: other)
        for added in coordinator.persistentStores { try coordinator.remove(added) }
        let (foreign, message) = try CoreDataTool.run(["migrate", other.path, "--model", bundle.path])
        #expect(foreign == 1)
        #expect(message.contains("(error 134130)"))
        let (missing, missingText) = try CoreDataTool.run([
            "migrate", directory.store("Missing.sqlite").path, "--model", bundle.path,
        ])
        #expect(missing == 1)
        #expect(missingText.contains("Missing.sqlite"))
    }
}

#endif
