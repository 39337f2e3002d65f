import Foundation

/// The declared type of a store column, which also decides its place in its table.
enum SQLiteColumnType: String {
    case integer = "INTEGER"
    case timestamp = "TIMESTAMP"
    case float = "FLOAT"
    case decimal = "DECIMAL"
    case varchar = "VARCHAR"
    case blob = "BLOB"

    /// Apple's column order: integers first, blobs last; timestamps and floats share a rank.
    var rank: Int {
        switch self {
        case .integer: return 0
        case .timestamp, .float: return 1
        case .decimal: return 2
        case .varchar: return 3
        case .blob: return 4
        }
    }

    /// The column type of an attribute type.
    init(_ type: NSAttributeType) {
        switch type {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .booleanAttributeType:
            self = .integer
        case .dateAttributeType: self = .timestamp
        case .doubleAttributeType, .floatAttributeType: self = .float
        case .decimalAttributeType: self = .decimal
        case .stringAttributeType, .URIAttributeType, .objectIDAttributeType: self = .varchar
        case .binaryDataAttributeType, .UUIDAttributeType, .transformableAttributeType, .compositeAttributeType,
            .undefinedAttributeType:
            self = .blob
        }
    }
}

/// One column of an entity table (beyond `Z_PK`, `Z_ENT` and `Z_OPT`).
struct SQLiteColumn {
    enum Role {
        case attribute(NSAttributeDescription)
        /// The destination's primary key of a to-one relationship.
        case foreignKey(NSRelationshipDescription)
        /// The destination's entity number of a to-one relationship whose destination has subentities.
        case foreignEntity(NSRelationshipDescription)
        /// The position of the row in an ordered to-many relationship (the to-one here is its inverse).
        case order(NSRelationshipDescription)
    }

    /// A role as a dictionary key: its kind and the identity of its description.
    struct RoleKey: Hashable {
        let kind: UInt8
        let description: ObjectIdentifier
    }

    let name: String
    let type: SQLiteColumnType
    let role: Role
}

extension SQLiteColumn.Role {
    var key: SQLiteColumn.RoleKey {
        switch self {
        case .attribute(let attribute): return .init(kind: 0, description: ObjectIdentifier(attribute))
        case .foreignKey(let relationship): return .init(kind: 1, description: ObjectIdentifier(relationship))
        case .foreignEntity(let relationship): return .init(kind: 2, description: ObjectIdentifier(relationship))
        // Found through the to-many relationship whose positions it holds (the inverse of the one it names).
        case .order(let inverse):
            return .init(kind: 3, description: ObjectIdentifier(inverse._inverseRelationship ?? inverse))
        }
    }
}

/// The table of one entity hierarchy.
final class SQLiteTable {
    let name: String
    let rootNumber: Int64
    /// The columns after `Z_PK`, `Z_ENT` and `Z_OPT`, in table order.
    private(set) var columns: [SQLiteColumn] = []
    private(set) var columnIndex: [String: Int] = [:]
    /// The column of each attribute, foreign key, foreign entity and position, by the description it stores (a
    /// search of the columns for every slot of every entity made a deep hierarchy cubic).
    private(set) var columnByRole: [SQLiteColumn.RoleKey: Int] = [:]
    /// Whether several entities share the table (and so `Z_ENT` is indexed).
    var isShared = false

    /// `SELECT <every column> FROM <table> t0 WHERE t0.Z_PK = ?`: the query that fulfils one fault, made once
    /// rather than for every fault.
    private(set) var selectByPrimaryKeySQL = ""
    /// The same for many rows: their keys are bound as one JSON array (`SQLiteTable.keyList(_:)`), so that one
    /// cached statement serves every number of rows.
    private(set) var selectByPrimaryKeysSQL = ""
    /// `Z_PK, Z_OPT` of the rows whose keys are bound as a JSON array: the versions a save checks.
    let selectVersionsSQL: String
    /// Deletes one row if it still has the version the saving context saw (Core Data's optimistic locking: a row
    /// changed or deleted by someone else is left alone, and the save fails with a conflict).
    let deleteCheckedSQL: String
    /// Deletes one row whatever its version (a merge policy chose to overwrite).
    let deleteSQL: String
    /// `deleteCheckedSQL` for `deleteBatchSize` rows of one version at once (the version first, then the keys):
    /// a large deletion runs a statement per batch instead of one per row.
    let deleteCheckedBatchSQL: String
    /// `deleteSQL` for `deleteBatchSize` rows at once.
    let deleteBatchSQL: String
    /// `deleteCheckedSQL` for a run of consecutive keys (the version, the first key, the last): rows deleted together
    /// were mostly made together, and SQLite deletes a range of its table in one pass instead of seeking every key.
    let deleteCheckedRangeSQL: String
    /// `deleteSQL` for a run of consecutive keys (the first, the last).
    let deleteRangeSQL: String
    /// How many rows the batch statements delete.
    static let deleteBatchSize = 64
    /// The shortest run of consecutive keys deleted as a range rather than key by key.
    static let deleteRangeMinimum = 4

