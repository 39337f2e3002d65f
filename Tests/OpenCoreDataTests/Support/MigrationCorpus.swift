import Foundation
import OpenCoreDataShim

/// The corpus material for migration: Apple-written stores of older model versions, the model bundles with every
/// version, and the projects' mapping models (shared/corpus; see its SOURCES.tsv).
enum MigrationCorpus {
    /// wibosco/CoreDataMigration-Example: four versions of a `Post` model, a store for each of the first three and
    /// one of the fourth in WAL mode, two mapping models and a custom entity migration policy.
    enum Wibosco {
        static let folder = "stores/wibosco__CoreDataMigration-Example"
        static let storeFolder = folder + "/CoreDataMigration-ExampleTests/Resources/SQLite"
        static let bundle = SQLiteCorpus.root.appendingPathComponent(
            folder + "/CoreDataMigration-Example/CoreData/Model/CoreDataMigration_Example.xcdatamodeld")
        static let mappings = SQLiteCorpus.root.appendingPathComponent(
            folder + "/CoreDataMigration-Example/CoreData/Migration/Mappings")

        /// The store written with model version `version` (1…3), or the version-4 store in WAL mode (`"WAL"`).
        static func store(_ version: String) -> String {
            storeFolder + "/CoreDataMigration_Example_\(version).sqlite"
        }

        /// Model versions 1…4, in order.
        static func models() throws -> [NSManagedObjectModel] {
            try NSManagedObjectModel.versionsOfModel(at: bundle).map(\.model)
        }

        static func mapping(_ name: String) -> URL {
            mappings.appendingPathComponent(name + ".xcmappingmodel")
        }
    }

    /// hwaxxer/BookMigration (objc.io issue 4): Model1.sqlite and three versions with mapping models between them.
    enum BookMigration {
        static let folder = "stores/hwaxxer__BookMigration"
        static let store = folder + "/Model1.sqlite"
        static let bundle = SQLiteCorpus.root.appendingPathComponent(folder + "/Model.xcdatamodeld")

        static func models() throws -> [NSManagedObjectModel] {
            try NSManagedObjectModel.versionsOfModel(at: bundle).map(\.model)
        }

        static func mapping(_ name: String) -> URL {
            SQLiteCorpus.root.appendingPathComponent(folder + "/" + name + ".xcmappingmodel")
        }
    }

    /// objcio/core-data Migrations: six versions of the Moody model and four mapping models.
    enum Moody {
        static let folder = SQLiteCorpus.root.appendingPathComponent("models/objcio__core-data/Migrations/Migrations")
        static let bundle = folder.appendingPathComponent("Moody.xcdatamodeld")

        static func models() throws -> [NSManagedObjectModel] {
            try NSManagedObjectModel.versionsOfModel(at: bundle).map(\.model)
        }

        static func mapping(from version: Int) -> URL {
            folder.appendingPathComponent("Moody \(version)-Moody \(version + 1).xcmappingmodel")
        }
    }

    /// alemar11/CoreDataPlus SampleModel: a compiled mapping model (`.cdm`) next to the `.xcmappingmodel` it was
    /// compiled from, and the compiled model versions it maps between.
    enum SampleModel {
        static let folder = SQLiteCorpus.root.appendingPathComponent("momd/alemar11__CoreDataPlus/SampleModel")
        static let compiledMapping = folder.appendingPathComponent("Fixtures/V2toV3.cdm")
        static let xcodeMapping = folder.appendingPathComponent("MappingModels/V2toV3.xcmappingmodel")
        static let momd = folder.appendingPathComponent("Fixtures/SampleModel.momd")

        static func model(_ name: String) throws -> NSManagedObjectModel {
            try NSManagedObjectModel(validatingContentsOf: momd.appendingPathComponent(name + ".mom"))
        }
    }

    /// The bytes of a store file and of its write-ahead log, to show that something left them alone. An empty log
    /// holds nothing (SQLite creates one beside a WAL store it opens read-only), so it counts as none.
    static func contents(of store: URL) -> [String: Data] {
        var files: [String: Data] = [:]
        for suffix in ["", "-wal"] {
            if let data = FileManager.default.contents(atPath: store.path + suffix), !data.isEmpty || suffix.isEmpty {
                files[suffix] = data
            }
        }
        return files
    }
}
