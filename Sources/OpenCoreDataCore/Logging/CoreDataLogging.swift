// Core Data's debug switches, as on Apple platforms: set in the environment, or given as launch arguments in the
// user-defaults form Xcode schemes use (`-com.apple.CoreData.SQLDebug 1`). They are read once, on first use; the
// framework is silent while they are off, and checks one integer before it builds any message.
//
// What is logged goes through swift-log. Apple's Core Data writes to the unified log; a program here decides where
// lines go with `LoggingSystem.bootstrap` (by default swift-log writes to standard error), or hands the framework a
// logger of its own with `CoreDataLogging.logger`.

import Foundation
import Logging
import Synchronization

/// The debug switches of Core Data and the logger their output goes to.
///
/// Launch a program with the switches as on Apple platforms:
///
/// ```sh
/// swift run App -com.apple.CoreData.SQLDebug 1            # every SQL statement and its time
/// env com.apple.CoreData.SQLDebug=3 swift run App          # …with bound values and row counts
/// OPENCOREDATA_SQL_DEBUG=4 swift run App                   # …and SQLite's query plan for each statement
/// ```
///
/// or turn them on in code:
///
/// ```swift
/// CoreDataLogging.sqlDebugLevel = 2
/// CoreDataLogging.logger = Logger(label: "com.example.app.sql")
/// ```
///
/// | Switch | Environment alias | What it does |
/// | --- | --- | --- |
/// | `com.apple.CoreData.SQLDebug` 1–4 | `OPENCOREDATA_SQL_DEBUG` | 1: each statement (`CoreData: sql: …`) and its time (`CoreData: annotation: …`); 2: bound values; 3: rows returned or changed; 4: SQLite's query plan |
/// | `com.apple.CoreData.ConcurrencyDebug` 1 | `OPENCOREDATA_CONCURRENCY_DEBUG` | a context used off its queue stops the program with a message naming the context and the call |
/// | `com.apple.CoreData.MigrationDebug` 1 | `OPENCOREDATA_MIGRATION_DEBUG` | each step of a migration on adding a store: the versions, the mapping, how it runs, its time |
public enum CoreDataLogging {
    /// The name the framework's logger is made with, unless one is set: Core Data's own subsystem.
    public static let label = "com.apple.CoreData"

    /// The level of SQL logging: 0 (off) to 4. Starts at the value of `com.apple.CoreData.SQLDebug`.
    public static var sqlDebugLevel: Int {
        get { _sqlDebugLevel.load(ordering: .relaxed) }
        set { _sqlDebugLevel.store(max(0, newValue), ordering: .relaxed) }
    }

    /// The level of migration logging: 0 (off) or more. Starts at the value of `com.apple.CoreData.MigrationDebug`.
    public static var migrationDebugLevel: Int {
        get { _migrationDebugLevel.load(ordering: .relaxed) }
        set { _migrationDebugLevel.store(max(0, newValue), ordering: .relaxed) }
    }

    /// The level of `com.apple.CoreData.ConcurrencyDebug`, fixed at launch: above 0, a context used off its queue
    /// stops the program (see ``NSManagedObjectContext``).
    public static var concurrencyDebugLevel: Int { CoreDataDebugSwitches.launch.concurrencyDebug }

    /// The logger the switches' output goes to. By default one labelled ``label`` from swift-log's
    /// `LoggingSystem` (made on the first message, so that a program's `LoggingSystem.bootstrap` at launch is
    /// used). Set it to send the output elsewhere — a test's handler, a file — whatever the process bootstrapped.
    public static var logger: Logger {
        get { _logger.withLock { logger in logger ?? Logger(label: label) } }
        set { _logger.withLock { $0 = newValue } }
    }

    /// Forgets a logger set with ``logger``: the next message goes to a logger made by `LoggingSystem` again.
    public static func resetLogger() {
        _logger.withLock { $0 = nil }
    }

    private static let _sqlDebugLevel = Atomic<Int>(CoreDataDebugSwitches.launch.sqlDebug)
    private static let _migrationDebugLevel = Atomic<Int>(CoreDataDebugSwitches.launch.migrationDebug)
    private static let _logger = LockedState<Logger?>(nil)

    /// Logs a step of a migration when `com.apple.CoreData.MigrationDebug` is on; `message` is built only then.
    @inline(__always)
    package static func migrationStep(_ message: @autoclosure () -> String) {
        guard _migrationDebugLevel.load(ordering: .relaxed) > 0 else { return }
        emit("CoreData: annotation: migration: " + message())
    }

    /// The time from `start` to `end` (nanoseconds of `DispatchTime`; `end` by default now) as Apple's log prints
    /// it, to a tenth of a millisecond.
    package static func seconds(since start: UInt64, until end: UInt64? = nil) -> String {
        let elapsed = Double((end ?? DispatchTime.now().uptimeNanoseconds) &- start) / 1_000_000_000
        return String(format: "%.4fs", elapsed)
    }

    /// Logs `message` as it is: callers check their switch first, so that nothing is built while it is off.
    package static func emit(_ message: String, level: Logger.Level = .info) {
        let logger = _logger.withLock { logger in
            if let logger { return logger }
            let made = Logger(label: label)
            logger = made
            return made
        }
        logger.log(level: level, "\(message)")
    }
}

/// The values of the debug switches the process was launched with.
package struct CoreDataDebugSwitches: Equatable, Sendable {
    package var sqlDebug = 0
    package var concurrencyDebug = 0
    package var migrationDebug = 0

    /// All switches off.
    package init() {}

    /// The switches of this process, read from its environment and arguments on first use.
    package static let launch = CoreDataDebugSwitches(
        environment: ProcessInfo.processInfo.environment, arguments: ProcessInfo.processInfo.arguments)

    /// Reads the switches from `environment` and `arguments` (the program's path first, as in
    /// `ProcessInfo.arguments`). An argument `-com.apple.CoreData.SQLDebug 2` wins over the environment, as a
    /// launch argument wins over a stored default on Apple platforms.
    package init(environment: [String: String], arguments: [String]) {
        func value(_ name: String, alias: String) -> Int {
            var found = environment[name].flatMap(Self.number) ?? environment[alias].flatMap(Self.number) ?? 0
            // Only the first argument is the program; a value may itself look like an option, so pairs are read.
            var index = 1
            while index < arguments.count {
                if arguments[index] == "-" + name, index + 1 < arguments.count {
                    found = Self.number(arguments[index + 1]) ?? found
                    index += 2
                } else {
                    index += 1
                }
            }
            return found
        }
        sqlDebug = value("com.apple.CoreData.SQLDebug", alias: "OPENCOREDATA_SQL_DEBUG")
        concurrencyDebug = value("com.apple.CoreData.ConcurrencyDebug", alias: "OPENCOREDATA_CONCURRENCY_DEBUG")
        migrationDebug = value("com.apple.CoreData.MigrationDebug", alias: "OPENCOREDATA_MIGRATION_DEBUG")
    }

    /// A switch's value as user defaults read it: a number, or YES/NO and true/false.
    static func number(_ text: String) -> Int? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let number = Int(trimmed) { return max(0, number) }
        switch trimmed.lowercased() {
        case "yes", "true": return 1
        case "no", "false": return 0
        default: return nil
        }
    }
}
