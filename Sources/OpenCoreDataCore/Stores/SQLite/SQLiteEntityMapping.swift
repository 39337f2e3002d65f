import Foundation
import Synchronization

/// How an entity's objects are stored: its number, its table, and where each slot of its layout lives.
final class SQLiteEntityMapping {
    /// Where one slot's value is stored.
    enum Slot {
        /// Not stored (transient, fetched).
        case none
        /// An attribute column (index into the table's columns).
        case attribute(column: Int, type: NSAttributeType, attribute: NSAttributeDescription)
        /// A derived attribute's column: read, never written from the object's value.
        case derived(column: Int, type: NSAttributeType, attribute: NSAttributeDescription)
        /// A to-one relationship's foreign key (and the destination entity's column, if any).
        case toOne(foreignKey: Int, entityColumn: Int?, relationship: NSRelationshipDescription)
        /// A to-many relationship.
        case toMany(SQLiteToManyStorage, relationship: NSRelationshipDescription)
    }

    let entity: NSEntityDescription
    let name: String
    let number: Int64
    let superNumber: Int64
    let table: SQLiteTable
    /// This entity's number and its subentities' (recursively), in depth-first order. A new store numbers entities
    /// depth first, so these are the numbers from its own to its last descendant's; a store numbered otherwise
    /// (by an older Xcode, or with entities added by a later model version) may interleave hierarchies, so they are
    /// a set, not a range.
    var kindNumbers: ArraySlice<Int64> {
        guard let owner else { preconditionFailure("The mapping of entity '\(name)' is used without its model's") }
        return owner.numbersInOrder[orderIndex...lastDescendantIndex]
    }
    /// This entity's place in its model's depth-first order, and its last descendant's.
    var orderIndex = 0
    var lastDescendantIndex = 0

    /// The SQL condition that `alias.Z_ENT` is one of `kinds`: a comparison, a range when the numbers are
    /// contiguous, a list otherwise.
    static func condition(_ alias: String, isOneOf kinds: some Collection<Int64>) -> String {
        let sorted = kinds.sorted()
        guard let first = sorted.first, let last = sorted.last else { return "0" }
        if first == last { return "\(alias).Z_ENT = \(first)" }
        if last - first == Int64(sorted.count - 1) { return "\(alias).Z_ENT BETWEEN \(first) AND \(last)" }
        return "\(alias).Z_ENT IN (\(sorted.map(String.init).joined(separator: ", ")))"
    }

    // Where each slot lives, laid out when the entity is first used: a slot per property, inherited ones included,
    // so that laying out every entity of a deep hierarchy would grow with its depth squared. Laid out once, under
    // `layoutLock`, as a fetch beside a save may be first; read freely once `isLaidOut` says so.
    private var _slots: [Slot] = []
    private var _unstoredSlots: [Int] = []
    /// What decoding a row reads, in memory the mapping owns (see `decodePlan`).
    private var _readStepBuffer = UnsafeMutableBufferPointer<SQLiteReadStep>(start: nil, count: 0)
    private var _toManySlotBuffer = UnsafeMutableBufferPointer<Int>(start: nil, count: 0)
    private var _slotCount = 0
    private let isLaidOut = Atomic<Bool>(false)
    private let layoutLock = NSLock()
    /// The mapping that lays the entity out (and holds it).
    unowned var owner: SQLiteModelMapping?

