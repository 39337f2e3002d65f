/// Compiles Xcode models as Xcode's model compiler (`momc`) does: an `.xcdatamodeld` bundle becomes a `.momd`
/// folder with one `<version>.mom` keyed archive per version and a `VersionInfo.plist` naming the current version
/// and recording each version's entity hashes and checksum; a single `.xcdatamodel` becomes a `.mom` file.
///
/// Code written for Apple platforms finds its model as a compiled resource
/// (`Bundle.module.url(forResource: "Model", withExtension: "momd")`); the `CoreDataModelCodeGenerator` build
/// plugin runs this for every model of a target, so that such code works unchanged. Public only for that plugin's
/// tool and the `coredata` command.
@_spi(ModelCompiler)
public enum ModelCompiler {
    /// Compiles the model at `source` (`.xcdatamodeld` or `.xcdatamodel`) to `destination` (`.momd` or `.mom`),
    /// replacing what is there. Nothing is written if the model does not load.
    ///
    /// A class name that Xcode's editor writes relative to the current module (`.Animal`, for "Current Product
    /// Module") becomes `moduleName.Animal`, as momc makes it with the module Xcode passes; without a module name it
    /// stays as written.
    public static func compile(_ source: URL, to destination: URL, moduleName: String? = nil) throws {
        let (versions, current) = try ModelFileLoader.versions(of: source)
        if let moduleName, !moduleName.isEmpty {
            for (_, model) in versions {
                for entity in model.entities {
                    if let name = entity.managedObjectClassName, name.hasPrefix(".") {
                        entity.managedObjectClassName = moduleName + name
                    }
                }
            }
        }
        let fileManager = FileManager.default
        let staging = destination.deletingLastPathComponent()
            .appendingPathComponent(".\(destination.lastPathComponent)-\(UUID().uuidString)")
        defer { try? fileManager.removeItem(at: staging) }
        if destination.pathExtension == "mom" {
            guard versions.count == 1, let only = versions.first else {
                throw ModelLoadingError.invalid(
                    url: source, "a model of \(versions.count) versions compiles to a .momd folder, not a .mom file")
            }
            try CompiledModelWriter.data(for: only.model, style: .compiledModel).write(to: staging)
        } else {
            try fileManager.createDirectory(at: staging, withIntermediateDirectories: true)
            var hashes: [String: Any] = [:]
            var checksums: [String: Any] = [:]
            for (name, model) in versions {
                let archive = try CompiledModelWriter.data(for: model, style: .compiledModel)
                try archive.write(to: staging.appendingPathComponent(name + ".mom"))
                hashes[name] = model.entityVersionHashesByName
                checksums[name] = model.versionChecksum
            }
            var info: [String: Any] = [
                "NSManagedObjectModel_VersionHashes": hashes, "NSManagedObjectModel_VersionChecksums": checksums,
            ]
            if let current { info["NSManagedObjectModel_CurrentVersionName"] = current }
            let plist = try PropertyListSerialization.data(fromPropertyList: info, format: .binary, options: 0)
            try plist.write(to: staging.appendingPathComponent("VersionInfo.plist"))
        }
        if fileManager.fileExists(atPath: destination.path) { try fileManager.removeItem(at: destination) }
        try fileManager.moveItem(at: staging, to: destination)
    }
}
