import Foundation
import OpenCoreData

/// Loading large models (issue 30): a model file is read, a coordinator made for it and a new SQLite store added —
/// for an inheritance chain of 5,000 entities, and for 10,000 entities side by side, which then save an object each.
///
/// Every entity of the chain declares one attribute, so that entity `n` has `n` properties. A hierarchy shares one
/// table, and SQLite allows 2,000 columns, so the attribute of every third level is stored and the others are
/// transient (1,667 columns).
public enum ModelScaleWorkloads {
    public static let chainDepth = 5_000
    public static let flatCount = 10_000

    /// An Xcode model file (`<name>.xcdatamodel/contents`) in a temporary directory, removed with the object.
    public final class ModelFile: @unchecked Sendable {
        public let url: URL
        let directory: URL

        init(name: String, contents: String) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "OpenCoreDataModelScale-\(UUID().uuidString)", isDirectory: true)
            url = directory.appendingPathComponent("\(name).xcdatamodel", isDirectory: true)
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            try contents.write(to: url.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        }

        deinit {
            try? FileManager.default.removeItem(at: directory)
        }

        /// A store URL beside the model that no store uses yet.
        func newStoreURL() -> URL {
            directory.appendingPathComponent("Store-\(UUID().uuidString).sqlite")
        }
    }

    private static let header = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22522" \
        systemVersion="23A344" minimumToolsVersion="Automatic" sourceLanguage="Swift" \
        userDefinedModelVersionIdentifier="">

        """

    /// `Level0` ← `Level1` ← … ← `Level<depth - 1>`, each declaring the attribute `value<n>`.
    public static func chainModel(depth: Int = chainDepth) throws -> ModelFile {
        var xml = header
        for level in 0..<depth {
            let parent = level == 0 ? "" : " parentEntity=\"Level\(level - 1)\""
            let transient = level % 3 == 0 ? "" : " transient=\"YES\""
            xml +=
                "    <entity name=\"Level\(level)\" representedClassName=\"Level\(level)\"\(parent) syncable=\"YES\">\n"
            xml += "        <attribute name=\"value\(level)\" optional=\"YES\"\(transient) attributeType=\"String\"/>\n"
            xml += "    </entity>\n"
        }
        return try ModelFile(name: "Chain", contents: xml + "</model>\n")
    }

    /// `Entity0` … `Entity<count - 1>`, each with a string and an integer.
    public static func flatModel(count: Int = flatCount) throws -> ModelFile {
        var xml = header
        for index in 0..<count {
            xml += "    <entity name=\"Entity\(index)\" representedClassName=\"Entity\(index)\" syncable=\"YES\">\n"
            xml += "        <attribute name=\"name\" optional=\"YES\" attributeType=\"String\"/>\n"
            xml += "        <attribute name=\"count\" optional=\"YES\" attributeType=\"Integer 64\" "
            xml += "usesScalarValueType=\"YES\"/>\n"
            xml += "    </entity>\n"
        }
        return try ModelFile(name: "Flat", contents: xml + "</model>\n")
    }

    /// Loads the model, adds a new SQLite store and saves one object of the deepest entity; returns the number of
    /// entities and the rows saved, to check.
    @inline(never)
    public static func loadAndAddStore(_ file: ModelFile) throws -> Int {
        try load(file) { context, model in
            // The chain's last level: the only entity with a superentity and no subentities.
            let deepest = model.entities.first { $0.superentity != nil && $0.subentities.isEmpty }
            guard let name = deepest?.name else { return 0 }
            NSEntityDescription.insertNewObject(forEntityName: name, into: context).setValue("x", forKey: "value0")
            return 1
        }
    }

    /// Loads the model, adds a new SQLite store and saves one object of every entity; returns the number of
    /// entities and the rows saved, to check.
    @inline(never)
    public static func loadAddStoreAndSave(_ file: ModelFile) throws -> Int {
        try load(file) { context, model in
            for entity in model.entities {
                guard let name = entity.name else { continue }
                let object = NSEntityDescription.insertNewObject(forEntityName: name, into: context)
                object.setValue(name, forKey: "name")
            }
            return model.entities.count
        }
    }

    private static func load(
        _ file: ModelFile, insert: (NSManagedObjectContext, NSManagedObjectModel) -> Int
    ) throws -> Int {
        let store = file.newStoreURL()
        defer {
            for suffix in ["", "-wal", "-shm", "-journal"] {
                try? FileManager.default.removeItem(atPath: store.path + suffix)
            }
        }
        let model = try NSManagedObjectModel(validatingContentsOf: file.url)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: store, options: nil)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let saved = try context.performAndWait {
            let count = insert(context, model)
            try context.save()
            return count
        }
        for added in coordinator.persistentStores { try coordinator.remove(added) }
        return model.entities.count + saved
    }
}
