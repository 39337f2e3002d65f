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

    /// Starts the tool with `arguments`, reads what it prints until `until` says to stop — true to kill it there
    /// with SIGKILL, as a user's `kill -9` or a power cut would stop it — and waits for it to end. Returns how it
    /// ended (the signal, when killed) and what it printed.
    static func run(
        _ arguments: [String], killWhen until: (String) -> Bool
    ) throws -> (killed: Bool, status: Int32, output: String) {
        guard let tool = url else { throw Missing() }
        let process = Process()
        process.executableURL = tool
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        var output = Data()
        while true {
            let chunk = pipe.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            output += chunk
            if until(String(decoding: output, as: UTF8.self)) {
                kill(process.processIdentifier, SIGKILL)
                break
            }
        }
        output += pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (
            process.terminationReason == .uncaughtSignal, process.terminationStatus,
            String(decoding: output, as: UTF8.self)
        )
    }
}
