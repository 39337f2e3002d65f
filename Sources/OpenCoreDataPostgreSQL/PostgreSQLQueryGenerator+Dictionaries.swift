import Foundation
import OpenCoreData
import OpenCoreDataCore

// Dictionary results as one SELECT, computed as the SQLite store computes them (SQLiteQueryGenerator+Dictionaries
// in the framework) and as memory would: a result column per fetched property, the predicate's WHERE clause, GROUP BY
// the grouped columns (by position), HAVING the having predicate (whose key paths and variables name result columns:
// PostgreSQL does not let HAVING name a column's alias, so the column's expression is repeated — its `$n` parameters
// are bound once), then ORDER BY the sort descriptors, else the grouped columns (NULL first, strings by code point),
// else the primary key. Distinct results group by every column and come in the order of their first row.
//
// What SQL would compute otherwise than memory is left to the framework's in-memory computation
// (`PostgreSQLUntranslatable`): predicates the generator leaves to memory, functions other than `now()` and
// arithmetic, to-many key paths, sorting a grouped result by what it does not return, and expressions of one object
// per group.

/// A part of a request that SQL cannot compute exactly as memory does.
struct PostgreSQLUntranslatable: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}

/// The SELECT of a dictionary fetch, and how to read its columns.
struct PostgreSQLDictionaryPlan {
    enum Read {
        /// An attribute's stored value, read as fetched rows read it.
        case attribute(NSAttributeType, NSAttributeDescription)
        /// A to-one destination's key; its entity is `entity`, or (`nil`) the number in the next column.
        case object(entity: Int64?)
        /// A computed number (or, with `text`, a string), converted to the type.
        case computed(NSAttributeType, text: Bool)
        /// A column selected only to read the previous one (a destination's entity number).
        case entityNumber
    }

    let sql: String
    let arguments: [String?]
    /// Per result column: its key (`nil` for a column selected only to group by) and how to read it.
    let columns: [(key: String?, read: Read)]
}

extension PostgreSQLQueryGenerator {
    /// What an expression computes, as far as SQL goes.
    enum ValueKind {
        case number
        case date
        case string

        var isNumeric: Bool { self != .string }
    }

    /// One result column: its SQL, the term that sorts by it, and the position(s) it takes in the select list.
    private struct Column {
        let sql: String
        let orderSQL: String
        var positions: [Int]
    }

