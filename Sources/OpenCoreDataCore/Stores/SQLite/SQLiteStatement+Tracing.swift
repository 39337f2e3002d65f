import CSQLite
import Foundation

// `com.apple.CoreData.SQLDebug`: what each execution of a statement logs, in the shape of Apple's lines.
//
//     CoreData: sql: SELECT t0.Z_PK, t0.Z_ENT, t0.Z_OPT, t0.ZNAME FROM ZPERSON t0 WHERE t0.ZNAME = ?
//     CoreData: details: SQLite bind[0] = "Ada"                                    (level 2 and up)
//     CoreData: details: SQLite: EXPLAIN QUERY PLAN SELECT …                       (level 4)
//     CoreData: details: SQLite: 2 0 0 SCAN t0
//     CoreData: annotation: sql connection fetch time: 0.0001s
//     CoreData: annotation: fetch using NSSQLiteStatement <0x…> with sql text '…' returned 1 rows   (level 3 and up)
//
// An execution begins when the statement is made, reset or rewound while the switch is on, logs its SQL on its
// first step (once its values are bound), and ends when SQLite says it is done, or when it is reset, rewound or
// finalized before that (a fetch that wanted one row).

/// What SQL debug logging gathers of one execution of a statement.
final class SQLiteStatementTrace {
    let level: Int
    /// The values bound since the execution began, by parameter index (from 1).
    private(set) var bindings: [(index: Int32, value: SQLiteValue)] = []
    /// When the first step began and the last one ended (nanoseconds of `DispatchTime`); `nil` until then. A
    /// statement left before it is done ends when it is next reset, maybe much later: its time is up to its last step.
    var started: UInt64?
    var lastStepped: UInt64?
    var rows = 0

    init(level: Int) { self.level = level }

    /// Whether `com.apple.CoreData.SQLDebug` is on: one atomic load, all that a statement costs while it is off.
    @inline(__always)
    static var isOn: Bool { CoreDataLogging.sqlDebugLevel > 0 }

    func bound(_ value: SQLiteValue, at index: Int32) {
        guard level >= 2 else { return }
        bindings.append((index, value))
    }

    /// A bound value as the log shows it: text quoted, blobs by size (their bytes may be anything).
    static func describe(_ value: SQLiteValue) -> String {
        switch value {
        case .null: return "nil"
        case .integer(let number): return String(number)
        case .real(let number): return String(number)
        case .text(let text): return "\"\(text)\""
        case .blob(let data): return "<\(data.count) bytes>"
        }
    }

    /// The statement's first keyword, upper-cased: what kind of statement it is.
    static func verb(of sql: String) -> Substring {
        let trimmed = sql.drop { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "(" }
        return trimmed.prefix { $0.isLetter }
    }

    /// Whether SQLite's query planner has something to say about statements of this kind.
    static func hasQueryPlan(_ sql: String) -> Bool {
        ["SELECT", "WITH", "INSERT", "UPDATE", "DELETE", "REPLACE"].contains(verb(of: sql).uppercased())
    }
}

extension SQLiteStatement {
    /// Starts the trace of an execution, at the switch's current level.
    @inline(never)
    func beginTrace() {
        let level = CoreDataLogging.sqlDebugLevel
        trace = level > 0 ? SQLiteStatementTrace(level: level) : nil
    }

    /// Ends the trace of the current execution, logging its time (and rows) if it ran.
    @inline(never)
    func endTrace() {
        guard let trace else { return }
        self.trace = nil
        guard let started = trace.started else { return }
        let time = CoreDataLogging.seconds(since: started, until: trace.lastStepped)
        if sqlite3_column_count(handle) > 0 {
            CoreDataLogging.emit("CoreData: annotation: sql connection fetch time: \(time)")
            if trace.level >= 3 {
                let address = String(UInt(bitPattern: Unmanaged.passUnretained(self).toOpaque()), radix: 16)
                CoreDataLogging.emit(
                    "CoreData: annotation: fetch using NSSQLiteStatement <0x\(address)> with sql text '\(sql)' "
                        + "returned \(trace.rows) rows")
            }
        } else {
            CoreDataLogging.emit("CoreData: annotation: sql execution time: \(time)")
            if trace.level >= 3,
                ["INSERT", "UPDATE", "DELETE", "REPLACE"].contains(
                    SQLiteStatementTrace.verb(of: sql).uppercased())
            {
                CoreDataLogging.emit("CoreData: annotation: sql statement changed \(connection.changes) rows")
            }
        }
    }

