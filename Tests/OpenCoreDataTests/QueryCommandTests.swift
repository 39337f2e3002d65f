// Tests of the coredata tool: they do not build against Apple's Core Data.
#if !canImport(CoreData)

import Foundation
import OpenCoreData
import Testing

/// `coredata query`, `coredata explain` and `coredata check`, run as a user runs them: the built tool on a store the
/// test writes, and on a copy of a store Apple's Core Data wrote.
@Suite struct QueryCommandTests {
    /// A store of the Inventory model's first version, and the model bundle (whose current version is the second).
    static func inventory(in directory: SQLiteTestDirectory) throws -> (store: URL, bundle: URL) {
        let bundle = try MigrateCommandTests.inventoryBundle(in: directory)
        let store = try MigrateCommandTests.inventoryStore(
            [("BOX-1", 3), ("CUP-22", 7), ("PEN, blue", 12), ("MUG \"big\"", 7)], bundle: bundle, in: directory)
        return (store, bundle)
    }

    @Test func queryPrintsAnAlignedTableThroughTheFetchPath() throws {
        let directory = SQLiteTestDirectory()
        let (store, bundle) = try Self.inventory(in: directory)
        let before = MigrationCorpus.contents(of: store)
        let (status, output) = try CoreDataTool.run([
            "query", store.path, "--model", bundle.path, "--entity", "Item", "--predicate", "quantity >= 7",
            "--sort", "quantity:desc", "--sort", "name",
        ])
        #expect(status == 0, "\(output)")
        // Piped, so no colour; names to the left, numbers to the right.
        #expect(
            output == """
                name       quantity
                ---------  --------
                PEN, blue        12
                CUP-22            7
                MUG "big"         7
                (3 objects)

                """, "\(output)")
        // Read-only: the store is as it was (the model's current version would have migrated it).
        #expect(MigrationCorpus.contents(of: store) == before)
    }

    @Test func queryWritesCSVAndJSON() throws {
        let directory = SQLiteTestDirectory()
        let (store, bundle) = try Self.inventory(in: directory)
        let common = ["query", store.path, "--model", bundle.path, "--entity", "Item", "--sort", "name"]
        let csv = try CoreDataTool.run(common + ["--predicate", "name CONTAINS ' '", "--format", "csv"])
        #expect(csv.status == 0, "\(csv.output)")
        #expect(csv.output == "name,quantity\r\n\"MUG \"\"big\"\"\",7\r\n\"PEN, blue\",12\r\n", "\(csv.output)")

        let json = try CoreDataTool.run(common + ["--limit", "2", "--format", "json"])
        #expect(json.status == 0, "\(json.output)")
        let parsed = try #require(
            try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [[String: Any]], "\(json.output)")
        #expect(parsed.map { $0["name"] as? String } == ["BOX-1", "CUP-22"])
        #expect(parsed.map { ($0["quantity"] as? NSNumber)?.intValue } == [3, 7])
        let objectID = try #require(parsed.first?["objectID"] as? String)
        #expect(objectID.hasPrefix("x-coredata://") && objectID.contains("/Item/p"), "\(objectID)")
    }

    @Test func queryReportsMistakesAsAPersonCanActOnThem() throws {
        let directory = SQLiteTestDirectory()
        let (store, bundle) = try Self.inventory(in: directory)
        let common = ["query", store.path, "--model", bundle.path]
        let badPredicate = try CoreDataTool.run(common + ["--entity", "Item", "--predicate", "quantity >>> 3"])
        #expect(badPredicate.status != 0)
        #expect(badPredicate.output.contains("--predicate"), "\(badPredicate.output)")
        let badEntity = try CoreDataTool.run(common + ["--entity", "Itme"])
        #expect(badEntity.status != 0)
        #expect(badEntity.output.contains("no entity 'Itme'"), "\(badEntity.output)")
        #expect(badEntity.output.contains("Item"))
        let badSort = try CoreDataTool.run(common + ["--entity", "Item", "--sort", "price:sideways"])
        #expect(badSort.status != 0)
        #expect(badSort.output.contains("--sort price:sideways"), "\(badSort.output)")
    }

    @Test func appleDebugLaunchArgumentsTurnOnTheSQLLog() throws {
        let directory = SQLiteTestDirectory()
        let (store, bundle) = try Self.inventory(in: directory)
        let (status, output) = try CoreDataTool.run([
            "query", store.path, "--model", bundle.path, "--entity", "Item", "--predicate", "name == 'BOX-1'",
            "-com.apple.CoreData.SQLDebug", "2", "--format", "csv",
        ])
        #expect(status == 0, "\(output)")
        let lines = output.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.contains("CoreData: sql: SELECT ") && $0.contains("FROM ZITEM t0") }, "\(output)")
        #expect(lines.contains { $0.hasSuffix("CoreData: details: SQLite bind[0] = \"BOX-1\"") }, "\(output)")
        #expect(lines.contains { $0.contains("CoreData: annotation: sql connection fetch time: ") })
        #expect(output.contains("name,quantity\r\nBOX-1,3\r\n"), "\(output)")
    }

    @Test func explainPrintsTheStoresSQLAndSQLitesPlan() throws {
        let directory = SQLiteTestDirectory()
        let (store, bundle) = try Self.inventory(in: directory)
        let (status, output) = try CoreDataTool.run([
            "explain", store.path, "--model", bundle.path, "--entity", "Item", "--predicate", "name == 'CUP-22'",
            "--sort", "quantity:desc", "--limit", "5",
        ])
        #expect(status == 0, "\(output)")
        let lines = output.split(separator: "\n").map(String.init)
        #expect(lines.first == "SQL:")
        let sql = try #require(lines.dropFirst().first)
        #expect(sql.hasPrefix("  SELECT "), "\(output)")
        #expect(sql.contains("FROM ZITEM t0 WHERE"), "\(output)")
        #expect(sql.contains("ORDER BY t0.ZQUANTITY DESC"), "\(output)")
        #expect(sql.contains("LIMIT"), "\(output)")
        // The value is bound, never in the SQL.
        #expect(!sql.contains("CUP-22"))
        #expect(lines.contains("  bind[0] = \"CUP-22\""), "\(output)")
        let plan = try #require(lines.firstIndex(of: "Query plan:"))
        #expect(lines[(plan + 1)...].contains { $0.contains("SCAN t0") }, "\(output)")
    }

    @Test func checkFindsASoundStoreThatNeedsMigrating() throws {
        let directory = SQLiteTestDirectory()
        let (store, bundle) = try Self.inventory(in: directory)
        let plain = try CoreDataTool.run(["check", store.path])
        #expect(plain.status == 0, "\(plain.output)")
        #expect(plain.output == "Store: \(store.path)\nIntegrity: ok\nOK\n", "\(plain.output)")

        let (status, output) = try CoreDataTool.run(["check", store.path, "--model", bundle.path])
        #expect(status == 1, "\(output)")
        let lines = output.split(separator: "\n").map(String.init)
        #expect(lines.contains("Model: Inventory.xcdatamodeld, current version Inventory 2"), "\(output)")
        #expect(
            lines.contains(
                "Compatibility: the store was made with version Inventory; it needs migrating to Inventory 2 "
                    + "(coredata migrate)"), "\(output)")
        #expect(lines.contains { $0.hasPrefix("  Item: version hash ") }, "\(output)")
        #expect(lines.contains("  Warehouse: in the model, not in the store"), "\(output)")
        #expect(lines.last == "3 problems found" || lines.last == "2 problems found", "\(output)")
    }

    @Test func checkFindsADamagedFile() throws {
        let directory = SQLiteTestDirectory()
        let (store, _) = try Self.inventory(in: directory)
        // Damage the table's pages but not the header, so that the file still opens as a database.
        var bytes = try Data(contentsOf: store)
        let pageSize = Int(bytes[16]) << 8 | Int(bytes[17])
        #expect(bytes.count >= 3 * pageSize)
        for offset in (bytes.count - pageSize + 8)..<bytes.count { bytes[offset] = 0xA5 }
        try bytes.write(to: store)
        let (status, output) = try CoreDataTool.run(["check", store.path])
        #expect(status != 0, "\(output)")
        #expect(!output.contains("Integrity: ok"), "\(output)")
    }

    /// Runs the tool on a terminal (util-linux's `script` gives it one) with `environment` added; what it printed.
    static func runOnATerminal(_ arguments: [String], environment: [String: String]) throws -> String {
        let tool = try #require(CoreDataTool.url)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        let command = ([tool.path] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        process.arguments = ["-qec", command.joined(separator: " "), "/dev/null"]
        var merged = ProcessInfo.processInfo.environment
        merged["NO_COLOR"] = nil
        merged.merge(environment) { _, new in new }
        process.environment = merged
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: output, as: UTF8.self)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script")))
    func colourOnlyOnATerminalWithoutNoColor() throws {
        let directory = SQLiteTestDirectory()
        let (store, bundle) = try Self.inventory(in: directory)
        let query = ["query", store.path, "--model", bundle.path, "--entity", "Item", "--limit", "1"]
        let coloured = try Self.runOnATerminal(query, environment: ["TERM": "xterm"])
        #expect(coloured.contains("\u{1B}[1mname\u{1B}[0m"), "\(coloured)")
        let plain = try Self.runOnATerminal(query, environment: ["TERM": "xterm", "NO_COLOR": "1"])
        #expect(!plain.contains("\u{1B}["), "\(plain)")
        #expect(plain.contains("name"), "\(plain)")
        // Piped (CoreDataTool's pipe), no colour either.
        #expect(!(try CoreDataTool.run(query)).output.contains("\u{1B}["))
    }

    @Test(.enabled(if: SQLiteCorpus.isAvailable)) func queriesAStoreWrittenByApplesCoreData() throws {
        let directory = SQLiteTestDirectory()
        let store = try directory.copyCorpusStore(
            "stores/magicalpanda__MagicalRecord/Samples/iOS/Resources/RecipeData/Recipes.sqlite")
        let bundle = SQLiteCorpus.root.appendingPathComponent(
            "stores/magicalpanda__MagicalRecord/Samples/iOS/Application/Models/Recipes.xcdatamodeld")
        let check = try CoreDataTool.run(["check", store.path])
        #expect(check.status == 0, "\(check.output)")
        let (status, output) = try CoreDataTool.run([
            "query", store.path, "--model", bundle.path, "--entity", "Recipe", "--sort", "name", "--limit", "3",
            "--format", "csv",
        ])
        #expect(status == 0, "\(output)")
        let lines = output.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        #expect(lines.count == 4, "\(output)")
        #expect(lines.first?.split(separator: ",").contains("name") == true, "\(output)")
    }
}

#endif
