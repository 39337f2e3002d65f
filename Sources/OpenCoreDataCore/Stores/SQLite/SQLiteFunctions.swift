import CSQLite
import Foundation

/// The SQL functions the store registers on every connection. The string operators call exactly the helpers the
/// in-memory evaluator uses, so that a predicate selects the same objects in SQL and in memory.
enum SQLiteFunctions {
    /// `ocd_fold(text, options)`: `text` folded as `[c]` (1), `[d]` (2) or `[cd]` (3) fold it.
    static let fold = "ocd_fold"
    /// `ocd_compare(operator, options, lhs, rhs)`: 1 if the comparison predicate operator (its raw value) holds for
    /// the two values with the options, else 0 — LIKE, MATCHES, CONTAINS and IN on strings go through it.
    static let compare = "ocd_compare"

    static func register(on connection: SQLiteConnection) throws(SQLiteError) {
        let deterministic = SQLITE_UTF8 | SQLITE_DETERMINISTIC
        try create(connection, fold, arguments: 2, flags: deterministic) { context, _, arguments in
            guard let arguments, sqlite3_value_type(arguments[0]) != SQLITE_NULL else {
                sqlite3_result_null(context)
                return
            }
            let options = NSComparisonPredicate.Options(rawValue: UInt(max(0, sqlite3_value_int64(arguments[1]))))
            var folded = PredicateStringFolding.fold(SQLiteFunctions.string(arguments[0]), options: options)
            folded.withUTF8 { buffer in
                if let pointer = buffer.baseAddress.map({ UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) }) {
                    sqlite3_result_text(context, pointer, Int32(buffer.count), sqliteTransient)
                } else {
                    sqlite3_result_text(context, "", 0, sqliteTransient)
                }
            }
        }
        try create(connection, compare, arguments: 4, flags: deterministic) { context, _, arguments in
            guard let arguments,
                let type = NSComparisonPredicate.Operator(rawValue: UInt(max(0, sqlite3_value_int64(arguments[0]))))
            else {
                sqlite3_result_int(context, 0)
                return
            }
            let options = NSComparisonPredicate.Options(rawValue: UInt(max(0, sqlite3_value_int64(arguments[1]))))
            let holds = PredicateComparisonOperator.evaluate(
                type, SQLiteFunctions.value(arguments[2]), SQLiteFunctions.value(arguments[3]), options: options)
            sqlite3_result_int(context, holds ? 1 : 0)
        }
        // Apple's derived-attribute triggers report each updated value to the framework through these functions;
        // this store reads derived values back from their columns, so they only need to exist.
        for name in [
            "NSCoreDataDATriggerUpdatedAffectedObjectValue", "NSCoreDataDATriggerInsertUpdatedAffectedObjectValue",
        ] {
            try create(connection, name, arguments: -1, flags: SQLITE_UTF8) { context, _, _ in
                sqlite3_result_null(context)
            }
        }
    }

    private typealias Function = @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void

    private static func create(
        _ connection: SQLiteConnection, _ name: String, arguments: Int32, flags: Int32, _ function: Function
    ) throws(SQLiteError) {
        let code = sqlite3_create_function_v2(connection.handle, name, arguments, flags, nil, function, nil, nil, nil)
        guard code == SQLITE_OK else { throw connection.error(code, sql: "sqlite3_create_function_v2(\(name))") }
    }

    static func string(_ value: OpaquePointer?) -> String {
        guard let text = sqlite3_value_text(value) else { return "" }
        let count = Int(sqlite3_value_bytes(value))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// An SQL value as the predicate evaluator sees values: numbers, strings, data; `nil` for NULL.
    static func value(_ value: OpaquePointer?) -> Any? {
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER: return sqlite3_value_int64(value)
        case SQLITE_FLOAT: return sqlite3_value_double(value)
        case SQLITE_TEXT: return string(value)
        case SQLITE_BLOB:
            guard let bytes = sqlite3_value_blob(value) else { return Data() }
            return Data(bytes: bytes, count: Int(sqlite3_value_bytes(value)))
        default: return nil
        }
    }
}
