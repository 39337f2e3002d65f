#if !canImport(CoreData)
@_spi(Testing) import OpenCoreDataCore
#endif

/// Counts the statements that read a table, through OpenCoreData's statement recorder. Against Apple's Core Data,
/// which has no such hook, counts are `nil` and the checks built on them are skipped.
final class SQLiteReadCounter {
    #if !canImport(CoreData)
    private let recorder = SQLiteStatementRecorder()
    #endif

    /// Stops counting.
    func stop() {
        #if !canImport(CoreData)
        recorder.stop()
        #endif
    }

    /// The SELECT statements run on `table` since counting started.
    func reads(_ table: String) -> Int? {
        #if !canImport(CoreData)
        return recorder.statements.filter { $0.hasPrefix("SELECT") && $0.contains(" \(table) ") }.count
        #else
        return nil
        #endif
    }

    /// The statements recorded (empty where statements cannot be recorded), for failure messages.
    var statements: [String] {
        #if !canImport(CoreData)
        return recorder.statements
        #else
        return []
        #endif
    }

    /// Whether `table` was read `count` times (always true where statements cannot be counted).
    func read(_ table: String, times count: Int) -> Bool {
        reads(table).map { $0 == count } ?? true
    }
}
