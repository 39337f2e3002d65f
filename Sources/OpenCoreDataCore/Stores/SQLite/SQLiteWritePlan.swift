import Foundation

// The plans a save writes rows with: which value goes in which column, and the statements, made once per entity
// (insertions) or per entity and set of changed columns (updates) and kept by the store.

/// Where one column's value comes from when a row is written.
enum SQLiteWrite {
    case attribute(slot: Int, type: NSAttributeType, attribute: NSAttributeDescription)
    /// A derived attribute Core Data computes when the object is saved (not one kept by triggers).
    case derived(slot: Int, type: NSAttributeType, attribute: NSDerivedAttributeDescription)
    case foreignKey(slot: Int)
    case foreignEntity(slot: Int)
}

/// The INSERT of one entity's rows: its SQL and, in placeholder order after `Z_PK`, `Z_ENT` and `Z_OPT`, the
/// column writes.
final class SQLiteInsertPlan {
    let sql: String
    let writes: [SQLiteWrite]
    /// `writes` as the loop that binds every row reads them.
    let columns: [SQLiteColumnWrite]
    /// Per slot, the column written from it (for UPDATEs of changed slots).
    let columnsBySlot: [Int: [(name: String, write: SQLiteWrite)]]
    /// Derived attributes recomputed on every save.
    let derived: [(name: String, write: SQLiteWrite)]

    init(
        sql: String, writes: [SQLiteWrite], columnsBySlot: [Int: [(name: String, write: SQLiteWrite)]],
        derived: [(name: String, write: SQLiteWrite)]
    ) {
        self.sql = sql
        self.writes = writes
        columns = SQLiteColumnWrite.list(writes)
        self.columnsBySlot = columnsBySlot
        self.derived = derived
    }
}

/// Which UPDATE statement a change needs: its entity, the slots that changed, and whether it names the version.
struct SQLiteUpdateKey: Hashable {
    let entity: Int64
    let slots: SlotSet
    let checked: Bool
}

/// The UPDATE of some columns of one entity's rows: its SQL and, in placeholder order after `Z_OPT`, the column
/// writes. (Plans are classes: the save loop keeps the plan of the previous row, and copying a struct of arrays
/// for every row cost more than binding the row.)
final class SQLiteUpdatePlan {
    let sql: String
    let writes: [SQLiteWrite]
    /// `writes` as the loop that binds every row reads them.
    let columns: [SQLiteColumnWrite]

    init(sql: String, writes: [SQLiteWrite]) {
        self.sql = sql
        self.writes = writes
        columns = SQLiteColumnWrite.list(writes)
    }
}

/// An UPDATE prepared for rows of one entity with one set of changed slots, kept while a save updates rows of that
/// shape one after another.
final class SQLitePreparedUpdate {
    let entity: SQLiteEntityMapping
    let slots: SlotSet
    let checked: Bool
    let plan: SQLiteUpdatePlan
    let statement: SQLiteStatement

    init(
        entity: SQLiteEntityMapping, slots: SlotSet, checked: Bool, plan: SQLiteUpdatePlan, statement: SQLiteStatement
    ) {
        self.entity = entity
        self.slots = slots
        self.checked = checked
        self.plan = plan
        self.statement = statement
    }
}

/// A column write reduced to what binding a stored attribute value needs: plain numbers, which a loop over a row's
/// columns reads without retaining anything (going through `SQLiteWrite` retains and releases its description for
/// every column of every row). Other writes have no slot and go through `SQLiteWrite`.
struct SQLiteColumnWrite {
    /// The attribute's slot, or -1 for a write that is not a stored attribute.
    let slot: Int
    let type: NSAttributeType

    static func list(_ writes: [SQLiteWrite]) -> [SQLiteColumnWrite] {
        writes.map { write in
            if case .attribute(let slot, let type, _) = write { return SQLiteColumnWrite(slot: slot, type: type) }
            return SQLiteColumnWrite(slot: -1, type: .undefinedAttributeType)
        }
    }
}

/// A row to update or delete no longer has the version the saving context saw: the save is rolled back and its
/// conflicts are gathered.
struct SQLiteVersionMismatch: Error {}
