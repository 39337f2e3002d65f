// The debug switches log through swift-log, which Apple's Core Data does not: these tests are OpenCoreData's own.
#if !canImport(CoreData)

import Foundation
import OpenCoreData
import Logging
import Testing

/// A swift-log handler that keeps the messages it is given, for tests to read.
final class CapturingLogHandler: LogHandler, @unchecked Sendable {
    // @unchecked: `messages` is a reference to a locked box; the other properties are values per handler copy.
    final class Messages: @unchecked Sendable {
        /// Each line with the thread that logged it.
        private var lines: [(thread: ObjectIdentifier, line: String)] = []
        private let lock = NSLock()
        func append(_ line: String) {
            let thread = ObjectIdentifier(Thread.current)
            lock.withLock { lines.append((thread, line)) }
        }
        var all: [String] { lock.withLock { lines.map(\.line) } }

        /// The lines of the threads that logged a line containing `text`: a statement and the lines about it come
        /// from one thread, and other suites' statements, logged on other threads at the same time, stay out.
        func ofThreadsLogging(_ text: String) -> [String] {
            lock.withLock {
                let threads = Set(lines.filter { $0.line.contains(text) }.map(\.thread))
                return lines.filter { threads.contains($0.thread) }.map(\.line)
            }
        }
    }

    let messages: Messages
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    init(_ messages: Messages) { self.messages = messages }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        messages.append(event.message.description)
    }
}

/// `com.apple.CoreData.SQLDebug` 1–4 and `com.apple.CoreData.MigrationDebug`: the lines each level logs, through the
/// logger set with `CoreDataLogging.logger` (the test's handler; `LoggingSystem.bootstrap` can run once a process).
///
/// The levels are process-wide, so the suite runs its tests one at a time; statements of other suites running beside
/// it are logged too, so each test looks only at lines about its own table, `ZSQLDEBUGPROBE`, logged by the threads
/// that logged its statements (another suite's annotation line could otherwise fall between a statement and its own).
@Suite(.serialized) struct SQLDebugLoggingTests {
    static func model() -> NSManagedObjectModel {
        let probe = NSEntityDescription()
        probe.name = "SQLDebugProbe"
        let name = NSAttributeDescription()
        name.name = "name"
        name.attributeType = .stringAttributeType
        let rank = NSAttributeDescription()
        rank.name = "rank"
        rank.attributeType = .integer64AttributeType
        probe.properties = [name, rank]
        let model = NSManagedObjectModel()
        model.entities = [probe]
        return model
    }

    /// Saves three probes ("Ada", "Grace" and "Linus", each with `token`), then fetches the first by name, with SQL logging at
    /// `level`; returns the lines logged, from the fetch on only if `fetchOnly`.
    static func run(level: Int, token: String, fetchOnly: Bool = false) throws -> [String] {
        let directory = SQLiteTestDirectory()
        let messages = CapturingLogHandler.Messages()
        CoreDataLogging.logger = Logger(label: "test") { _ in CapturingLogHandler(messages) }
        defer {
            CoreDataLogging.sqlDebugLevel = 0
            CoreDataLogging.resetLogger()
        }
        let coordinator = try SQLiteStack.coordinator(model(), at: directory.store())
        defer { try? SQLiteStack.close(coordinator) }
        let context = SQLiteStack.context(coordinator)
        if !fetchOnly { CoreDataLogging.sqlDebugLevel = level }
        try context.performAndWait {
            for (index, name) in ["Ada", "Grace", "Linus"].enumerated() {
                let probe = NSEntityDescription.insertNewObject(forEntityName: "SQLDebugProbe", into: context)
                probe.setValue("\(name) \(token)", forKey: "name")
                // Linus has no rank: a NULL is bound.
                if index < 2 { probe.setValue(index + 1, forKey: "rank") }
            }
            try context.save()
            context.reset()
            CoreDataLogging.sqlDebugLevel = level
            let request = NSFetchRequest<NSManagedObject>(entityName: "SQLDebugProbe")
            request.predicate = NSPredicate(format: "name == %@", "Ada \(token)")
            let found = try context.fetch(request)
            #expect(found.count == 1)
        }
        CoreDataLogging.sqlDebugLevel = 0
        return messages.ofThreadsLogging("ZSQLDEBUGPROBE")
    }

