import Foundation

/// How one result column of a dictionary fetch is read from the statement.
enum SQLiteDictionaryRead {
    /// An attribute's stored value, read as fetched rows read it.
    case attribute(NSAttributeType, NSAttributeDescription)
    /// A to-one destination's key; its entity is `entity`, or (`nil`) the number in the next column.
    case object(entity: Int64?)
    /// A computed value, converted to the type.
    case computed(NSAttributeType)
}

/// The SELECT of a dictionary fetch, and how to read its columns.
struct SQLiteDictionaryPlan {
    let sql: String
    let arguments: [SQLiteValue]
    /// Per result column: its key (`nil` for a column selected only to group by) and how to read it.
    let columns: [(key: String?, read: SQLiteDictionaryRead)]
}

// Dictionary results as one SELECT: a result column per fetched property (aliased `c0`, `c1`…, so that GROUP BY,
// HAVING and ORDER BY name them without binding their arguments again), the predicate's WHERE clause, GROUP BY the
// grouped columns, HAVING the having predicate (whose key paths and variables name result columns), then ORDER BY —
// the sort descriptors, else the grouped columns, else the primary key — so that rows come in the order the
// in-memory computation gives. DISTINCT results group by every column and come in the order of their first row.

extension SQLiteQueryGenerator {
    func dictionaryPlan(_ fetch: StoreDictionaryFetch, entity: SQLiteEntityMapping) throws -> SQLiteDictionaryPlan {
        let scope = SQLiteScope(alias: "t0", entity: entity)
        var select: [String] = []
        var reads: [(key: String?, read: SQLiteDictionaryRead)] = []
        var aliases: [String: String] = [:]
        var resultColumns: [String: SQLiteOperand] = [:]

        func add(_ column: StoreDictionaryColumn, fetched: Bool) throws -> String {
            let alias = "c\(select.count)"
            switch column.value {
            case .keyPath(let components, _):
                let reference = try self.reference(components[...], in: scope)
                select.append("\(reference.sql) AS \(alias)")
                switch reference.read {
                case .object(nil):
                    reads.append((fetched ? column.key : nil, reference.read))
                    select.append(reference.entitySQL!)
                    reads.append((nil, .computed(.integer64AttributeType)))
                case let read:
                    reads.append((fetched ? column.key : nil, read))
                }
                if let kind = reference.kind { resultColumns[column.key] = .value(alias, kind, exact: true) }
            case .expression(let expression):
                let (sql, kind) = try value(of: expression, in: scope)
                select.append("\(sql) AS \(alias)")
                reads.append((fetched ? column.key : nil, .computed(column.resultType)))
                if let kind { resultColumns[column.key] = .value(alias, kind, exact: true) }
            case .aggregate(let aggregate, let argument):
                let (sql, read, kind) = try self.aggregate(aggregate, of: argument, type: column.resultType, in: scope)
                select.append("\(sql) AS \(alias)")
                reads.append((fetched ? column.key : nil, read))
                if let kind { resultColumns[column.key] = .value(alias, kind, exact: aggregate != .average) }
            }
            if column.resultType == .decimalAttributeType, case .computed = reads[reads.count - 1].read {
                // A decimal computed in floating point comes back at 15 significant digits
                // (`StoreDictionaryFetch.decimal(computed:)`); a having predicate compares that value, as memory does.
                let rounded = "CAST(printf('%.15g', \(alias)) AS REAL)"
                resultColumns[column.key] = .value(
                    "(CASE WHEN typeof(\(alias)) = 'real' THEN \(rounded) ELSE \(alias) END)", .number, exact: true)
            }
            aliases[column.key] = alias
            return alias
        }

        for column in fetch.columns { _ = try add(column, fetched: true) }
        var groupAliases: [String] = []
        for column in fetch.groupBy {
            groupAliases.append(try aliases[column.key] ?? add(column, fetched: false))
        }
        let request = fetch.request
        let filtered = filter(request.predicate, includesSubentities: request.includesSubentities, in: scope)
        guard filtered.untranslatable.isEmpty else {
            throw SQLiteUntranslatable(filtered.untranslatable.joined(separator: "; "))
        }
        var sql = "SELECT \(select.joined(separator: ", ")) FROM \(scope.fromClause)"
        if !filtered.conditions.isEmpty { sql += " WHERE " + filtered.conditions.joined(separator: " AND ") }
        let aggregated = fetch.columns.contains(where: \.isAggregate)
        let distinct = request.returnsDistinctResults && fetch.groupBy.isEmpty && !aggregated
        if !groupAliases.isEmpty {
            sql += " GROUP BY " + groupAliases.joined(separator: ", ")
        } else if distinct {
            sql += " GROUP BY " + fetch.columns.compactMap { aliases[$0.key] }.joined(separator: ", ")
        }
        if let having = fetch.having {
            context.resultColumns = resultColumns
            defer { context.resultColumns = [:] }
            sql += " HAVING " + (try condition(having, in: scope))
        }
        var order = try (request.sortDescriptors ?? []).map { try orderTerm($0, in: scope) }
        if !groupAliases.isEmpty {
            order += groupAliases
        } else if distinct {
            order.append("MIN(t0.Z_PK)")
        } else if !aggregated {
            order.append("t0.Z_PK")
        }
        if !order.isEmpty { sql += " ORDER BY " + order.joined(separator: ", ") }
        if request.fetchLimit > 0 || request.fetchOffset > 0 {
            let limit = request.fetchLimit > 0 ? Int64(request.fetchLimit) : -1
            sql +=
                " LIMIT \(context.bind(.integer(limit))) OFFSET \(context.bind(.integer(Int64(request.fetchOffset))))"
        }
        return SQLiteDictionaryPlan(sql: sql, arguments: context.arguments, columns: reads)
    }

