import Synchronization

/// Records the SQL text of every statement the SQLite store runs, for tests that check what reaches SQLite (for
/// example, that user values are always bound and never appear in SQL text).
///
/// ```swift
/// let recorder = SQLiteStatementRecorder()
/// defer { recorder.stop() }
/// _ = try context.fetch(request)
/// #expect(!recorder.statements.contains { $0.contains("secret") })
/// ```
///
/// Recording is process-wide: while a recorder runs, it sees the statements of every SQLite store.
@_spi(Testing) public final class SQLiteStatementRecorder: Sendable {
    private let recorded = LockedState<[String]>([])
    private let id: Int

    /// Starts recording.
    public init() {
        id = SQLiteStatementLog.nextID.add(1, ordering: .relaxed).oldValue
        SQLiteStatementLog.recorders.withLock { $0[id] = self }
        SQLiteStatementLog.active.add(1, ordering: .releasing)
    }

    /// The statements run since recording started, in order.
    public var statements: [String] { recorded.withLock { $0 } }

    /// Stops recording.
    public func stop() {
        let removed = SQLiteStatementLog.recorders.withLock { $0.removeValue(forKey: id) }
        if removed != nil { SQLiteStatementLog.active.subtract(1, ordering: .releasing) }
    }

    fileprivate func record(_ sql: String) {
        recorded.withLock { $0.append(sql) }
    }
}

/// The registry of running recorders; the connection asks `isRecording` (one atomic load) before each statement.
enum SQLiteStatementLog {
    fileprivate static let nextID = Atomic<Int>(1)
    fileprivate static let active = Atomic<Int>(0)
    fileprivate static let recorders = LockedState<[Int: SQLiteStatementRecorder]>([:])

    @inline(__always)
    static var isRecording: Bool { active.load(ordering: .acquiring) > 0 }

    static func record(_ sql: String) {
        let current = recorders.withLock { Array($0.values) }
        for recorder in current { recorder.record(sql) }
    }
}