    /// The lines about the probe's table, and the annotation lines that follow each of them.
    static func ownLines(_ lines: [String], token: String) -> [String] {
        var own: [String] = []
        var following = false
        for line in lines {
            if line.hasPrefix("CoreData: sql: ") {
                following = line.contains("ZSQLDEBUGPROBE")
            }
            if following || line.contains(token) { own.append(line) }
        }
        return own
    }

    @Test func levelZeroLogsNothing() throws {
        let token = UUID().uuidString
        let lines = try Self.run(level: 0, token: token)
        #expect(!lines.contains { $0.contains("ZSQLDEBUGPROBE") || $0.contains(token) }, "\(lines)")
    }

    @Test func levelOneLogsEachStatementAndItsTime() throws {
        let token = UUID().uuidString
        let lines = Self.ownLines(try Self.run(level: 1, token: token), token: token)
        let select = lines.firstIndex {
            $0.hasPrefix("CoreData: sql: SELECT ") && $0.contains("FROM ZSQLDEBUGPROBE t0 WHERE")
                && $0.contains("ZNAME = ?")
        }
        let index = try #require(select, "\(lines)")
        #expect(lines[index + 1].hasPrefix("CoreData: annotation: sql connection fetch time: "), "\(lines)")
        #expect(lines[index + 1].hasSuffix("s"))
        // The save: an insert per object, each with its execution time.
        #expect(lines.filter { $0.hasPrefix("CoreData: sql: INSERT INTO ZSQLDEBUGPROBE") }.count == 3, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("CoreData: annotation: sql execution time: ") })
        // No values below level 2: they may be private.
        #expect(!lines.contains { $0.contains(token) }, "\(lines)")
        #expect(!lines.contains { $0.hasPrefix("CoreData: details:") })
    }

