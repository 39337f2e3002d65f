@_spi(ModelCompiler) import OpenCoreDataCore

// The tool behind the CoreDataModelCodeGenerator build plugin's model compilation, as Xcode's momc:
//
//     CoreDataModelCompiler <model.xcdatamodeld> <output.momd> [--module <Module>]
//     CoreDataModelCompiler <model.xcdatamodel> <output.mom> [--module <Module>]
//
// The module replaces Xcode's "Current Product Module" in class names (`.Animal` → `Module.Animal`), as momc's.

var arguments = Array(CommandLine.arguments.dropFirst())
var moduleName: String?
if let index = arguments.firstIndex(of: "--module"), index + 1 < arguments.count {
    moduleName = arguments[index + 1]
    arguments.removeSubrange(index...(index + 1))
}
guard arguments.count == 2 else {
    FileHandle.standardError.write(
        Data("usage: CoreDataModelCompiler <model.xcdatamodeld> <output.momd> [--module <Module>]\n".utf8))
    exit(2)
}
do {
    try ModelCompiler.compile(
        URL(fileURLWithPath: arguments[0]), to: URL(fileURLWithPath: arguments[1]), moduleName: moduleName)
} catch {
    FileHandle.standardError.write(Data("error: \(arguments[0]): \(error.localizedDescription)\n".utf8))
    exit(1)
}
