// Tests of the coredata tool: they do not build against Apple's Core Data.
#if !canImport(CoreData)

import Foundation
import OpenCoreData
import Testing

/// `coredata compile`: momc's and mapc's work from the command line, with the compiler the build plugin runs.
@Suite struct CompileCommandTests {
    static var inventory: URL? { Bundle.module.url(forResource: "Inventory", withExtension: "xcdatamodeld") }

    @Test func aModelBundleCompilesIntoAMomd() throws {
        let directory = SQLiteTestDirectory()
        let source = try #require(Self.inventory)
        let output = directory.url.appendingPathComponent("Inventory.momd")
        let (status, text) = try CoreDataTool.run(["compile", source.path, "--output", output.path, "--module", "Shop"])
        #expect(status == 0, "\(text)")
        #expect(text.contains("Compiled Inventory.xcdatamodeld (versions Inventory, Inventory 2 (current)) into"))
        let compiled = try NSManagedObjectModel.versionsOfModel(at: output)
        let original = try NSManagedObjectModel.versionsOfModel(at: source)
        #expect(compiled.map(\.name) == original.map(\.name))
        #expect(compiled.map(\.model.entityVersionHashesByName) == original.map(\.model.entityVersionHashesByName))
        #expect(try NSManagedObjectModel.currentVersionNameOfModel(at: output) == "Inventory 2")
    }

    /// The corpus's V2toV3.xcmappingmodel compiles into the mapping model Xcode compiled from it.
    @Test(.enabled(if: SQLiteCorpus.isAvailable))
    func aMappingModelCompilesIntoACdm() throws {
        let directory = SQLiteTestDirectory()
        let output = directory.url.appendingPathComponent("V2toV3.cdm")
        let (status, text) = try CoreDataTool.run([
            "compile", MigrationCorpus.SampleModel.xcodeMapping.path, "-o", output.path,
        ])
        #expect(status == 0, "\(text)")
        #expect(text.contains("Compiled V2toV3.xcmappingmodel (5 entity mappings) into \(output.path)"))
        let apples = try NSMappingModel(validatingContentsOf: MigrationCorpus.SampleModel.compiledMapping)
        let ours = try NSMappingModel(validatingContentsOf: output)
        #expect(MappingModelLoadingTests.summary(ours) == MappingModelLoadingTests.summary(apples))
    }

    @Test func whatCannotBeCompiledIsAnErrorAndWritesNothing() throws {
        let directory = SQLiteTestDirectory()
        let source = try #require(Self.inventory)
        // Usage errors: the output must be what the input compiles into.
        for (input, output) in [
            (source.path, directory.url.appendingPathComponent("Inventory.cdm").path),
            (directory.url.appendingPathComponent("Map.xcmappingmodel").path, directory.url.path + "/Map.momd"),
            (directory.url.appendingPathComponent("notes.txt").path, directory.url.path + "/notes.momd"),
        ] {
            let (status, text) = try CoreDataTool.run(["compile", input, "--output", output])
            #expect(status == 64, "\(text)")
        }
        let (moduleStatus, moduleText) = try CoreDataTool.run([
            "compile", "Map.xcmappingmodel", "-o", "Map.cdm", "--module", "App",
        ])
        #expect(moduleStatus == 64)
        #expect(moduleText.contains("--module applies to models only"))

        let mapping = directory.url.appendingPathComponent("Broken.xcmappingmodel")
        try FileManager.default.createDirectory(at: mapping, withIntermediateDirectories: true)
        try Data("<database><object".utf8).write(to: mapping.appendingPathComponent("xcmapping.xml"))
        let output = directory.url.appendingPathComponent("Broken.cdm")
        let (status, text) = try CoreDataTool.run(["compile", mapping.path, "--output", output.path])
        #expect(status == 1)
        #expect(text.contains("Broken.xcmappingmodel"))
        #expect(text.contains("(error 134060)"))
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }
}

#endif
