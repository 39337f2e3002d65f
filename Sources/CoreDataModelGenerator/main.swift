import Foundation
import XCDataModelFormat

// The tool behind the CoreDataModelCodeGenerator build plugin: reads one model (an .xcdatamodeld bundle, its
// current version, or an .xcdatamodel) and writes the Swift classes Xcode's code generation would write.
//
//     CoreDataModelGenerator <model> --output <file.swift> [--module OpenCoreData] [--access public]

struct Invocation {
    var model: URL
    var output: URL
    var options = XCDataModel.SwiftCodeOptions()
}

func parse(_ arguments: [String]) -> Invocation? {
    var model: URL?
    var output: URL?
    var options = XCDataModel.SwiftCodeOptions()
    var index = 0
    while index < arguments.count {
        let argument = arguments[index]
        let value = index + 1 < arguments.count ? arguments[index + 1] : nil
        switch argument {
        case "--output":
            guard let value else { return nil }
            output = URL(fileURLWithPath: value)
            index += 2
        case "--module":
            guard let value else { return nil }
            options.importedModule = value
            index += 2
        case "--access":
            guard let value, ["public", "internal", "package"].contains(value) else { return nil }
            options.accessLevel = value
            index += 2
        default:
            guard model == nil, !argument.hasPrefix("--") else { return nil }
            model = URL(fileURLWithPath: argument)
            index += 1
        }
    }
    guard let model, let output else { return nil }
    return Invocation(model: model, output: output, options: options)
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("error: \(message)\n".utf8))
    exit(1)
}

guard let invocation = parse(Array(CommandLine.arguments.dropFirst())) else {
    fail("usage: CoreDataModelGenerator <model.xcdatamodeld> --output <file.swift> [--module M] [--access public]")
}

let source: String
do {
    let version: XCDataModel
    if invocation.model.pathExtension == "xcdatamodeld" {
        version = try XCDataModelBundle(contentsOf: invocation.model).currentVersion()
    } else {
        version = try XCDataModel(contentsOf: invocation.model)
    }
    source = version.swiftSource(options: invocation.options)
} catch {
    // The format SwiftPM and Xcode show as a diagnostic at the file and line.
    let location = error.line.map { "\(error.url.path):\($0): " } ?? "\(error.url.path): "
    fail("\(location)\(error.description)")
}

do {
    try FileManager.default.createDirectory(
        at: invocation.output.deletingLastPathComponent(), withIntermediateDirectories: true)
    // Unchanged output keeps its date, so that the build does not recompile the generated file.
    if let existing = try? String(contentsOf: invocation.output, encoding: .utf8), existing == source {
        exit(0)
    }
    try source.write(to: invocation.output, atomically: true, encoding: .utf8)
} catch {
    fail("cannot write \(invocation.output.path): \(error.localizedDescription)")
}
