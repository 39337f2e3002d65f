@_spi(ModelCompiler) import OpenCoreDataCore

// The tool behind the CoreDataModelCodeGenerator build plugin's model compilation, as Xcode's momc:
//
//     CoreDataModelCompiler <model.xcdatamodeld> <output.momd>
//     CoreDataModelCompiler <model.xcdatamodel> <output.mom>

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: CoreDataModelCompiler <model.xcdatamodeld> <output.momd>\n".utf8))
    exit(2)
}
do {
    try ModelCompiler.compile(URL(fileURLWithPath: arguments[0]), to: URL(fileURLWithPath: arguments[1]))
} catch {
    FileHandle.standardError.write(Data("error: \(arguments[0]): \(error.localizedDescription)\n".utf8))
    exit(1)
}
