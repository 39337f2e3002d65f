import Foundation
import OpenCoreData
import StoreConformance
import Testing

/// The binary store's file: the documented format (OpenCoreData's own, version 1), metadata without a coordinator,
/// and damaged files reported without loading half of them.
@Suite struct BinaryStoreTests {
    /// A binary store file with the company in it.
    final class SavedStore {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("BinaryStore-\(UUID().uuidString)")

        init() throws {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: ConformanceModel.shared)
            try coordinator.addPersistentStore(ofType: NSBinaryStoreType, configurationName: nil, at: url, options: nil)
            try ConformanceData.populate(.conformance(coordinator))
        }

        deinit { try? FileManager.default.removeItem(at: url) }

        var root: [String: Any] {
            get throws {
                let plist = try PropertyListSerialization.propertyList(from: Data(contentsOf: url), format: nil)
                return try #require(plist as? [String: Any])
            }
        }

        func write(_ root: [String: Any]) throws {
            try PropertyListSerialization.data(fromPropertyList: root, format: .binary, options: 0).write(to: url)
        }

        /// Adding the store fails as a damaged file, naming `reason`; no store is added.
        func expectDamaged(_ reason: String, sourceLocation: SourceLocation = #_sourceLocation) {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: ConformanceModel.shared)
            do {
                try coordinator.addPersistentStore(
                    ofType: NSBinaryStoreType, configurationName: nil, at: url, options: nil)
                Issue.record("a damaged store was added", sourceLocation: sourceLocation)
            } catch let error as NSError {
                #expect(error.domain == NSCocoaErrorDomain, sourceLocation: sourceLocation)
                #expect(error.code == CocoaError.Code.fileReadCorruptFile.rawValue, sourceLocation: sourceLocation)
                #expect(error.localizedDescription.contains(reason), "\(error)", sourceLocation: sourceLocation)
            }
            #expect(coordinator.persistentStores.isEmpty, sourceLocation: sourceLocation)
        }
    }

    @Test func theFileIsTheDocumentedPropertyList() throws {
        let store = try SavedStore()
        let bytes = try Data(contentsOf: store.url)
        #expect(bytes.starts(with: Array("bplist00".utf8)))
        let root = try store.root
        #expect((root["OpenCoreDataBinaryStore"] as? NSNumber)?.intValue == 1)
        let metadata = try #require(root["metadata"] as? [String: Any])
        #expect(metadata[NSStoreTypeKey] as? String == NSBinaryStoreType)
        #expect(metadata[NSStoreUUIDKey] is String)
        #expect(metadata[NSStoreModelVersionHashesKey] is [String: Any])
        let entities = try #require(root["entities"] as? [String])
        #expect(Set(entities) == ["Department", "Person", "Employee", "Project", "Item"])
        let objects = try #require(root["objects"] as? [[Any]])
        #expect(objects.count == 3 + 7 + 4 + 5)
        // The department R&D: [entity index, key, version, values], its relationships as keys.
        let research = try #require(
            objects.first { ($0[3] as? [String: Any])?["name"] as? String == "R&D" })
        #expect(entities[(research[0] as? NSNumber)?.intValue ?? -1] == "Department")
        #expect((research[2] as? NSNumber)?.intValue == 1)
        let values = try #require(research[3] as? [String: Any])
        #expect(values["budget"] as? String == "5000.5")
        #expect((values["employees"] as? [Any])?.count == 2)
        #expect(values["head"] is NSNumber)
        let projects = try #require(values["projects"] as? [NSNumber])
        let titles = projects.compactMap { key in
            objects.first { ($0[1] as? NSNumber) == key }.flatMap { ($0[3] as? [String: Any])?["title"] as? String }
        }
        #expect(titles == ["Artemis", "Apollo"])
        let item = try #require(objects.first { ($0[3] as? [String: Any])?["string"] as? String == "alpha" })
        let itemValues = try #require(item[3] as? [String: Any])
        #expect((itemValues["uuid"] as? Data)?.count == 16)
        #expect(itemValues["uri"] as? String == "https://a.example/x")
        #expect(itemValues["transformable"] is Data)
        #expect(itemValues["scratch"] == nil)
    }

    @Test func metadataIsReadAndWrittenWithoutACoordinator() throws {
        let store = try SavedStore()
        var metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            type: .binary, at: store.url, options: nil)
        let uuid = try #require(metadata[NSStoreUUIDKey] as? String)
        #expect(ConformanceModel.shared.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        metadata["Written"] = ["without", "a", "coordinator"]
        try NSPersistentStoreCoordinator.setMetadata(metadata, type: .binary, at: store.url, options: nil)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: ConformanceModel.shared)
        let added = try coordinator.addPersistentStore(
            ofType: NSBinaryStoreType, configurationName: nil, at: store.url, options: nil)
        #expect(added.identifier == uuid)
        #expect(coordinator.metadata(for: added)["Written"] as? [String] == ["without", "a", "coordinator"])
        let context = NSManagedObjectContext.conformance(coordinator)
        try context.run {
            let count = try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Person"))
            #expect(count == 7)
        }
    }

    @Test func damagedFilesAreReportedAndNotLoaded() throws {
        let store = try SavedStore()
        let original = try store.root
        try Data("not a store".utf8).write(to: store.url)
        store.expectDamaged("not a property list")

        var root = original
        root["OpenCoreDataBinaryStore"] = 2
        try store.write(root)
        store.expectDamaged("format version 2")

        root = original
        root["entities"] = (original["entities"] as? [String] ?? []).map { $0 == "Project" ? "Starship" : $0 }
        try store.write(root)
        store.expectDamaged("entity 'Starship'")

        var objects = try #require(original["objects"] as? [[Any]])
        let index = try #require(objects.firstIndex { ($0[3] as? [String: Any])?["name"] as? String == "R&D" })
        var values = try #require(objects[index][3] as? [String: Any])
        values["head"] = 999_999
        objects[index][3] = values
        root = original
        root["objects"] = objects
        try store.write(root)
        store.expectDamaged("relationship 'head'")

        values["head"] = nil
        values["name"] = 42
        objects[index][3] = values
        root["objects"] = objects
        try store.write(root)
        store.expectDamaged("'name'")

        objects[index] = ["not", "an", "object"]
        root["objects"] = objects
        try store.write(root)
        store.expectDamaged("is not [entity index, key, version, values]")
    }

    @Test func aStoreOfAnotherModelIsIncompatibleNotDamaged() throws {
        let store = try SavedStore()
        let other = NSManagedObjectModel()
        let entity = NSEntityDescription()
        entity.name = "Department"
        let name = NSAttributeDescription()
        name.name = "title"
        name.attributeType = .stringAttributeType
        entity.properties = [name]
        other.entities = [entity]
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: other)
        #expect {
            try coordinator.addPersistentStore(
                ofType: NSBinaryStoreType, configurationName: nil, at: store.url, options: nil)
        } throws: { error in
            (error as NSError).code == NSPersistentStoreIncompatibleVersionHashError
        }
    }
}