    init(name: String, rootNumber: Int64) {
        self.name = name
        self.rootNumber = rootNumber
        selectVersionsSQL = "SELECT Z_PK, Z_OPT FROM \(name) WHERE Z_PK IN \(Self.boundKeys)"
        deleteCheckedSQL = "DELETE FROM \(name) WHERE Z_PK = ? AND Z_OPT = ?"
        deleteSQL = "DELETE FROM \(name) WHERE Z_PK = ?"
        let keys = Array(repeating: "?", count: Self.deleteBatchSize).joined(separator: ", ")
        deleteCheckedBatchSQL = "DELETE FROM \(name) WHERE Z_OPT = ? AND Z_PK IN (\(keys))"
        deleteBatchSQL = "DELETE FROM \(name) WHERE Z_PK IN (\(keys))"
        deleteCheckedRangeSQL = "DELETE FROM \(name) WHERE Z_OPT = ? AND Z_PK BETWEEN ? AND ?"
        deleteRangeSQL = "DELETE FROM \(name) WHERE Z_PK BETWEEN ? AND ?"
    }

    /// The SQL that stands for a set of keys bound as one JSON array.
    static let boundKeys = "(SELECT value FROM json_each(?))"

    /// `keys` as the JSON array that `boundKeys` reads.
    static func keyList(_ keys: some Sequence<Int64>) -> SQLiteValue {
        // Written digit by digit into one buffer: formatting each key as a String of its own cost more than the
        // query that reads the list.
        var bytes: [UInt8] = [UInt8(ascii: "[")]
        bytes.reserveCapacity(keys.underestimatedCount * 8 + 2)
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        for key in keys {
            if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
            if key < 0 { bytes.append(UInt8(ascii: "-")) }
            var magnitude = key.magnitude
            withUnsafeMutableBytes(of: &digits) { buffer in
                var end = buffer.count
                repeat {
                    end -= 1
                    buffer[end] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                    magnitude /= 10
                } while magnitude > 0
                bytes.append(contentsOf: buffer[end...])
            }
        }
        bytes.append(UInt8(ascii: "]"))
        return .text(String(decoding: bytes, as: UTF8.self))
    }

    func setColumns(_ columns: [SQLiteColumn]) {
        self.columns = columns
        columnIndex = Dictionary(uniqueKeysWithValues: columns.enumerated().map { ($1.name, $0) })
        columnByRole = Dictionary(
            columns.enumerated().map { ($1.role.key, $0) }, uniquingKeysWith: { first, _ in first })
        selectListT0 = nil
        selectListT0 = selectList(alias: "t0")
        selectByPrimaryKeySQL = "SELECT \(selectList(alias: "t0")) FROM \(name) t0 WHERE t0.Z_PK = ?"
        selectByPrimaryKeysSQL = "SELECT \(selectList(alias: "t0")) FROM \(name) t0 WHERE t0.Z_PK IN \(Self.boundKeys)"
    }

    /// `t.Z_PK, t.Z_ENT, t.Z_OPT, t.<column>…`: every column, in table order, for `alias` (made once for `t0`, the
    /// alias of almost every query).
    func selectList(alias: String) -> String {
        if alias == "t0", let selectListT0 { return selectListT0 }
        return ([alias + ".Z_PK", alias + ".Z_ENT", alias + ".Z_OPT"] + columns.map { alias + "." + $0.name })
            .joined(separator: ", ")
    }

    private var selectListT0: String?
}

/// The join table of a many-to-many relationship (or of a to-many without inverse), seen from one relationship.
struct SQLiteJoin {
    let table: String
    /// Holds the primary key of the relationship's source object.
    let sourceColumn: String
    /// Holds the primary key of the destination object.
    let destinationColumn: String
    /// Holds the destination's position among the source's destinations, for an ordered relationship.
    let orderColumn: String?
    /// The table of the destination objects.
    let destinationTable: String
}

/// A join table's definition.
struct SQLiteJoinTable {
    let name: String
    let firstColumn: String
    let secondColumn: String
    let orderColumns: [String]
}
