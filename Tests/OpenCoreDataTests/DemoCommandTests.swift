#if !canImport(CoreData)
import Foundation
import Testing

/// The README's first command: `coredata demo`.
@Suite struct DemoCommandTests {
    @Test(.enabled(if: CoreDataTool.url != nil))
    func demoRunsEndToEnd() throws {
        let (status, output) = try CoreDataTool.run(["demo", "--store", "memory"])
        #expect(status == 0)
        #expect(output.contains("every employee points back: true"))
        #expect(output.contains("companies with ANY employees.firstName == \"Ostap\": [\"Horns & Hooves\"]"))
        #expect(output.contains("Company.inn: code 1680"), "the model's INN pattern")
        #expect(output.contains("Company.name: code 1570"))
        #expect(output.contains("employees after saving: 0"))
    }
}
#endif
