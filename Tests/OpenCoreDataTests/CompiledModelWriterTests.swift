import Foundation
import Testing

@testable import OpenCoreData

/// The compiled-model writer: every model of the corpus (Xcode models, Apple's `.mom` files and the models Apple's
/// stores cached) archives in both of Apple's shapes and reads back the same, and the archives use the classes and
/// keys Apple's own archives use.
@Suite(.enabled(if: ModelCorpus.exists, "the corpus is not available"))
struct CompiledModelWriterTests {
    /// Every model source of the corpus, relative to its root.
    static let sources: [String] = {
        let versions = (ModelCorpus.modelVersions + ModelCorpus.legacyModelVersions).map(ModelCorpus.relativePath)
        let compiled = ModelCorpus.files { $0.pathExtension == "mom" }.map(ModelCorpus.relativePath)
        return versions + compiled + appleCaches
    }()

    /// The models Apple's SQLite stores cached (`Z_MODELCACHE`, inflated).
    static let appleCaches: [String] = ModelCorpus.files { $0.lastPathComponent.hasSuffix(".modelcache.bplist") }
        .map(ModelCorpus.relativePath)

    static func load(_ relativePath: String) throws -> NSManagedObjectModel {
        let url = ModelCorpus.root.appendingPathComponent(relativePath)
        if relativePath.hasSuffix(".bplist") {
            let model = NSManagedObjectModel()
            try CompiledModelReader.load(try Data(contentsOf: url), url: url, into: model)
            return model
        }
        return try NSManagedObjectModel(validatingContentsOf: url)
    }

    static func reread(_ data: Data) throws -> NSManagedObjectModel {
        let model = NSManagedObjectModel()
        try CompiledModelReader.load(data, url: URL(fileURLWithPath: "/written.mom"), into: model)
        return model
    }

    @Test func theCorpusHasModelsOfEveryKind() {
        #expect(Self.sources.count > 60)
        #expect(Self.appleCaches.count == 9)
    }

    @Test(arguments: sources)
    func writtenModelsReadBackTheSame(_ relativePath: String) throws {
        let model = try Self.load(relativePath)
        let expected = ModelSnapshot.lines(model)
        for style in [CompiledModelWriter.Style.compiledModel, .storeModelCache] {
            let reread = try Self.reread(try CompiledModelWriter.data(for: model, style: style))
            let difference = Self.difference(ModelSnapshot.lines(reread), expected)
            #expect(difference.isEmpty, "\(style): \(difference.joined(separator: "\n"))")
            #expect(reread.entityVersionHashesByName == model.entityVersionHashesByName)
        }
    }

    /// The lines only one side has: `+` written, `-` original.
    static func difference(_ lines: [String], _ expected: [String]) -> [String] {
        let written = Set(lines)
        let original = Set(expected)
        return lines.filter { !original.contains($0) }.map { "+ " + $0 }
            + expected.filter { !written.contains($0) }.map { "- " + $0 }
    }
}
