@_spi(ModelCompiler) import OpenCoreDataCore

// The tool behind the CoreDataModelCodeGenerator build plugin's compilation of models and mapping models, as Xcode's
// momc and mapc:
//
//     CoreDataModelCompiler <model.xcdatamodeld> <output.momd> [--module <Module>]
//     CoreDataModelCompiler <model.xcdatamodel> <output.mom> [--module <Module>]
//     CoreDataModelCompiler <mapping.xcmappingmodel> <output.cdm>
//
// The module replaces Xcode's "Current Product Module" in a model's class names (`.Animal` → `Module.Animal`), as
// momc's. Mapping models keep their policy class names as written, as mapc does.

var arguments = Array(CommandLine.arguments.dropFirst())
var moduleName: String?
if let index = arguments.firstIndex(of: "--module"), index + 1 < arguments.count {
    moduleName = arguments[index + 1]
    arguments.removeSubrange(index...(index + 1))
}
guard arguments.count == 2 else {
    FileHandle.standardError.write(
        Data(
            """
            usage: CoreDataModelCompiler <model.xcdatamodeld> <output.momd> [--module <Module>]
                   CoreDataModelCompiler <mapping.xcmappingmodel> <output.cdm>

            """.utf8))
    exit(2)
}
do {
    let source = URL(fileURLWithPath: arguments[0])
    let destination = URL(fileURLWithPath: arguments[1])
    if source.pathExtension.lowercased() == "xcmappingmodel" {
        try MappingModelCompiler.compile(source, to: destination)
    } else {
        try ModelCompiler.compile(source, to: destination, moduleName: moduleName)
    }
} catch {
    FileHandle.standardError.write(Data("error: \(arguments[0]): \(error.localizedDescription)\n".utf8))
    exit(1)
}