    /// A save that meets no conflict runs in its transaction alone, though its context has a merge policy: a
    /// savepoint would have SQLite keep the original of every page the save changes in a statement journal (a
    /// temporary file, for a large save).
    @Test func aSaveWithoutConflictsOpensNoSavepoint() throws {
        let token = UUID().uuidString
        let lines = try Self.run(level: 1, token: token)
        let insert = try #require(
            lines.firstIndex { $0.hasPrefix("CoreData: sql: INSERT INTO ZSQLDEBUGPROBE") }, "\(lines)")
        let begin = try #require(lines[..<insert].lastIndex(of: "CoreData: sql: BEGIN IMMEDIATE"), "\(lines)")
        let commit = try #require(lines[insert...].firstIndex(of: "CoreData: sql: COMMIT"), "\(lines)")
        let save = lines[begin...commit]
        #expect(!save.contains { $0.contains("SAVEPOINT") || $0.contains("RELEASE") }, "\(save)")
    }

    @Test func levelTwoAddsTheBoundValues() throws {
        let token = UUID().uuidString
        let lines = Self.ownLines(try Self.run(level: 2, token: token), token: token)
        let select = try #require(
            lines.firstIndex { $0.hasPrefix("CoreData: sql: SELECT ") && $0.contains("ZSQLDEBUGPROBE") }, "\(lines)")
        #expect(lines[select + 1] == "CoreData: details: SQLite bind[0] = \"Ada \(token)\"", "\(lines)")
        // The inserts' values: the rank is bound as an integer.
        #expect(lines.contains { $0.hasPrefix("CoreData: details: SQLite bind[") && $0.hasSuffix("= 2") }, "\(lines)")
        #expect(lines.contains { $0.contains("\"Grace \(token)\"") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("CoreData: details: SQLite bind[") && $0.hasSuffix("= nil") }, "\(lines)")
        #expect(!lines.contains { $0.contains("returned") })
    }

    @Test func levelThreeAddsRowCounts() throws {
        let token = UUID().uuidString
        let lines = Self.ownLines(try Self.run(level: 3, token: token), token: token)
        #expect(
            lines.contains {
                $0.hasPrefix("CoreData: annotation: fetch using NSSQLiteStatement <0x")
                    && $0.contains("with sql text 'SELECT ") && $0.hasSuffix("' returned 1 rows")
            }, "\(lines)")
        #expect(lines.contains("CoreData: annotation: sql statement changed 1 rows"), "\(lines)")
        #expect(!lines.contains { $0.contains("EXPLAIN QUERY PLAN") })
    }

    @Test func levelFourAddsSQLitesQueryPlan() throws {
        let token = UUID().uuidString
        let lines = Self.ownLines(try Self.run(level: 4, token: token, fetchOnly: true), token: token)
        let select = try #require(
            lines.firstIndex { $0.hasPrefix("CoreData: sql: SELECT ") && $0.contains("ZSQLDEBUGPROBE") }, "\(lines)")
        let sql = lines[select].dropFirst("CoreData: sql: ".count)
        let explain = try #require(lines.firstIndex(of: "CoreData: details: SQLite: EXPLAIN QUERY PLAN \(sql)"))
        // No index on ZNAME: SQLite scans the table.
        #expect(lines[explain + 1].hasPrefix("CoreData: details: SQLite: "), "\(lines)")
        #expect(lines[explain + 1].contains("SCAN"), "\(lines)")
        #expect(lines.contains { $0.hasPrefix("CoreData: annotation: sql connection fetch time: ") })
    }

    @Test func migrationDebugLogsTheSteps() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let first = Self.model()
        let coordinator = try SQLiteStack.coordinator(first, at: url)
        try SQLiteStack.close(coordinator)
        let second = Self.model()
        let note = NSAttributeDescription()
        note.name = "note"
        note.attributeType = .stringAttributeType
        second.entities[0].properties.append(note)

        let messages = CapturingLogHandler.Messages()
        CoreDataLogging.logger = Logger(label: "test") { _ in CapturingLogHandler(messages) }
        CoreDataLogging.migrationDebugLevel = 1
        defer {
            CoreDataLogging.migrationDebugLevel = 0
            CoreDataLogging.resetLogger()
        }
        let migrated = try SQLiteStack.coordinator(
            second, at: url,
            options: [NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true])
        try SQLiteStack.close(migrated)
        let lines = messages.all.filter { $0.contains(url.path) || $0.hasPrefix("CoreData: annotation: migration:") }
        #expect(lines.contains { $0.contains("inferring a mapping model") }, "\(lines)")
        #expect(lines.contains { $0.contains("migrating the store at \(url.path) with 1 entity mappings (inferred)") })
        #expect(lines.contains { $0.hasPrefix("CoreData: annotation: migration: migrated in place with SQL in ") })
    }

    @Test func switchesAreReadFromTheEnvironmentAndLaunchArguments() {
        #expect(CoreDataDebugSwitches(environment: [:], arguments: ["app"]) == CoreDataDebugSwitches())
        let fromEnvironment = CoreDataDebugSwitches(
            environment: ["com.apple.CoreData.SQLDebug": "3", "OPENCOREDATA_MIGRATION_DEBUG": "YES"],
            arguments: ["app"])
        #expect(fromEnvironment.sqlDebug == 3)
        #expect(fromEnvironment.migrationDebug == 1)
        #expect(fromEnvironment.concurrencyDebug == 0)
        // Apple's launch-argument form, which wins over the environment.
        let fromArguments = CoreDataDebugSwitches(
            environment: ["com.apple.CoreData.SQLDebug": "3"],
            arguments: [
                "app", "-com.apple.CoreData.SQLDebug", "1", "-com.apple.CoreData.ConcurrencyDebug", "1", "input.txt",
            ])
        #expect(fromArguments.sqlDebug == 1)
        #expect(fromArguments.concurrencyDebug == 1)
        // The program's own path and a switch without a value are not switches.
        #expect(CoreDataDebugSwitches(environment: [:], arguments: ["-com.apple.CoreData.SQLDebug"]).sqlDebug == 0)
        #expect(
            CoreDataDebugSwitches(environment: [:], arguments: ["app", "-com.apple.CoreData.SQLDebug"]).sqlDebug == 0)
    }

    @Test func theEnvironmentVariableTurnsTheLogOnThroughSwiftLogsDefaultHandler() async throws {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            // As launching with the variable set does; the switch is read once, on first use.
            setenv("com.apple.CoreData.SQLDebug", "2", 1)
            let directory = SQLiteTestDirectory()
            let coordinator = try SQLiteStack.coordinator(SQLDebugLoggingTests.model(), at: directory.store())
            let context = SQLiteStack.context(coordinator)
            try context.performAndWait {
                let request = NSFetchRequest<NSManagedObject>(entityName: "SQLDebugProbe")
                request.predicate = NSPredicate(format: "rank > %d", 41)
                _ = try context.fetch(request)
            }
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("CoreData: sql: SELECT "), "\(output)")
        #expect(output.contains("CoreData: details: SQLite bind[0] = 41"), "\(output)")
        #expect(output.contains("CoreData: annotation: sql connection fetch time: "), "\(output)")
    }
}

#endif
