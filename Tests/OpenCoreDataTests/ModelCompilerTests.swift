import Foundation
@_spi(ModelCompiler) import OpenCoreDataCore
import OpenCoreDataShim
import Testing

/// The model compiler writes what Xcode's momc writes: a `.momd` of `.mom` archives and a `VersionInfo.plist` with
/// the current version and Apple's hashes and checksums; the build plugin puts it among a target's resources.
@Suite struct ModelCompilerTests {
    private static func plist(_ url: URL) throws -> [String: Any] {
        let data = try Data(contentsOf: url)
        return try #require(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
    }

    @Test(.enabled(if: ModelCorpus.exists))
    func versionInfoMatchesWhatXcodeWroteForTheSameModel() throws {
        let sample = ModelCorpus.root.appendingPathComponent("momd/alemar11__CoreDataPlus/SampleModel3")
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("\(UUID().uuidString).momd")
        defer { try? FileManager.default.removeItem(at: output) }
        try ModelCompiler.compile(sample.appendingPathComponent("SampleModel3.xcdatamodeld"), to: output)

        let ours = try Self.plist(output.appendingPathComponent("VersionInfo.plist"))
        let apples = try Self.plist(sample.appendingPathComponent("Fixtures/SampleModel3.momd/VersionInfo.plist"))
        #expect(ours["NSManagedObjectModel_CurrentVersionName"] as? String == "SampleModel3")
        #expect(
            ours["NSManagedObjectModel_VersionChecksums"] as? [String: String]
                == apples["NSManagedObjectModel_VersionChecksums"] as? [String: String])
        #expect(
            (ours["NSManagedObjectModel_VersionHashes"] as? [String: [String: Data]])
                == (apples["NSManagedObjectModel_VersionHashes"] as? [String: [String: Data]]))
        let files = try FileManager.default.contentsOfDirectory(atPath: output.path).sorted()
        #expect(files == ["SampleModel3.mom", "SampleModel3_v2.mom", "SampleModel3_v3.mom", "VersionInfo.plist"])

        let compiled = try NSManagedObjectModel(validatingContentsOf: output)
        let source = try NSManagedObjectModel(
            validatingContentsOf: sample.appendingPathComponent("SampleModel3.xcdatamodeld"))
        #expect(compiled.entityVersionHashesByName == source.entityVersionHashesByName)
    }

    /// Xcode's editor writes `.Animal` for a class in "Current Product Module"; momc makes it `Module.Animal`.
    @Test func classNamesRelativeToTheModuleGetTheModulesName() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        let source = directory.appendingPathComponent("Zoo.xcdatamodel")
        try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(
            """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="Animal" representedClassName=".Animal" syncable="YES">
                    <attribute name="name" optional="YES" attributeType="String"/>
                </entity>
                <entity name="Keeper" representedClassName="Staff.Keeper" syncable="YES"/>
            </model>
            """.utf8
        ).write(to: source.appendingPathComponent("contents"))
        let output = directory.appendingPathComponent("Zoo.mom")
        try ModelCompiler.compile(source, to: output, moduleName: "ZooApp")
        let model = try NSManagedObjectModel(validatingContentsOf: output)
        #expect(model.entitiesByName["Animal"]?.managedObjectClassName == "ZooApp.Animal")
        #expect(model.entitiesByName["Keeper"]?.managedObjectClassName == "Staff.Keeper")
    }

    @Test func aModelThatDoesNotLoadWritesNothing() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        let broken = directory.appendingPathComponent("Broken.xcdatamodel")
        try FileManager.default.createDirectory(at: broken, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("<model><entity name=\"A\"><attribute name=\"x\" attributeType=\"Nonsense\"/></entity></model>".utf8)
            .write(to: broken.appendingPathComponent("contents"))
        let output = directory.appendingPathComponent("Broken.mom")
        #expect(throws: NSError.self) { try ModelCompiler.compile(broken, to: output) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["Broken.xcdatamodel"])
    }

    /// What the build plugin compiled from `Resources/Inventory.xcdatamodeld` is found the way Apple-platform code
    /// finds a model, and is the same model.
    @Test func thePluginCompilesTheTargetsModelsIntoItsResources() throws {
        let momd = try #require(Bundle.module.url(forResource: "Inventory", withExtension: "momd"))
        let compiled = try #require(NSManagedObjectModel(contentsOf: momd))
        let source = try #require(Bundle.module.url(forResource: "Inventory", withExtension: "xcdatamodeld"))
        let fromSource = try #require(NSManagedObjectModel(contentsOf: source))
        #expect(compiled.entityVersionHashesByName == fromSource.entityVersionHashesByName)
        #expect(try NSManagedObjectModel.currentVersionNameOfModel(at: momd) == "Inventory 2")
    }
}