    func dictionaryPlan(_ fetch: StoreDictionaryFetch, entity: PostgreSQLEntity) throws -> PostgreSQLDictionaryPlan {
        var select: [String] = []
        var reads: [(key: String?, read: PostgreSQLDictionaryPlan.Read)] = []
        var columns: [String: Column] = [:]
        var having: [String: Operand] = [:]

        func add(_ column: StoreDictionaryColumn, fetched: Bool) throws {
            let key = fetched ? column.key : nil
            let position = select.count + 1
            switch column.value {
            case .keyPath(let components, _):
                switch walk(components, entity: entity) {
                case .column(let alias, .attribute(let name, let type, let attribute))?:
                    let sql = alias + "." + quoted(name)
                    select.append(sql)
                    reads.append((key, .attribute(type, attribute)))
                    columns[column.key] = Column(sql: sql, orderSQL: Self.collated(sql, type), positions: [position])
                    having[column.key] = .attribute(sql: sql, type: type)
                case .column(let alias, .toOne(let name, let entityColumn, let destination))?:
                    guard let target = schema.entity(destination) else {
                        throw PostgreSQLUntranslatable("relationship '\(components.last ?? "")' leaves the store")
                    }
                    let sql = alias + "." + quoted(name)
                    select.append(sql)
                    var positions = [position]
                    if let entityColumn {
                        select.append(alias + "." + quoted(entityColumn))
                        reads.append((key, .object(entity: nil)))
                        reads.append((nil, .entityNumber))
                        positions.append(position + 1)
                    } else {
                        reads.append((key, .object(entity: target.number)))
                    }
                    columns[column.key] = Column(sql: sql, orderSQL: sql, positions: positions)
                    having[column.key] = .toOne(sql: sql, table: target.table.name)
                default:
                    throw PostgreSQLUntranslatable("the key path '\(components.joined(separator: "."))'")
                }
            case .expression(let expression):
                let (sql, kind) = try value(of: expression, entity: entity)
                select.append(sql)
                reads.append((key, .computed(column.resultType, text: kind == .string)))
                columns[column.key] = Column(
                    sql: sql, orderSQL: kind == .string ? sql + " COLLATE \"C\"" : sql, positions: [position])
                having[column.key] = .attribute(sql: sql, type: column.resultType)
            case .aggregate(let aggregate, let argument):
                let (sql, read) = try self.aggregate(aggregate, of: argument, type: column.resultType, entity: entity)
                select.append(sql)
                reads.append((key, read))
                columns[column.key] = Column(sql: sql, orderSQL: sql, positions: [position])
                having[column.key] = .attribute(sql: sql, type: column.resultType)
            }
        }

        for column in fetch.columns { try add(column, fetched: true) }
        for column in fetch.groupBy where columns[column.key] == nil { try add(column, fetched: false) }

        let request = fetch.request
        var conditions = entityCondition(entity, includesSubentities: request.includesSubentities).map { [$0] } ?? []
        if let predicate = request.predicate {
            guard let sql = translate(predicate, entity: entity, depth: 0) else {
                throw PostgreSQLUntranslatable("the predicate \(predicate.predicateFormat)")
            }
            conditions.append(sql)
        }
        let aggregated = fetch.columns.contains(where: \.isAggregate)
        let grouped = !fetch.groupBy.isEmpty
        // An expression of one object per group (a grouped fetch may name one, as Apple's framework takes it) is not
        // SQL PostgreSQL runs: memory gives it the value of the group's first object.
        let groupedKeys = Set(fetch.groupBy.map(\.key))
        if grouped || aggregated, fetch.columns.contains(where: { !$0.isAggregate && !groupedKeys.contains($0.key) }) {
            throw PostgreSQLUntranslatable("a column of one object of each group")
        }
        let distinct = request.returnsDistinctResults && !grouped && !aggregated
        var groupPositions: [Int] = []
        if grouped {
            groupPositions = fetch.groupBy.flatMap { columns[$0.key]?.positions ?? [] }
        } else if distinct {
            groupPositions = fetch.columns.flatMap { columns[$0.key]?.positions ?? [] }
        }
        var havingSQL: String?
        if let predicate = fetch.having {
            resultColumns = having
            defer { resultColumns = [:] }
            guard let sql = translate(predicate, entity: entity, depth: 0) else {
                throw PostgreSQLUntranslatable("the having predicate \(predicate.predicateFormat)")
            }
            havingSQL = sql
        }
        var order: [String] = []
        for descriptor in request.sortDescriptors ?? [] {
            guard descriptor.selector == nil || descriptor.selector == Selector("compare:"), let key = descriptor.key
            else { throw PostgreSQLUntranslatable("sorting with a selector other than compare:") }
            let direction = descriptor.ascending ? " ASC NULLS FIRST" : " DESC NULLS LAST"
            if let column = columns[key] {
                order.append(column.orderSQL + direction)
            } else if !grouped, !distinct, !aggregated, let sql = sortExpression(descriptor, entity: entity) {
                order.append(sql)
            } else {
                throw PostgreSQLUntranslatable("sorting by '\(key)', which the results do not hold")
            }
        }
        if grouped {
            order += fetch.groupBy.compactMap { columns[$0.key].map { $0.orderSQL + " ASC NULLS FIRST" } }
        } else if distinct {
            order.append("min(t0.\"Z_PK\")")
        } else if !aggregated {
            order.append("t0.\"Z_PK\"")
        }

        var sql = "SELECT \(select.joined(separator: ", ")) FROM \(schema.qualified(entity.table.name)) t0"
        if !joins.isEmpty { sql += " " + joins.joined(separator: " ") }
        if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
        if !groupPositions.isEmpty { sql += " GROUP BY " + groupPositions.map(String.init).joined(separator: ", ") }
        if let havingSQL { sql += " HAVING " + havingSQL }
        if !order.isEmpty { sql += " ORDER BY " + order.joined(separator: ", ") }
        if request.fetchLimit > 0 { sql += " LIMIT " + bind(String(request.fetchLimit), "bigint") }
        if request.fetchOffset > 0 { sql += " OFFSET " + bind(String(request.fetchOffset), "bigint") }
        return PostgreSQLDictionaryPlan(sql: sql, arguments: arguments, columns: reads)
    }

    /// Strings sort and compare by code point, as SQLite's binary collation does.
    private static func collated(_ sql: String, _ type: NSAttributeType) -> String {
        type == .stringAttributeType ? sql + " COLLATE \"C\"" : sql
    }

    /// Whether `expression` is one of the built-in functions (`sum:`, `add:to:`, `now`), not `FUNCTION(target, …)`.
    private static func isBuiltIn(_ expression: NSExpression) -> Bool {
        let target = expression.operand
        return target.expressionType == .constantValue && target.constantValue as? String == "_NSPredicateUtilities"
    }

