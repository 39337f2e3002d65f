import Foundation

/// Why part of a request cannot be expressed in SQL with exactly the in-memory evaluator's meaning. The store then
/// leaves that part to memory: it never answers with SQL that could differ.
struct SQLiteUntranslatable: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}

/// The kinds of column values the generator compares, with the in-memory evaluator's compatibility: numbers and
/// dates compare with each other (a date as its seconds since 2001), the others only with their own kind.
enum SQLiteValueKind {
    case number
    case date
    case string
    case data
    case uuid
    case uri

    /// The kind of an attribute type's values, or `nil` for values SQL cannot compare as memory does (transformable
    /// values, stored archived).
    ///
    /// Decimals are numbers: a decimal column holds an integer, or the double whose shortest description is the
    /// decimal (`SQLiteValueCoding.storedDecimal` refuses any other), and shortest descriptions keep the order of
    /// doubles, so that SQL orders and compares stored decimals as memory compares the decimals.
    init?(_ type: NSAttributeType) {
        switch type {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .booleanAttributeType,
            .doubleAttributeType, .floatAttributeType, .decimalAttributeType:
            self = .number
        case .dateAttributeType: self = .date
        case .stringAttributeType: self = .string
        case .binaryDataAttributeType: self = .data
        case .UUIDAttributeType: self = .uuid
        case .URIAttributeType: self = .uri
        default: return nil
        }
    }

    var isNumeric: Bool { self == .number || self == .date }

    /// Whether values of the two kinds can be equal or ordered in memory.
    func isComparable(with other: SQLiteValueKind) -> Bool {
        self == other || (isNumeric && other.isNumeric)
    }
}

/// A to-many relationship reached in a key path: the row it starts from and the key path after it.
struct SQLiteToManyPath {
    /// The alias of the table holding the relationship's source row.
    let ownerAlias: String
    let relationship: NSRelationshipDescription
    let storage: SQLiteToManyStorage
    let destination: SQLiteEntityMapping
    /// The keys after the relationship.
    let rest: ArraySlice<String>
}

/// What an expression stands for in SQL.
enum SQLiteOperand {
    /// A scalar SQL expression (a column, an aggregate). `exact` is false for averages, which SQL computes in
    /// floating point: those only compare with integers.
    case value(String, SQLiteValueKind, exact: Bool)
    /// A reference to an object of `entity` (or a subentity): a primary key or a foreign key.
    case object(String, SQLiteEntityMapping)
    /// A to-many relationship with the rest of its key path.
    case toMany(SQLiteToManyPath)
    /// A value known when the SQL is generated.
    case constant(Any?)
}

/// A constant as it is bound against a column of some kind.
enum SQLiteBinding {
    /// The value to bind.
    case value(SQLiteValue)
    /// The constant can never equal or order with the column's values (a string against a number column).
    case incompatible
}

extension SQLiteBinding {
    /// How a number binds against a number column (a constant already read as one, as a comparison predicate keeps
    /// its right-hand constant). Throws for numbers SQL cannot compare exactly.
    static func value(of number: PredicateNumber) throws -> SQLiteValue {
        switch number {
        case .int(let value): return .integer(value)
        case .double(let value): return .real(value)
        case .uint: throw SQLiteUntranslatable("an unsigned integer beyond Int64")
        case .decimal(let value):
            // Bound as a decimal column would hold it; one it could not hold is compared in memory.
            guard let stored = try? SQLiteValueCoding.storedDecimal(value) else {
                throw SQLiteUntranslatable("a decimal constant that neither an integer nor a double holds")
            }
            return stored
        }
    }

    /// How `constant` binds against a column of `kind`. Throws for constants SQL cannot compare exactly
    /// (decimals that neither an integer nor a double names, unsigned integers beyond Int64).
    static func binding(of constant: Any, for kind: SQLiteValueKind) throws -> SQLiteBinding {
        switch kind {
        case .number, .date:
            // Numbers before dates: a failed cast to `Date` (which bridges) cost more than the rest of a lookup's
            // binding. A date is found by its type first, or after every kind of number (an `NSDate`).
            if type(of: constant) == Date.self, let date = constant as? Date {
                return .value(.real(date.timeIntervalSinceReferenceDate))
            }
            guard let number = PredicateNumber(constant) else {
                if let date = constant as? Date { return .value(.real(date.timeIntervalSinceReferenceDate)) }
                return .incompatible
            }
            return .value(try value(of: number))
        case .string:
            guard let string = PredicateValueComparison.string(constant) else { return .incompatible }
            return .value(.text(string))
        case .data:
            guard let data = constant as? Data else { return .incompatible }
            return .value(.blob(data))
        case .uuid:
            guard let uuid = constant as? UUID else { return .incompatible }
            return .value(.blob(withUnsafeBytes(of: uuid.uuid) { Data($0) }))
        case .uri:
            guard let url = constant as? URL else { return .incompatible }
            return .value(.text(url.absoluteString))
        }
    }
}
