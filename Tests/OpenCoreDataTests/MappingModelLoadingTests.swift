import Foundation
import OpenCoreDataShim
import Testing

/// Mapping models from files: Xcode's `.xcmappingmodel` and the compiled `.cdm`, found in bundles for a pair of
/// models.
@Suite(.enabled(if: SQLiteCorpus.isAvailable)) struct MappingModelLoadingTests {
    /// A mapping's structure, to compare two readings of one mapping model.
    static func summary(_ model: NSMappingModel) -> [String] {
        model.entityMappings.map { mapping in
            var line =
                "\(mapping.name ?? "") type=\(mapping.mappingType.rawValue) \(mapping.sourceEntityName ?? "-")->"
                + "\(mapping.destinationEntityName ?? "-") policy=\(mapping.entityMigrationPolicyClassName ?? "-")"
            line += " source=\(mapping.sourceExpression?.description ?? "-")"
            line += " hashes=\(mapping.sourceEntityVersionHash?.base64EncodedString() ?? "-"),"
            line += "\(mapping.destinationEntityVersionHash?.base64EncodedString() ?? "-")"
            for property in (mapping.attributeMappings ?? []) + (mapping.relationshipMappings ?? []) {
                line += " | \(property.name ?? "") = \(property.valueExpression?.description ?? "-")"
            }
            return line
        }
    }

    /// Xcode compiled the corpus's V2toV3.cdm from the V2toV3.xcmappingmodel beside it: reading the Xcode file gives
    /// what the compiler made — names, types, policies, the source fetches, the entities' version hashes (from the
    /// model versions the editor embedded) and the value expressions it generated for the empty ones.
    @Test func anXcodeMappingModelReadsAsItsCompiledForm() throws {
        let compiled = try NSMappingModel(validatingContentsOf: MigrationCorpus.SampleModel.compiledMapping)
        let xcode = try NSMappingModel(validatingContentsOf: MigrationCorpus.SampleModel.xcodeMapping)
        #expect(compiled.entityMappings.count == 5)
        #expect(Self.summary(xcode) == Self.summary(compiled))
        let car = try #require(compiled.entityMappingsByName["CarToCar"])
        #expect(car.mappingType == .customEntityMappingType)
        #expect(car.entityMigrationPolicyClassName == "REPLACE_AT_RUNTIME.V2to3MakerPolicy")
        #expect(
            car.sourceExpression?.description
                == #"FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Car", "#
                + #""TRUEPREDICATE"), $manager.sourceContext, NO)"#)
        #expect(compiled.entityMappingsByName["Maker"]?.mappingType == .addEntityMappingType)
        #expect(compiled.entityMappingsByName["PersonToPerson"]?.mappingType == .copyEntityMappingType)
    }

    /// The compiled mapping's hashes are the entity hashes of the compiled models it maps between.
    @Test func aCompiledMappingModelIsFoundForItsModels() throws {
        let version2 = try MigrationCorpus.SampleModel.model("SampleModel2")
        let version3 = try MigrationCorpus.SampleModel.model("SampleModel3")
        let fixtures = try #require(Bundle(url: MigrationCorpus.SampleModel.folder.appendingPathComponent("Fixtures")))
        let found = try #require(NSMappingModel(from: [fixtures], forSourceModel: version2, destinationModel: version3))
        #expect(found.entityMappings.count == 5)
        #expect(NSMappingModel(from: [fixtures], forSourceModel: version3, destinationModel: version2) == nil)
    }

    /// wibosco keeps its two mapping models in a folder of the app; each is found for its pair of versions, and
    /// only for that pair.
    @Test func xcodeMappingModelsAreFoundForTheirVersions() throws {
        let models = try MigrationCorpus.Wibosco.models()
        let bundle = try #require(Bundle(url: MigrationCorpus.Wibosco.mappings))
        let first = try #require(NSMappingModel(from: [bundle], forSourceModel: models[0], destinationModel: models[1]))
        #expect(first.entityMappings.map(\.name) == ["PostToPost"])
        let hexColor = first.entityMappings[0].attributeMappings?.first { $0.name == "hexColor" }
        #expect(hexColor?.valueExpression?.description == "$source.color")
        let date = first.entityMappings[0].attributeMappings?.first { $0.name == "date" }
        #expect(date?.valueExpression?.description == "$source.date")
        let second = try #require(
            NSMappingModel(from: [bundle], forSourceModel: models[1], destinationModel: models[2]))
        #expect(second.entityMappings.map(\.name) == ["Color", "PostToPost"])
        #expect(second.entityMappings[0].mappingType == .addEntityMappingType)
        #expect(
            second.entityMappings[1].entityMigrationPolicyClassName
                == "CoreDataMigration_Example.Post2ToPost3MigrationPolicy")
        #expect(NSMappingModel(from: [bundle], forSourceModel: models[2], destinationModel: models[3]) == nil)
        #expect(NSMappingModel(from: [bundle], forSourceModel: models[0], destinationModel: models[2]) == nil)
    }

    /// Every mapping model of the corpus reads, and its entity hashes are those of the model versions it names.
    @Test func everyCorpusMappingModelMatchesTheVersionsItWasMadeBetween() throws {
        let moody = try MigrationCorpus.Moody.models()
        for version in 2...5 {
            let mapping = try NSMappingModel(validatingContentsOf: MigrationCorpus.Moody.mapping(from: version))
            #expect(
                NSMappingModel(
                    from: [try #require(Bundle(url: MigrationCorpus.Moody.folder))],
                    forSourceModel: moody[version - 1], destinationModel: moody[version]) != nil,
                "Moody \(version)")
            #expect(
                mapping.entityMappings.allSatisfy { $0.sourceEntityVersionHash != nil || $0.sourceEntityName == nil })
        }
        let books = try MigrationCorpus.BookMigration.models()
        for (name, source) in [("Model1_to_Model2", 0), ("Model2_to_Model3", 1), ("Model2_to_Model3_User", 1)] {
            let mapping = try NSMappingModel(validatingContentsOf: MigrationCorpus.BookMigration.mapping(name))
            #expect(
                mapping.entityMappings.allSatisfy { entityMapping in
                    entityMapping.sourceEntityName.map {
                        books[source].entitiesByName[$0]?.versionHash == entityMapping.sourceEntityVersionHash
                    } ?? true
                }, "\(name)")
        }
    }

    @Test func damagedOrMissingMappingModelsThrowCoreDataErrors() throws {
        let directory = SQLiteTestDirectory()
        #expect(NSMappingModel(contentsOf: directory.url.appendingPathComponent("Missing.cdm")) == nil)
        #expect {
            try NSMappingModel(validatingContentsOf: directory.url.appendingPathComponent("Missing.cdm"))
        } throws: { ($0 as NSError).code == NSFileReadNoSuchFileError }
        let damaged: [(String, Data)] = [
            ("Truncated.cdm", try Data(contentsOf: MigrationCorpus.SampleModel.compiledMapping).prefix(2000)),
            ("NotAnArchive.cdm", Data("bplist00 nothing here".utf8)),
            ("Model.xcdatamodel.cdm", Data(repeating: 0xFF, count: 64)),
        ]
        for (name, data) in damaged {
            let url = directory.url.appendingPathComponent(name)
            try data.write(to: url)
            #expect(throws: (any Error).self) { try NSMappingModel(validatingContentsOf: url) }
        }
        let folder = directory.url.appendingPathComponent("Broken.xcmappingmodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for text in ["<database><object", "<plist/>", "\u{FF}\u{FE}<<<"] {
            try Data(text.utf8).write(to: folder.appendingPathComponent("xcmapping.xml"))
            #expect {
                try NSMappingModel(validatingContentsOf: folder)
            } throws: { ($0 as NSError).code == NSCoreDataError }
        }
    }
}
