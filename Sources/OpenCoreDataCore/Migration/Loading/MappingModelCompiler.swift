/// Compiles Xcode mapping models as Xcode's mapping model compiler does: an `.xcmappingmodel` folder becomes a `.cdm`
/// file, the keyed archive of the `NSMappingModel` it describes, with each entity mapping's version hashes taken from
/// the model versions it was made between and the value expressions Xcode's editor leaves empty generated.
///
/// Code written for Apple platforms finds a mapping model as a compiled resource
/// (`Bundle.module.url(forResource: "V1toV2", withExtension: "cdm")` and `NSMappingModel(contentsOf:)`, or
/// `NSMappingModel(from:forSourceModel:destinationModel:)`); the `CoreDataModelCodeGenerator` build plugin runs this
/// for every mapping model of a target, so that such code works unchanged. Public only for that plugin's tool and the
/// `coredata` command.
///
/// The entity migration policy class names are written as the editor holds them: Xcode's Custom Policy field is plain
/// text, which its compiler does not qualify with the module (the corpus's V2toV3.cdm keeps
/// `REPLACE_AT_RUNTIME.V2to3MakerPolicy` as typed), and OpenCoreData finds a policy class by its unqualified name in
/// any module anyway.
@_spi(ModelCompiler)
public enum MappingModelCompiler {
    /// Compiles the mapping model at `source` (an `.xcmappingmodel` folder, or the `xcmapping.xml` inside one) to the
    /// `.cdm` file `destination`, replacing what is there, and returns the compiled mapping model. Nothing is written
    /// if the mapping model does not read, names entities its models lack, or cannot be archived.
    ///
    /// The model versions come from the copies Xcode's editor embeds in the mapping model, as Xcode's compiler takes
    /// them. A mapping model without readable copies names its versions by their path in the project
    /// (`App/Model.xcdatamodeld/Model 2.xcdatamodel`): that path is looked for in the folders above the mapping model,
    /// whole and then from the model bundle on.
    @discardableResult
    public static func compile(_ source: URL, to destination: URL) throws -> NSMappingModel {
        let xml: URL
        switch source.pathExtension.lowercased() {
        case "xcmappingmodel": xml = source.appendingPathComponent("xcmapping.xml")
        case "xml": xml = source
        default:
            throw failure(source, "the file is not an Xcode mapping model (an .xcmappingmodel folder)")
        }
        let document = try XcodeMappingModelReader.document(xml)
        let mapping = document.mapping
        mapping._sourceURL = source
        if document.sourceModel == nil || document.destinationModel == nil {
            let sourceModel = try document.sourceModel ?? model(at: document.sourceModelPath, role: "source", source)
            let destinationModel =
                try document.destinationModel ?? model(at: document.destinationModelPath, role: "destination", source)
            XcodeMappingModelReader.complete(mapping, sourceModel: sourceModel, destinationModel: destinationModel)
            try validate(mapping, from: sourceModel, to: destinationModel, source)
        } else if let sourceModel = document.sourceModel, let destinationModel = document.destinationModel {
            try validate(mapping, from: sourceModel, to: destinationModel, source)
        }
        let data = try CompiledMappingModelWriter.data(for: mapping)
        do {
            try data.write(to: destination, options: .atomic)
        } catch {
            throw coreDataError(
                NSFileWriteUnknownError,
                "Cannot write the compiled mapping model \(destination.path): "
                    + error.localizedDescription,
                userInfo: [NSFilePathErrorKey: destination.path, NSUnderlyingErrorKey: error])
        }
        return mapping
    }

    /// How many folders above the mapping model a model version's path is looked for in.
    static let searchDepth = 8

    /// The model version Xcode's editor recorded at `path` (relative to the project), found in a folder above
    /// `mappingURL`.
    private static func model(at path: String?, role: String, _ mappingURL: URL) throws -> NSManagedObjectModel {
        guard let path else {
            throw failure(
                mappingURL, "it records no \(role) model version; create it again in Xcode's mapping model editor")
        }
        let components = path.split(separator: "/").map(String.init).filter { $0 != "." && $0 != ".." }
        // The whole path, then the path from the model bundle (`Model.xcdatamodeld/Model 2.xcdatamodel`) on, then
        // the version folder alone.
        var suffixes = [components]
        if let bundle = components.lastIndex(where: { $0.hasSuffix(".xcdatamodeld") }), bundle > 0 {
            suffixes.append(Array(components[bundle...]))
        }
        if components.count > 1, let last = components.last { suffixes.append([last]) }
        var directory = mappingURL.standardizedFileURL.deletingLastPathComponent()
        var tried: [String] = []
        for _ in 0..<searchDepth {
            for suffix in suffixes where !suffix.isEmpty {
                let candidate = suffix.reduce(directory) { $0.appendingPathComponent($1) }
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory) else {
                    tried.append(candidate.path)
                    continue
                }
                do {
                    let (versions, current) = try ModelFileLoader.versions(of: candidate)
                    guard let version = versions.first(where: { $0.name == current }) ?? versions.first else {
                        continue
                    }
                    return version.model
                } catch {
                    throw failure(
                        mappingURL,
                        "its \(role) model version \(candidate.path) does not load: \(error.localizedDescription)",
                        underlying: error)
                }
            }
            let parent = directory.deletingLastPathComponent()
            if parent.path == directory.path { break }
            directory = parent
        }
        throw failure(
            mappingURL,
            "it embeds no readable copy of its \(role) model version, and '\(path)' is in none of the folders above "
                + "it; save it again in Xcode's mapping model editor, or keep the model bundle where that path says "
                + "(looked for \(tried.prefix(3).joined(separator: ", "))\(tried.count > 3 ? ", …" : ""))")
    }

    /// Refuses a mapping model that could never migrate between its own model versions: entity mappings naming
    /// entities those versions lack, property mappings naming no destination property, expressions reading keys
    /// the source entity does not have.
    private static func validate(
        _ mapping: NSMappingModel, from sourceModel: NSManagedObjectModel, to destinationModel: NSManagedObjectModel,
        _ url: URL
    ) throws {
        let manager = NSMigrationManager(sourceModel: sourceModel, destinationModel: destinationModel)
        do {
            try MappingModelValidator(manager: manager, mapping: mapping).validate()
        } catch {
            throw failure(
                url,
                "it does not fit the model versions it was made between: \((error as NSError).localizedDescription)",
                underlying: error)
        }
    }

    /// An error naming the mapping model that cannot be compiled (`NSCoreDataError`, as for a mapping model that
    /// does not load).
    private static func failure(_ url: URL, _ reason: String, underlying: (any Error)? = nil) -> NSError {
        var info: [String: Any] = [NSFilePathErrorKey: url.path]
        if let underlying { info[NSUnderlyingErrorKey] = underlying }
        return coreDataError(NSCoreDataError, "Cannot compile the mapping model \(url.path): \(reason)", userInfo: info)
    }
}
