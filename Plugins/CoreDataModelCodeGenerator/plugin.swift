import Foundation
import PackagePlugin

/// Does for every Xcode model bundle (`.xcdatamodeld`) or model (`.xcdatamodel`) in a target's folder what Xcode
/// does when it builds one:
/// - generates the `NSManagedObject` subclasses Xcode's code generation writes (entities whose Codegen is "Class
///   Definition" or "Category/Extension"), with OpenCoreData's `@Managed` in place of `@NSManaged`;
/// - compiles the model into the target's resources as `Name.momd` (or `Name.mom`), as Xcode's model compiler does,
///   so that code finding its model with `Bundle.module.url(forResource: "Name", withExtension: "momd")` works.
///
/// and for every mapping model (`.xcmappingmodel`) what Xcode's mapping model compiler does: compiles it into the
/// target's resources as `Name.cdm`, found with `Bundle.module.url(forResource: "Name", withExtension: "cdm")` or by
/// `NSMappingModel(from:forSourceModel:destinationModel:)`. Its Custom Policy class names stay as written, as Xcode
/// leaves them (type the module name there, or none: OpenCoreData finds a policy class by its name in any module).
///
/// ```swift
/// .executableTarget(
///     name: "App",
///     dependencies: [.product(name: "OpenCoreData", package: "OpenCoreData")],
///     resources: [.copy("Company.xcdatamodeld")],
///     plugins: [.plugin(name: "CoreDataModelCodeGenerator", package: "OpenCoreData")]
/// )
/// ```
@main
struct CoreDataModelCodeGenerator: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let generator = try context.tool(named: "CoreDataModelGenerator")
        let compiler = try context.tool(named: "CoreDataModelCompiler")
        let models = Self.models(in: target.directoryURL)
        // A mapping model whose editor copies of its model versions do not read is compiled against the versions
        // themselves, so that every model file of the target is an input.
        let modelFiles = models.flatMap { Self.files(in: $0) }
        let mappingCommands = Self.mappingModels(in: target.directoryURL).map { mapping -> Command in
            let compiled = context.pluginWorkDirectoryURL.appendingPathComponent(
                mapping.deletingPathExtension().lastPathComponent + ".cdm")
            return .buildCommand(
                displayName: "Compiling Core Data mapping model \(mapping.lastPathComponent)",
                executable: compiler.url,
                arguments: [mapping.path, compiled.path],
                inputFiles: Self.files(in: mapping) + modelFiles,
                outputFiles: [compiled])
        }
        let modelCommands = models.flatMap { model -> [Command] in
            let name = model.deletingPathExtension().lastPathComponent
            let source = context.pluginWorkDirectoryURL.appendingPathComponent("\(name)+CoreDataModel.swift")
            let compiled = context.pluginWorkDirectoryURL.appendingPathComponent(
                name + (model.pathExtension == "xcdatamodeld" ? ".momd" : ".mom"))
            return [
                .buildCommand(
                    displayName: "Generating Core Data classes from \(model.lastPathComponent)",
                    executable: generator.url,
                    arguments: [model.path, "--output", source.path],
                    inputFiles: Self.files(in: model),
                    outputFiles: [source]),
                // Outputs that are not sources become resources of the target.
                .buildCommand(
                    displayName: "Compiling Core Data model \(model.lastPathComponent)",
                    executable: compiler.url,
                    arguments: [model.path, compiled.path, "--module", target.moduleName],
                    inputFiles: Self.files(in: model),
                    outputFiles: [compiled]),
            ]
        }
        return modelCommands + mappingCommands
    }

    /// The model bundles and stand-alone model versions under `directory`.
    static func models(in directory: URL) -> [URL] {
        folders(withExtensions: ["xcdatamodeld", "xcdatamodel"], in: directory)
    }

    /// The mapping models under `directory`.
    static func mappingModels(in directory: URL) -> [URL] {
        folders(withExtensions: ["xcmappingmodel"], in: directory)
    }

    /// The folders under `directory` with one of `extensions`, not looking inside any model or mapping model.
    static func folders(withExtensions extensions: Set<String>, in directory: URL) -> [URL] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return [] }
        var result: [URL] = []
        for name in names.sorted() where !name.hasPrefix(".") {
            let url = directory.appendingPathComponent(name)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue
            else { continue }
            if extensions.contains(url.pathExtension) {
                result.append(url)
            } else if !["xcdatamodeld", "xcdatamodel", "xcmappingmodel"].contains(url.pathExtension) {
                result += folders(withExtensions: extensions, in: url)
            }
        }
        return result
    }

    /// The files of a model, whose changes must regenerate its code.
    static func files(in model: URL) -> [URL] {
        guard let enumerator = FileManager.default.enumerator(at: model, includingPropertiesForKeys: nil) else {
            return []
        }
        var result: [URL] = []
        for case let url as URL in enumerator {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue {
                result.append(url)
            }
        }
        return result.sorted { $0.path < $1.path }
    }
}