    /// `step()` while tracing: the first step logs the statement, its bindings and its plan.
    @inline(never)
    func tracedStep() throws(SQLiteError) -> Bool {
        guard let trace else { return try step() }
        if trace.started == nil {
            CoreDataLogging.emit("CoreData: sql: \(sql)")
            for (index, value) in trace.bindings {
                CoreDataLogging.emit(
                    "CoreData: details: SQLite bind[\(index - 1)] = \(SQLiteStatementTrace.describe(value))")
            }
            if trace.level >= 4, SQLiteStatementTrace.hasQueryPlan(sql) {
                CoreDataLogging.emit("CoreData: details: SQLite: EXPLAIN QUERY PLAN \(sql)")
                do {
                    for step in try connection.queryPlan(sql) {
                        CoreDataLogging.emit("CoreData: details: SQLite: \(step.id) \(step.parent) 0 \(step.detail)")
                    }
                } catch {
                    CoreDataLogging.emit("CoreData: details: SQLite: no query plan: \(error.message)")
                }
            }
            trace.started = DispatchTime.now().uptimeNanoseconds
        }
        let code = sqlite3_step(handle)
        trace.lastStepped = DispatchTime.now().uptimeNanoseconds
        switch code {
        case SQLITE_ROW:
            trace.rows += 1
            return true
        case SQLITE_DONE:
            endTrace()
            return false
        default:
            let failure = connection.error(code, sql: sql)
            self.trace = nil
            CoreDataLogging.emit(
                "CoreData: error: sql failed after \(CoreDataLogging.seconds(since: trace.started ?? 0)): "
                    + "\(failure.message) (\(failure.code))", level: .error)
            throw failure
        }
    }
}

/// One step of SQLite's plan for a statement, as `EXPLAIN QUERY PLAN` gives it.
package struct SQLiteQueryPlanStep: Equatable, Sendable {
    package var id: Int
    package var parent: Int
    package var detail: String

    /// The plan drawn as a tree, as SQLite's shell draws it:
    ///
    ///     QUERY PLAN
    ///     |--SCAN t0
    ///     `--USE TEMP B-TREE FOR ORDER BY
    package static func tree(_ steps: [SQLiteQueryPlanStep]) -> [String] {
        var lines = ["QUERY PLAN"]
        func draw(_ parent: Int, _ prefix: String, depth: Int) {
            // SQLite's plans are shallow; the limit keeps a malformed one (a cycle of ids) from recursing forever.
            guard depth < 64 else { return }
            let children = steps.filter { $0.parent == parent && $0.id != parent }
            for (offset, child) in children.enumerated() {
                let last = offset == children.count - 1
                lines.append(prefix + (last ? "`--" : "|--") + child.detail)
                draw(child.id, prefix + (last ? "   " : "|  "), depth: depth + 1)
            }
        }
        draw(0, "", depth: 0)
        return lines
    }
}

extension SQLiteConnection {
    /// SQLite's plan for `sql` (`EXPLAIN QUERY PLAN`), with its parameters unbound: the plan does not depend on them.
    func queryPlan(_ sql: String) throws(SQLiteError) -> [SQLiteQueryPlanStep] {
        let statement = try prepare("EXPLAIN QUERY PLAN " + sql, persistent: false)
        // The plan's own statement is not logged: at level 4 it would ask for a plan of itself.
        statement.trace = nil
        defer { statement.finalize() }
        var steps: [SQLiteQueryPlanStep] = []
        while try statement.step() {
            steps.append(
                SQLiteQueryPlanStep(
                    id: Int(statement.int64(0)), parent: Int(statement.int64(1)), detail: statement.text(3)))
        }
        return steps
    }
}
