import Foundation

/// The `coredata` tool built beside the test bundle, run as a user runs it.
enum CoreDataTool {
    struct Missing: Error, CustomStringConvertible {
        var description: String { "the coredata tool is not built beside the tests; run swift build --build-tests" }
    }

    static var url: URL? {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<3 {
            let candidate = directory.appendingPathComponent("coredata")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory.deleteLastPathComponent()
        }
        return nil
    }

    /// Runs the tool with `arguments`; its exit status and what it printed, standard output and error together.
    static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        guard let tool = url else { throw Missing() }
        let process = Process()
        process.executableURL = tool
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }
}