    /// SQL for an expression of one row: key paths through to-one relationships, constants, `now()`, and `+`, `-`,
    /// `*`, `/` — of numbers and dates (seconds since 2001, as they are stored). Booleans count as 0 and 1.
    func value(of expression: NSExpression, entity: PostgreSQLEntity, depth: Int = 0) throws -> (String, ValueKind?) {
        guard depth < Self.maximumDepth else { throw PostgreSQLUntranslatable("an expression nested too deeply") }
        switch expression.expressionType {
        case .keyPath:
            guard expression.operand.expressionType == .evaluatedObject else {
                throw PostgreSQLUntranslatable("the key path \(expression.keyPath) on another object")
            }
            let components = expression.keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            switch walk(components, entity: entity) {
            case .column(let alias, .attribute(let name, let type, _))?:
                let sql = alias + "." + quoted(name)
                switch type {
                case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .doubleAttributeType,
                    .decimalAttributeType:
                    return (sql, .number)
                // As a double, as SQLite keeps it: PostgreSQL's `real` would sum and compute in single precision.
                case .floatAttributeType: return ("(\(sql))::double precision", .number)
                case .booleanAttributeType: return ("(\(sql))::integer", .number)
                case .dateAttributeType: return (sql, .date)
                case .stringAttributeType: return (sql, .string)
                default: return (sql, nil)
                }
            case .column(let alias, .toOne(let name, _, _))?:
                return (alias + "." + quoted(name), .number)
            case .object(let alias, _)?:
                return (alias + ".\"Z_PK\"", .number)
            case nil:
                throw PostgreSQLUntranslatable("the key path '\(expression.keyPath)'")
            }
        case .evaluatedObject:
            return ("t0.\"Z_PK\"", .number)
        case .constantValue:
            guard let constant = PredicateValueComparison.unwrap(expression.constantValue) else { return ("NULL", nil) }
            if let date = constant as? Date {
                return (
                    bind(PostgreSQLValueCoding.text(date.timeIntervalSinceReferenceDate), "double precision"), .date
                )
            }
            if let string = PredicateValueComparison.string(constant), !string.utf8.contains(0) {
                return (bind(string, "text"), .string)
            }
            switch PredicateNumber(constant) {
            case .int(let number)?: return (bind(String(number), "bigint"), .number)
            case .double(let number)? where number.isFinite:
                return (bind(PostgreSQLValueCoding.text(number), "double precision"), .number)
            default: throw PostgreSQLUntranslatable("the constant \(constant)")
            }
        case .function where Self.isBuiltIn(expression):
            let arguments = expression.arguments ?? []
            if expression.function == "now", arguments.isEmpty {
                let now = Date().timeIntervalSinceReferenceDate
                return (bind(PostgreSQLValueCoding.text(now), "double precision"), .date)
            }
            guard arguments.count == 2, let operation = StoreBatchOperator(rawValue: expression.function) else {
                throw PostgreSQLUntranslatable("the function \(expression.function)")
            }
            let (a, aKind) = try value(of: arguments[0], entity: entity, depth: depth + 1)
            let (b, bKind) = try value(of: arguments[1], entity: entity, depth: depth + 1)
            guard let aKind, let bKind, aKind.isNumeric, bKind.isNumeric else {
                throw PostgreSQLUntranslatable("\(expression.function) of values that are not numbers or dates")
            }
            switch operation {
            case .add: return ("(\(a) + \(b))", aKind == .date ? .date : .number)
            case .subtract: return ("(\(a) - \(b))", aKind == .date && bKind != .date ? .date : .number)
            case .multiply: return ("(\(a) * \(b))", .number)
            // In floating point, and by zero into NULL, as SQLite and memory compute it (PostgreSQL would raise).
            case .divide: return ("((\(a))::double precision / NULLIF(\(b), 0))", .number)
            }
        default:
            throw PostgreSQLUntranslatable("the expression \(expression)")
        }
    }

    /// SQL for an aggregate over the rows of a group, and how to read it.
    private func aggregate(
        _ aggregate: StoreAggregate, of argument: NSExpression, type: NSAttributeType, entity: PostgreSQLEntity
    ) throws -> (String, PostgreSQLDictionaryPlan.Read) {
        let (sql, kind) = try value(of: argument, entity: entity)
        switch aggregate {
        case .count:
            return ("count(\(sql))", .computed(type, text: false))
        case .sum, .average:
            guard kind?.isNumeric == true else {
                throw PostgreSQLUntranslatable("\(aggregate.rawValue) of non-numbers")
            }
            // An average in floating point, as SQLite computes it (PostgreSQL's `numeric` average of integers rounds
            // to 16 places, which reads back as another double).
            let total = aggregate == .sum ? "sum(\(sql))" : "avg((\(sql))::double precision)"
            return (total, .computed(type, text: false))
        case .min, .max:
            guard let kind else { throw PostgreSQLUntranslatable("\(aggregate.rawValue) of values SQL cannot order") }
            let function = aggregate == .min ? "min" : "max"
            let extreme = "\(function)(\(kind == .string ? sql + " COLLATE \"C\"" : sql))"
            // The extreme of an attribute is read as the attribute is, then converted.
            if argument.expressionType == .keyPath,
                case .column(_, .attribute(_, let attributeType, let attribute))? = walk(
                    argument.keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init),
                    entity: entity),
                attributeType == type, attributeType != .booleanAttributeType
            {
                return (extreme, .attribute(attributeType, attribute))
            }
            return (extreme, .computed(type, text: kind == .string))
        }
    }
}