    /// The column a key path through to-one relationships reaches, joining what it crosses: an attribute (of any
    /// type, read as fetches read it) or a to-one relationship's key.
    private func reference(_ components: ArraySlice<String>, in scope: SQLiteScope) throws -> (
        sql: String, read: SQLiteDictionaryRead, kind: SQLiteValueKind?, entitySQL: String?
    ) {
        var alias = scope.alias
        var mapping = scope.entity
        for index in components.indices {
            let key = components[index]
            let isLast = index == components.endIndex - 1
            guard let slot = mapping.entity._caches.slotByName[key], slot < mapping.slots.count else {
                throw SQLiteUntranslatable("'\(key)' is not a stored property of entity '\(mapping.name)'")
            }
            switch mapping.slots[slot] {
            case .attribute(let column, let type, let attribute), .derived(let column, let type, let attribute):
                guard isLast else { throw SQLiteUntranslatable("a key path through attribute '\(key)'") }
                return (
                    "\(alias).\(mapping.table.columns[column].name)", .attribute(type, attribute),
                    SQLiteValueKind(type), nil
                )
            case .toOne(let foreignKey, let entityColumn, let relationship):
                let column = mapping.table.columns[foreignKey].name
                guard let destination = relationship._destinationEntity.flatMap(context.mapping.entity) else {
                    throw SQLiteUntranslatable("relationship '\(key)' leaves the store")
                }
                if isLast {
                    if destination.kindNumbers.count == 1 {
                        return ("\(alias).\(column)", .object(entity: destination.number), nil, nil)
                    }
                    let entitySQL =
                        entityColumn.map { "\(alias).\(mapping.table.columns[$0].name)" }
                        ?? "(SELECT d.Z_ENT FROM \(destination.table.name) d WHERE d.Z_PK = \(alias).\(column))"
                    return ("\(alias).\(column)", .object(entity: nil), nil, entitySQL)
                }
                alias = scope.join(from: alias, column: column, to: destination, context: context)
                mapping = destination
            default:
                throw SQLiteUntranslatable("'\(key)' is not an attribute or a to-one relationship")
            }
        }
        throw SQLiteUntranslatable("an empty key path")
    }