    /// One entry per slot of `entity._caches.slots`.
    var slots: [Slot] {
        layOutIfNeeded()
        return _slots
    }
    /// The slots that are not stored (transient and fetched properties).
    var unstoredSlots: [Int] {
        layOutIfNeeded()
        return _unstoredSlots
    }
    /// What decoding a row of this entity reads: a step per column of the select list (slot, column offset, and what
    /// the column holds, as plain values: decoding switches on them instead of copying `slots`' payloads, and
    /// retaining their descriptions, for every column of every row), the slots of to-many relationships (stored as
    /// faults in rows), and the number of slots. Buffers rather than arrays: a row read copied the arrays, and each
    /// copy is an atomic retain and release. Valid while the mapping lives.
    var decodePlan: (readSteps: UnsafeBufferPointer<SQLiteReadStep>, toManySlots: UnsafeBufferPointer<Int>, slots: Int)
    {
        @inline(__always) get {
            layOutIfNeeded()
            return (UnsafeBufferPointer(_readStepBuffer), UnsafeBufferPointer(_toManySlotBuffer), _slotCount)
        }
    }

    @inline(__always)
    private func layOutIfNeeded() {
        if !isLaidOut.load(ordering: .acquiring) { layOut() }
    }

    private func layOut() {
        guard let owner else { preconditionFailure("The mapping of entity '\(name)' is used without its model's") }
        layoutLock.lock()
        defer { layoutLock.unlock() }
        guard !isLaidOut.load(ordering: .relaxed) else { return }
        defer { isLaidOut.store(true, ordering: .releasing) }
        let (slots, readPlan, toManySlots) = owner.slots(of: self)
        _slots = slots
        _unstoredSlots = slots.indices.filter {
            if case .none = slots[$0] { return true }
            return false
        }
        _slotCount = slots.count
        _readStepBuffer = .allocate(capacity: readPlan.count)
        _ = _readStepBuffer.initialize(
            from: readPlan.lazy.map { SQLiteReadStep(slot: $0.slot, column: $0.column, storage: slots[$0.slot]) })
        _toManySlotBuffer = .allocate(capacity: toManySlots.count)
        _ = _toManySlotBuffer.initialize(from: toManySlots)
    }

    init(entity: NSEntityDescription, number: Int64, superNumber: Int64, table: SQLiteTable) {
        self.entity = entity
        name = entity._name ?? ""
        self.number = number
        self.superNumber = superNumber
        self.table = table
    }

    deinit {
        _readStepBuffer.deallocate()
        _toManySlotBuffer.deallocate()
    }
}

/// How one column of a fetched row is decoded.
struct SQLiteReadStep {
    enum Kind: UInt8 {
        case integer, boolean, double, float, date, string, binary
        /// A to-one relationship's foreign key.
        case toOne
        /// Anything else (decimals, UUIDs, URIs, transformables): read through the slot's description.
        case general
    }

    let slot: Int
    let column: Int32
    let kind: Kind
    /// For a to-one key: the relationship's destination entity (held by the model the mapping keeps), and the
    /// select-list column of the destination's entity number when the destination has subentities (else -1).
    let destination: Unmanaged<NSEntityDescription>?
    let entityColumn: Int32

    init(slot: Int, column: Int32, storage: SQLiteEntityMapping.Slot) {
        self.slot = slot
        self.column = column
        switch storage {
        case .attribute(_, let type, _):
            destination = nil
            entityColumn = -1
            switch type {
            case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType: kind = .integer
            case .booleanAttributeType: kind = .boolean
            case .doubleAttributeType: kind = .double
            case .floatAttributeType: kind = .float
            case .dateAttributeType: kind = .date
            case .stringAttributeType: kind = .string
            case .binaryDataAttributeType: kind = .binary
            default: kind = .general
            }
        case .toOne(_, let entityColumn, let relationship):
            kind = .toOne
            destination = relationship._destinationEntity.map { Unmanaged.passUnretained($0) }
            self.entityColumn = entityColumn.map { Int32($0 + 3) } ?? -1
        default:
            kind = .general
            destination = nil
            entityColumn = -1
        }
    }
}

/// Where a to-many relationship's destinations are recorded.
enum SQLiteToManyStorage {
    /// In the destination table, as the foreign key of the inverse to-one (with positions for an ordered one).
    case foreignKey(table: SQLiteTable, column: String, orderColumn: String?)
    /// In a join table.
    case join(SQLiteJoin)
}
