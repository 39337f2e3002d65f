import Foundation
import OpenCoreDataShim
import Testing

/// Staged migration: custom stages with handlers around a lightweight migration, lightweight stages, model
/// references by checksum.
@Suite(.enabled(if: SQLiteCorpus.isAvailable)) struct StagedMigrationTests {
    /// wibosco's store migrated from version 1 to 4 the staged way: what its mapping models and policy did, done by
    /// handlers — the color each post had before the rename is put back after it, and becomes a Color object — then
    /// a lightweight stage to version 4.
    static func stages(_ models: [NSManagedObjectModel], calls: Recorder) -> NSStagedMigrationManager {
        func reference(_ index: Int) -> NSManagedObjectModelReference {
            let name = index == 0 ? "CoreDataMigration_Example" : "CoreDataMigration_Example \(index + 1)"
            return NSManagedObjectModelReference(
                fileURL: MigrationCorpus.Wibosco.bundle.appendingPathComponent(name + ".xcdatamodel"),
                versionChecksum: models[index].versionChecksum)
        }
        func posts(_ manager: NSStagedMigrationManager) throws -> (NSManagedObjectContext, [NSManagedObject]) {
            let context = try #require(manager.container).newBackgroundContext()
            let posts = try context.performAndWait {
                try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Post"))
            }
            return (context, posts)
        }
        let renameColor = NSCustomMigrationStage(migratingFrom: reference(0), to: reference(1))
        renameColor.label = "color → hexColor"
        renameColor.willMigrateHandler = { manager, stage in
            calls.append(
                "will \(stage.label ?? "") at \(manager.container?.managedObjectModel.versionChecksum == models[0].versionChecksum)"
            )
            let (context, found) = try posts(manager)
            context.performAndWait {
                for post in found {
                    calls.colors[post.value(forKey: "postID") as? String ?? ""] = post.value(forKey: "color") as? String
                }
            }
        }
        renameColor.didMigrateHandler = { manager, stage in
            calls.append("did \(stage.label ?? "")")
            let (context, found) = try posts(manager)
            try context.performAndWait {
                for post in found {
                    post.setValue(calls.colors[post.value(forKey: "postID") as? String ?? ""], forKey: "hexColor")
                }
                try context.save()
            }
        }
        let makeColors = NSCustomMigrationStage(migratingFrom: reference(1), to: reference(2))
        makeColors.label = "hexColor → Color"
        makeColors.willMigrateHandler = { manager, stage in
            calls.append("will \(stage.label ?? "")")
            let (context, found) = try posts(manager)
            context.performAndWait {
                for post in found {
                    calls.colors[post.value(forKey: "postID") as? String ?? ""] =
                        post.value(forKey: "hexColor") as? String
                }
            }
        }
        makeColors.didMigrateHandler = { manager, stage in
            calls.append("did \(stage.label ?? "")")
            let (context, found) = try posts(manager)
            try context.performAndWait {
                for post in found {
                    let color = NSEntityDescription.insertNewObject(forEntityName: "Color", into: context)
                    color.setValue(calls.colors[post.value(forKey: "postID") as? String ?? ""], forKey: "hex")
                    color.setValue(UUID().uuidString, forKey: "colorID")
                    post.setValue(color, forKey: "color")
                }
                try context.save()
            }
        }
        let hide = NSLightweightMigrationStage([models[2].versionChecksum, models[3].versionChecksum])
        hide.label = "hide"
        return NSStagedMigrationManager([renameColor, makeColors, hide])
    }

    final class Recorder: @unchecked Sendable {
        var calls: [String] = []
        var colors: [String: String] = [:]
        func append(_ call: String) { calls.append(call) }
    }

    static func load(_ url: URL, model: NSManagedObjectModel, stages: NSStagedMigrationManager) -> (any Error)? {
        let description = NSPersistentStoreDescription(url: url)
        description.setOption(stages, forKey: NSPersistentStoreStagedMigrationManagerOptionKey)
        let container = NSPersistentContainer(name: "Posts", managedObjectModel: model)
        container.persistentStoreDescriptions = [description]
        var loadError: (any Error)?
        container.loadPersistentStores { _, error in loadError = error }
        for store in container.persistentStoreCoordinator.persistentStores {
            try? container.persistentStoreCoordinator.remove(store)
        }
        return loadError
    }

    @Test func aStoreGoesThroughEveryStageThatApplies() throws {
        let directory = SQLiteTestDirectory()
        let url = try directory.copyCorpusStore(MigrationCorpus.Wibosco.store("1"))
        let before = try RawSQLite.query(url, "SELECT ZPOSTID, ZCOLOR FROM ZPOST ORDER BY ZPOSTID")
        let models = try MigrationCorpus.Wibosco.models()
        let recorder = Recorder()
        #expect(Self.load(url, model: models[3], stages: Self.stages(models, calls: recorder)) == nil)
        #expect(
            recorder.calls == [
                "will color → hexColor at true", "did color → hexColor", "will hexColor → Color",
                "did hexColor → Color",
            ])
        let after = try RawSQLite.query(
            url, "SELECT p.ZPOSTID, c.ZHEX FROM ZPOST p JOIN ZCOLOR c ON p.ZCOLOR = c.Z_PK ORDER BY p.ZPOSTID")
        #expect(after == before)
        #expect(try RawSQLite.query(url, "SELECT COUNT(*) FROM ZPOST WHERE ZHIDE = 0") == [[.integer(1001)]])
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: url)
        #expect(models[3].isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))

        // A store already at version 3 skips the custom stages.
        let third = try directory.copyCorpusStore(MigrationCorpus.Wibosco.store("3"))
        let skipping = Recorder()
        #expect(Self.load(third, model: models[3], stages: Self.stages(models, calls: skipping)) == nil)
        #expect(skipping.calls.isEmpty)
        #expect(try RawSQLite.query(third, "SELECT COUNT(*) FROM ZPOST WHERE ZHIDE = 0") == [[.integer(7995)]])
    }

    /// A reference whose checksum is not its model's is an error before anything migrates.
    @Test func aReferenceWithTheWrongChecksumStopsTheMigration() throws {
        let directory = SQLiteTestDirectory()
        let url = try directory.copyCorpusStore(MigrationCorpus.Wibosco.store("1"))
        let before = MigrationCorpus.contents(of: url)
        let models = try MigrationCorpus.Wibosco.models()
        let wrong = NSCustomMigrationStage(
            migratingFrom: NSManagedObjectModelReference(model: models[0], versionChecksum: models[0].versionChecksum),
            to: NSManagedObjectModelReference(model: models[1], versionChecksum: models[2].versionChecksum))
        let error = Self.load(url, model: models[3], stages: NSStagedMigrationManager([wrong])) as NSError?
        #expect(error?.code == NSMigrationError)
        #expect(error?.localizedDescription.contains("checksum") == true)
        #expect(MigrationCorpus.contents(of: url) == before)
    }
}