    /// SQL for an expression of one row: key paths, constants, `now()`, and `+`, `-`, `*`, `/`.
    private func value(of expression: NSExpression, in scope: SQLiteScope) throws -> (String, SQLiteValueKind?) {
        switch expression.kind {
        case .keyPath(_, let components, nil):
            // A collection operator over a to-many relationship (`projects.@count`) is a scalar subquery, as in a
            // predicate.
            if components.contains(where: { $0.hasPrefix("@") }),
                case .value(let sql, let kind, _) = try operand(components[...], in: scope)
            {
                return (sql, kind)
            }
            let reference = try reference(components[...], in: scope)
            guard let kind = reference.kind ?? (reference.read.isObject ? .number : nil) else {
                throw SQLiteUntranslatable("computing with '\(components.joined(separator: "."))'")
            }
            return (reference.sql, kind)
        case .evaluatedObject:
            return ("\(scope.alias).Z_PK", .number)
        case .constant(let raw):
            guard let constant = PredicateValueComparison.unwrap(raw) else { return ("NULL", nil) }
            if let date = constant as? Date {
                return (context.bind(.real(date.timeIntervalSinceReferenceDate)), .date)
            }
            if let string = PredicateValueComparison.string(constant) { return (context.bind(.text(string)), .string) }
            switch PredicateNumber(constant) {
            case .int(let number)?: return (context.bind(.integer(number)), .number)
            case .double(let number)?: return (context.bind(.real(number)), .number)
            default: throw SQLiteUntranslatable("the constant \(constant)")
            }
        case .function("now", nil, let arguments) where arguments.isEmpty:
            return (context.bind(.real(Date().timeIntervalSinceReferenceDate)), .date)
        case .function(let name, nil, let arguments) where arguments.count == 2:
            guard let operation = StoreBatchOperator(rawValue: name) else {
                throw SQLiteUntranslatable("the function \(name)")
            }
            let (a, aKind) = try value(of: arguments[0], in: scope)
            let (b, bKind) = try value(of: arguments[1], in: scope)
            guard let aKind, let bKind, aKind.isNumeric, bKind.isNumeric else {
                throw SQLiteUntranslatable("\(name) of values that are not numbers or dates")
            }
            switch operation {
            case .add: return ("(\(a) + \(b))", aKind == .date ? .date : .number)
            case .subtract: return ("(\(a) - \(b))", aKind == .date && bKind != .date ? .date : .number)
            case .multiply: return ("(\(a) * \(b))", .number)
            // Memory divides in floating point, and by zero into NULL, as SQL does (see `StoreDictionaryFetch.typed`).
            case .divide: return ("(CAST(\(a) AS REAL) / \(b))", .number)
            }
        default:
            throw SQLiteUntranslatable("the expression \(expression)")
        }
    }

    /// SQL for an aggregate over the rows of a group.
    private func aggregate(
        _ aggregate: StoreAggregate, of argument: NSExpression, type: NSAttributeType, in scope: SQLiteScope
    ) throws -> (String, SQLiteDictionaryRead, SQLiteValueKind?) {
        let (sql, kind) = try value(of: argument, in: scope)
        let resultKind = SQLiteValueKind(type)
        switch aggregate {
        case .count:
            return ("COUNT(\(sql))", .computed(type), resultKind)
        case .sum, .average:
            guard kind?.isNumeric == true else { throw SQLiteUntranslatable("\(aggregate.rawValue) of non-numbers") }
            return ("\(aggregate == .sum ? "SUM" : "AVG")(\(sql))", .computed(type), resultKind)
        case .min, .max:
            let function = aggregate == .min ? "MIN" : "MAX"
            // The extreme of an attribute is read as the attribute is, then converted.
            if case .keyPath(_, let components, nil) = argument.kind,
                case .attribute(let attributeType, let attribute) = try reference(components[...], in: scope).read,
                attributeType == type
            {
                return ("\(function)(\(sql))", .attribute(attributeType, attribute), resultKind)
            }
            return ("\(function)(\(sql))", .computed(type), resultKind)
        }
    }
}

extension SQLiteDictionaryRead {
    var isObject: Bool {
        if case .object = self { return true }
        return false
    }
}
