#if !canImport(CoreData)
import Foundation
import Testing

/// The README's first command: `coredata demo`.
@Suite struct DemoCommandTests {
    static var executable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("coredata")
    }

    static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: executable.path)))
    func demoRunsEndToEnd() throws {
        let (status, output) = try Self.run(["demo", "--store", "memory"])
        #expect(status == 0)
        #expect(output.contains("every employee points back: true"))
        #expect(output.contains("companies with ANY employees.firstName == \"Ostap\": [\"Horns & Hooves\"]"))
        #expect(output.contains("Company.inn: code 1680"), "the model's INN pattern")
        #expect(output.contains("Company.name: code 1570"))
        #expect(output.contains("employees after saving: 0"))
    }
}
#endif
