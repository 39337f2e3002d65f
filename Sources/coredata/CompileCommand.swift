import ArgumentParser
import Foundation
import OpenCoreData
@_spi(ModelCompiler) import OpenCoreDataCore

/// `coredata compile <input> --output <path>`: what Xcode's model compilers do, with the compiler the build plugin
/// runs — an `.xcdatamodeld` bundle into a `.momd` folder (an `.xcdatamodel` into a `.mom` file) as momc does, an
/// `.xcmappingmodel` into a `.cdm` file as mapc does.
///
/// ```
/// $ coredata compile Model.xcdatamodeld --output Model.momd --module App
/// $ coredata compile V1toV2.xcmappingmodel --output V1toV2.cdm
/// ```
struct CompileCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compile",
        abstract: "Compile a model (.xcdatamodeld, .xcdatamodel) or a mapping model (.xcmappingmodel), as Xcode does.",
        discussion: """
            A model bundle compiles into a .momd folder of .mom archives with its VersionInfo.plist, a single \
            version into a .mom file (or a .momd folder), a mapping model into a .cdm file: the files Xcode puts in \
            an app, which Apple's Core Data and OpenCoreData read. What is at the output is replaced only once the \
            compilation has succeeded.
            """
    )

    @Argument(help: "The model (.xcdatamodeld, .xcdatamodel) or mapping model (.xcmappingmodel).")
    var input: String

    @Option(name: [.short, .long], help: "Where to write the .momd, .mom or .cdm.")
    var output: String

    @Option(
        help: """
            The module that replaces "Current Product Module" in the model's class names (.Animal → Module.Animal), \
            as Xcode passes its target's module; models only.
            """)
    var module: String?

    func validate() throws {
        let source = (input as NSString).pathExtension.lowercased()
        let destination = (output as NSString).pathExtension.lowercased()
        switch source {
        case "xcdatamodeld":
            guard destination == "momd" else {
                throw ValidationError(
                    "A model bundle (.xcdatamodeld) compiles into a .momd folder; end --output in .momd")
            }
        case "xcdatamodel":
            guard destination == "mom" || destination == "momd" else {
                throw ValidationError("A model version (.xcdatamodel) compiles into a .mom file or a .momd folder")
            }
        case "xcmappingmodel":
            guard destination == "cdm" else {
                throw ValidationError(
                    "A mapping model (.xcmappingmodel) compiles into a .cdm file; end --output in .cdm")
            }
            guard module == nil else {
                throw ValidationError(
                    "--module applies to models only: Xcode leaves a mapping model's policy class names as written")
            }
        default:
            throw ValidationError("Give an .xcdatamodeld, .xcdatamodel or .xcmappingmodel to compile")
        }
    }

    func run() throws {
        let source = URL(fileURLWithPath: input)
        let destination = URL(fileURLWithPath: output)
        do {
            if source.pathExtension.lowercased() == "xcmappingmodel" {
                let mapping = try MappingModelCompiler.compile(source, to: destination)
                let count = mapping.entityMappings.count
                print(
                    "Compiled \(source.lastPathComponent) (\(count) entity mapping\(count == 1 ? "" : "s")) "
                        + "into \(destination.path)")
            } else {
                try ModelCompiler.compile(source, to: destination, moduleName: module)
                let versions = try NSManagedObjectModel.versionsOfModel(at: destination)
                let current = try NSManagedObjectModel.currentVersionNameOfModel(at: destination)
                let names = versions.map { $0.name == current && versions.count > 1 ? "\($0.name) (current)" : $0.name }
                print(
                    "Compiled \(source.lastPathComponent) (version\(versions.count == 1 ? "" : "s") "
                        + "\(names.joined(separator: ", "))) into \(destination.path)")
            }
        } catch let error as NSError where error.domain == NSCocoaErrorDomain {
            throw ToolFailure(message: error.localizedDescription, code: error.code)
        }
    }
}
