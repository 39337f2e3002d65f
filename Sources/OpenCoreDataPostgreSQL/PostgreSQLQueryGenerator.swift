import Foundation
import OpenCoreData
import OpenCoreDataCore

/// A query for one fetch: its SQL, the values bound to `$1`, `$2`…, and whether the SQL does all the request asks.
/// An incomplete plan selects a superset of the matches (the parts of a top-level `AND` it could translate) without
/// order or limit: the store returns candidates, and the context evaluates the predicate in memory.
struct PostgreSQLFetchPlan {
    let sql: String
    let arguments: [String?]
    let isComplete: Bool
}

/// Builds the SQL of fetch requests against a `PostgreSQLSchema`: the root table as `t0`, to-one key paths as
/// `LEFT JOIN`s (`t1`, `t2`…), every value a bound parameter with an explicit type.
///
/// Translated: comparisons (`==`, `!=`, `<`, `<=`, `>`, `>=`) of attributes and to-one key paths with constants,
/// `IN`, `BETWEEN`, `BEGINSWITH`, `ENDSWITH`, `CONTAINS`, `LIKE` (with `[c]` as `lower()` where the database's
/// character type folds more than ASCII), relationships and `self` against objects and IDs, `AND`/`OR`/`NOT`,
/// `TRUEPREDICATE`/`FALSEPREDICATE`; sorting by attributes with `compare:`. Strings compare and sort by code point
/// (`COLLATE "C"`), as SQLite's binary collation does, whatever the database's collation. Left to in-memory
/// evaluation: `[d]` (PostgreSQL folds diacritics only with the `unaccent` extension, by rules of its own),
/// `MATCHES` (PostgreSQL's regular expressions are POSIX, Core Data's ICU), to-many key paths, aggregates,
/// subqueries, functions, and sorting by selectors other than `compare:`.
final class PostgreSQLQueryGenerator {
    enum Selection {
        case rows
        case keys
        case count
    }

    /// What a key path names.
    enum Operand {
        case attribute(sql: String, type: NSAttributeType)
        /// A to-one relationship's foreign key, and its destination's table.
        case toOne(sql: String, table: String)
        /// The object itself (`self`): its key, and its table.
        case object(sql: String, table: String)
    }

    let schema: PostgreSQLSchema
    unowned let store: PostgreSQLStore
    /// Whether `lower()` folds case beyond ASCII in this database (its `LC_CTYPE` is not `C`/`POSIX`).
    let foldsCase: Bool
    private(set) var arguments: [String?] = []
    private(set) var joins: [String] = []
    private var joinAliases: [String: String] = [:]
    /// While translating a having predicate: the result columns its key paths and variables name.
    var resultColumns: [String: Operand] = [:]
    /// Key paths longer than this are left to in-memory evaluation.
    static let maximumKeyPathLength = 8
    /// Predicates nested deeper than this are left to in-memory evaluation.
    static let maximumDepth = 64

    init(schema: PostgreSQLSchema, store: PostgreSQLStore, foldsCase: Bool) {
        self.schema = schema
        self.store = store
        self.foldsCase = foldsCase
    }

    func bind(_ text: String?, _ type: String) -> String {
        arguments.append(text)
        return "$\(arguments.count)::\(type)"
    }

    // MARK: Requests

    func plan(_ request: NSFetchRequest<NSFetchRequestResult>, entity: PostgreSQLEntity, selection: Selection)
        -> PostgreSQLFetchPlan
    {
        var conditions = entityCondition(entity, includesSubentities: request.includesSubentities).map { [$0] } ?? []
        var complete = true
        if let predicate = request.predicate {
            if let sql = attempt({ translate(predicate, entity: entity, depth: 0) }) {
                conditions.append(sql)
            } else {
                complete = false
                // The parts of a top-level AND that translate still narrow the candidates.
                if let compound = predicate as? NSCompoundPredicate, compound.compoundPredicateType == .and {
                    for case let part as NSPredicate in compound.subpredicates {
                        if let sql = attempt({ translate(part, entity: entity, depth: 1) }) { conditions.append(sql) }
                    }
                }
            }
        }
        var order: [String] = []
        if complete, selection != .count {
            for descriptor in request.sortDescriptors ?? [] {
                guard let sql = attempt({ sortExpression(descriptor, entity: entity) }) else {
                    complete = false
                    break
                }
                order.append(sql)
            }
        }
        let table = entity.table
        let columns: String
        switch selection {
        case .count where complete:
            columns = "count(*)"
        case .keys where complete:
            columns = "t0.\"Z_PK\", t0.\"Z_ENT\", t0.\"Z_OPT\""
        default:
            columns = table.wholeRow.t0
        }
        var sql = "SELECT \(columns) FROM \(schema.qualified(table.name)) t0"
        if !joins.isEmpty { sql += " " + joins.joined(separator: " ") }
        if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
        // Rows come in key order when the request sorts (keys break ties) or skips some (so that an offset means the
        // same rows each time). Otherwise, as Core Data's SQLite store does, in no order the request asks for: an
        // `ORDER BY "Z_PK"` there lets PostgreSQL answer a `LIMIT` by walking the primary key instead of using the
        // filter's index (240 times slower, by the benchmarks, for lookups on a table not yet analyzed).
        if selection != .count || !complete, !order.isEmpty || request.fetchOffset > 0 {
            sql += " ORDER BY " + (order + ["t0.\"Z_PK\""]).joined(separator: ", ")
        }
        if complete, selection != .count {
            if request.fetchLimit > 0 { sql += " LIMIT " + bind(String(request.fetchLimit), "bigint") }
            if request.fetchOffset > 0 { sql += " OFFSET " + bind(String(request.fetchOffset), "bigint") }
        }
        if complete, selection == .count, request.fetchLimit > 0 || request.fetchOffset > 0 {
            // A count honours the limit and offset, as Core Data's does.
            var inner = "SELECT 1 FROM \(schema.qualified(table.name)) t0"
            if !joins.isEmpty { inner += " " + joins.joined(separator: " ") }
            if !conditions.isEmpty { inner += " WHERE " + conditions.joined(separator: " AND ") }
            if request.fetchLimit > 0 { inner += " LIMIT " + bind(String(request.fetchLimit), "bigint") }
            if request.fetchOffset > 0 { inner += " OFFSET " + bind(String(request.fetchOffset), "bigint") }
            sql = "SELECT count(*) FROM (\(inner)) counted"
        }
        return PostgreSQLFetchPlan(sql: sql, arguments: arguments, isComplete: complete)
    }

    /// The condition that picks the rows of `entity` (and its subentities) from its table, if it holds others too.
    func entityCondition(_ entity: PostgreSQLEntity, includesSubentities: Bool) -> String? {
        let numbers = includesSubentities ? entity.family : [entity.number]
        let tableNumbers = schema.entities.filter { $0.table === entity.table }.map(\.number)
        guard Set(numbers) != Set(tableNumbers) else { return nil }
        return "t0.\"Z_ENT\" = ANY(\(bind("{" + numbers.map(String.init).joined(separator: ",") + "}", "integer[]")))"
    }

    /// Runs `body`, forgetting the arguments and joins it added if it translates nothing: PostgreSQL refuses a
    /// parameter that the SQL does not use.
    func attempt(_ body: () -> String?) -> String? {
        let saved = (arguments, joins, joinAliases)
        if let sql = body() { return sql }
        (arguments, joins, joinAliases) = saved
        return nil
    }

    func sortExpression(_ descriptor: NSSortDescriptor, entity: PostgreSQLEntity) -> String? {
        guard let key = descriptor.key, descriptor.selector == nil || descriptor.selector == Selector("compare:"),
            case .attribute(let sql, let type)? = resolve(key, entity: entity)
        else { return nil }
        let collated = type == .stringAttributeType ? sql + " COLLATE \"C\"" : sql
        // NULL first when ascending, as SQLite (and so Core Data) sorts.
        return collated + (descriptor.ascending ? " ASC NULLS FIRST" : " DESC NULLS LAST")
    }

    // MARK: Key paths

    /// What a key path reaches: a column of the table `alias` stands for, or the object there itself (`self`).
    enum Reached {
        case column(alias: String, column: PostgreSQLSlotColumn)
        case object(alias: String, entity: PostgreSQLEntity)
    }

    /// The column a key path names, joining the tables of the to-one relationships on its way.
    func resolve(_ keyPath: String, entity: PostgreSQLEntity) -> Operand? {
        if let column = resultColumns[keyPath] { return column }
        let components = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        switch walk(components, entity: entity) {
        case .column(let alias, .attribute(let name, let type, _))?:
            return .attribute(sql: alias + "." + quoted(name), type: type)
        case .column(let alias, .toOne(let name, _, let destination))?:
            guard let target = schema.entity(destination) else { return nil }
            return .toOne(sql: alias + "." + quoted(name), table: target.table.name)
        case .object(let alias, let reached)?:
            return .object(sql: alias + ".\"Z_PK\"", table: reached.table.name)
        case nil:
            return nil
        }
    }

    /// Follows `components` through to-one relationships, joining each table once (`LEFT JOIN`, so that a missing
    /// destination gives `NULL`s rather than dropping the row).
    func walk(_ components: [String], entity: PostgreSQLEntity) -> Reached? {
        guard components.count <= Self.maximumKeyPathLength else { return nil }
        var current = entity
        var alias = "t0"
        var path = ""
        for (index, component) in components.enumerated() {
            let isLast = index == components.count - 1
            if component == "self", isLast { return .object(alias: alias, entity: current) }
            guard let slot = current.slotIndex[component], let column = current.slotColumns[slot] else { return nil }
            switch column {
            case .attribute:
                return isLast ? .column(alias: alias, column: column) : nil
            case .toOne(let name, _, let destination):
                guard let target = schema.entity(destination) else { return nil }
                if isLast { return .column(alias: alias, column: column) }
                path += (path.isEmpty ? "" : ".") + component
                if let existing = joinAliases[path] {
                    alias = existing
                } else {
                    let next = "t\(joinAliases.count + 1)"
                    joins.append(
                        "LEFT JOIN \(schema.qualified(target.table.name)) \(next) ON \(next).\"Z_PK\" = \(alias).\(quoted(name))"
                    )
                    joinAliases[path] = next
                    alias = next
                }
                current = target
            }
        }
        return nil
    }

    // MARK: Predicates

    /// The SQL of `predicate`, or `nil` if some part of it does not translate.
    func translate(_ predicate: NSPredicate, entity: PostgreSQLEntity, depth: Int) -> String? {
        guard depth < Self.maximumDepth else { return nil }
        switch predicate {
        case let compound as NSCompoundPredicate:
            let parts = compound.subpredicates.compactMap { $0 as? NSPredicate }
            guard parts.count == compound.subpredicates.count else { return nil }
            var translated: [String] = []
            for part in parts {
                guard let sql = translate(part, entity: entity, depth: depth + 1) else { return nil }
                translated.append(sql)
            }
            switch compound.compoundPredicateType {
            case .and: return translated.isEmpty ? "TRUE" : "(" + translated.joined(separator: " AND ") + ")"
            case .or: return translated.isEmpty ? "FALSE" : "(" + translated.joined(separator: " OR ") + ")"
            case .not:
                // A comparison with NULL is false in memory, unknown in SQL: NOT must see false.
                guard translated.count == 1 else { return nil }
                return "(NOT COALESCE(\(translated[0]), FALSE))"
            @unknown default: return nil
            }
        case let comparison as NSComparisonPredicate:
            return translate(comparison, entity: entity)
        default:
            guard type(of: predicate) == NSPredicate.self else { return nil }
            switch predicate.predicateFormat {
            case "TRUEPREDICATE": return "TRUE"
            case "FALSEPREDICATE": return "FALSE"
            default: return nil
            }
        }
    }

    private func translate(_ comparison: NSComparisonPredicate, entity: PostgreSQLEntity) -> String? {
        guard comparison.comparisonPredicateModifier == .direct, comparison.customSelector == nil,
            !comparison.options.contains(.diacriticInsensitive)
        else { return nil }
        var left = comparison.leftExpression
        var right = comparison.rightExpression
        var operation = comparison.predicateOperatorType
        if left.expressionType == .constantValue,
            [.keyPath, .evaluatedObject, .variable].contains(right.expressionType)
        {
            guard let flipped = Self.flipped(operation) else { return nil }
            swap(&left, &right)
            operation = flipped
        }
        let constantValue: Any?
        switch right.expressionType {
        case .constantValue:
            constantValue = right.constantValue
        case .aggregate:
            // `IN {3, 9}` and `BETWEEN {0, 6}`: a collection of constants.
            guard let members = right.collection as? [NSExpression],
                members.allSatisfy({ $0.expressionType == .constantValue })
            else { return nil }
            constantValue = members.map { $0.constantValue ?? NSNull() }
        default:
            return nil
        }
        let operand: Operand?
        switch left.expressionType {
        case .keyPath: operand = resolve(left.keyPath, entity: entity)
        // A having predicate names result columns by key or by variable (`$count`), as memory substitutes them.
        case .variable: operand = resultColumns[left.variable]
        case .evaluatedObject: operand = .object(sql: "t0.\"Z_PK\"", table: entity.table.name)
        default: operand = nil
        }
        guard let operand else { return nil }
        let caseInsensitive = comparison.options.contains(.caseInsensitive)
        let constant = Self.unwrap(constantValue)
        switch operand {
        case .attribute(let sql, let type):
            return attributeComparison(
                sql, type: type, operation: operation, constant: constant, caseInsensitive: caseInsensitive)
        case .toOne(let sql, let table), .object(let sql, let table):
            guard !caseInsensitive else { return nil }
            return keyComparison(sql, table: table, operation: operation, constant: constant)
        }
    }

    private static func flipped(_ operation: NSComparisonPredicate.Operator) -> NSComparisonPredicate.Operator? {
        switch operation {
        case .equalTo, .notEqualTo: return operation
        case .lessThan: return .greaterThan
        case .lessThanOrEqualTo: return .greaterThanOrEqualTo
        case .greaterThan: return .lessThan
        case .greaterThanOrEqualTo: return .lessThanOrEqualTo
        default: return nil
        }
    }

    private static func unwrap(_ value: Any?) -> Any? {
        guard let value else { return nil }
        if value is NSNull { return nil }
        return value
    }

    private static func elements(_ value: Any?) -> [Any?]? {
        switch value {
        case let array as [Any]: return array.map { unwrap($0) }
        case let array as NSArray: return array.map { unwrap($0) }
        case let set as NSSet: return set.allObjects.map { unwrap($0) }
        case let set as Set<AnyHashable>: return set.map { unwrap($0.base) }
        case let set as NSOrderedSet: return set.array.map { unwrap($0) }
        default: return nil
        }
    }

    private func attributeComparison(
        _ sql: String, type: NSAttributeType, operation: NSComparisonPredicate.Operator, constant: Any?,
        caseInsensitive: Bool
    ) -> String? {
        let isString = type == .stringAttributeType
        if caseInsensitive, !isString || !foldsCase { return nil }
        let column = caseInsensitive ? "lower(\(sql))" : sql
        func value(_ constant: Any?) -> String? {
            guard let parameter = self.parameter(constant, type: type) else { return nil }
            return caseInsensitive ? "lower(\(parameter))" : parameter
        }
        switch operation {
        case .equalTo, .notEqualTo:
            guard let constant else {
                return operation == .equalTo ? "(\(sql) IS NULL)" : "(\(sql) IS NOT NULL)"
            }
            guard let parameter = value(constant) else { return nil }
            return operation == .equalTo
                ? "(\(column) = \(parameter))" : "(\(column) <> \(parameter) OR \(sql) IS NULL)"
        case .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo:
            guard constant != nil, let parameter = value(constant) else { return nil }
            let symbol = [.lessThan: "<", .lessThanOrEqualTo: "<=", .greaterThan: ">", .greaterThanOrEqualTo: ">="][
                operation]!
            let collation = isString ? " COLLATE \"C\"" : ""
            return "(\(column)\(collation) \(symbol) \(parameter))"
        case .in:
            guard let members = Self.elements(constant), members.allSatisfy({ $0 != nil }) else { return nil }
            guard !members.isEmpty else { return "FALSE" }
            var parameters: [String] = []
            for member in members {
                guard let parameter = value(member) else { return nil }
                parameters.append(parameter)
            }
            return "(\(column) IN (\(parameters.joined(separator: ", "))))"
        case .between:
            guard let bounds = Self.elements(constant), bounds.count == 2, let low = value(bounds[0]),
                let high = value(bounds[1])
            else { return nil }
            let collation = isString ? " COLLATE \"C\"" : ""
            return "(\(column)\(collation) BETWEEN \(low) AND \(high))"
        case .beginsWith, .endsWith, .contains, .like:
            guard isString, let text = constant as? String ?? (constant as? NSString).map({ $0 as String }),
                !text.utf8.contains(0)
            else { return nil }
            let escaped = Self.escapeLike(text)
            let pattern: String
            switch operation {
            case .beginsWith: pattern = escaped + "%"
            case .endsWith: pattern = "%" + escaped
            case .contains: pattern = "%" + escaped + "%"
            default: pattern = Self.likePattern(text)
            }
            let parameter = bind(pattern, "text")
            return "(\(column) LIKE \(caseInsensitive ? "lower(\(parameter))" : parameter))"
        default:
            return nil
        }
    }

    /// `%`, `_` and `\` taken literally in a LIKE pattern (backslash is PostgreSQL's default escape).
    static func escapeLike(_ text: String) -> String {
        var result = ""
        for character in text {
            if character == "%" || character == "_" || character == "\\" { result.append("\\") }
            result.append(character)
        }
        return result
    }

    /// Core Data's LIKE wildcards (`*` any run, `?` one character, `\` escaping the next) as PostgreSQL's.
    static func likePattern(_ text: String) -> String {
        var result = ""
        var escaping = false
        for character in text {
            if escaping {
                result += escapeLike(String(character))
                escaping = false
                continue
            }
            switch character {
            case "\\": escaping = true
            case "*": result.append("%")
            case "?": result.append("_")
            default: result += escapeLike(String(character))
            }
        }
        return result
    }

    /// A bound parameter for `constant` compared with a column of `type`, or `nil` if the constant is not a value
    /// of that type (the comparison is then left to in-memory evaluation, which converts as Core Data does).
    private func parameter(_ constant: Any?, type: NSAttributeType) -> String? {
        guard let constant else { return nil }
        switch type {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .doubleAttributeType,
            .floatAttributeType:
            guard let number = Self.number(constant) else { return nil }
            if let integer = number.integer { return bind(String(integer), "bigint") }
            return bind(PostgreSQLValueCoding.text(number.double), "double precision")
        case .decimalAttributeType:
            if let decimal = constant as? NSDecimalNumber { return bind(decimal.stringValue, "numeric") }
            if let decimal = constant as? Decimal {
                return bind(NSDecimalNumber(decimal: decimal).stringValue, "numeric")
            }
            guard let number = Self.number(constant), number.double.isFinite else { return nil }
            if let integer = number.integer { return bind(String(integer), "numeric") }
            return bind(PostgreSQLValueCoding.text(number.double), "double precision")
        case .booleanAttributeType:
            if let flag = constant as? Bool { return bind(flag ? "true" : "false", "boolean") }
            guard let number = Self.number(constant) else { return nil }
            return bind(number.double != 0 ? "true" : "false", "boolean")
        case .stringAttributeType:
            guard let text = constant as? String ?? (constant as? NSString).map({ $0 as String }),
                !text.utf8.contains(0)
            else { return nil }
            return bind(text, "text")
        case .dateAttributeType:
            guard let date = constant as? Date else { return nil }
            return bind(PostgreSQLValueCoding.text(date.timeIntervalSinceReferenceDate), "double precision")
        case .binaryDataAttributeType:
            guard let data = constant as? Data else { return nil }
            return bind(PostgreSQLValueCoding.hex(data), "bytea")
        case .UUIDAttributeType:
            guard let uuid = constant as? UUID else { return nil }
            return bind(uuid.uuidString, "uuid")
        case .URIAttributeType:
            guard let url = constant as? URL else { return nil }
            return bind(url.absoluteString, "text")
        default:
            return nil
        }
    }

    private static func number(_ constant: Any) -> (integer: Int64?, double: Double)? {
        // NSNumber first: on Linux an NSNumber holding 0 or 1 also casts to Bool.
        if let value = constant as? NSNumber, !(constant is String), !(constant is NSString) {
            let double = value.doubleValue
            let integer = value.int64Value
            return (Double(integer) == double ? integer : nil, double)
        }
        switch constant {
        case let value as Bool: return (value ? 1 : 0, value ? 1 : 0)
        case let value as Int: return (Int64(value), Double(value))
        case let value as Int64: return (value, Double(value))
        case let value as Int32: return (Int64(value), Double(value))
        case let value as Int16: return (Int64(value), Double(value))
        case let value as Double: return (Int64(exactly: value), value)
        case let value as Float: return (Int64(exactly: Double(value)), Double(value))
        default: return nil
        }
    }

    /// A comparison of a key (a to-one's foreign key, or the object's own) with objects or IDs.
    private func keyComparison(_ sql: String, table: String, operation: NSComparisonPredicate.Operator, constant: Any?)
        -> String?
    {
        /// The key of an object of `table` in this store; `.none` for one that no row of the table can name.
        enum Key {
            case key(Int64)
            case none
        }
        func key(_ value: Any?) -> Key? {
            let objectID: NSManagedObjectID
            switch value {
            case let object as NSManagedObject: objectID = object.objectID
            case let id as NSManagedObjectID: objectID = id
            default: return nil
            }
            guard let key = store.key(of: objectID), let mapped = schema.entity(objectID.entity),
                mapped.table.name == table
            else { return Key.none }
            return .key(key)
        }
        switch operation {
        case .equalTo, .notEqualTo:
            guard let constant else {
                return operation == .equalTo ? "(\(sql) IS NULL)" : "(\(sql) IS NOT NULL)"
            }
            guard let found = key(constant) else { return nil }
            guard case .key(let value) = found else { return operation == .equalTo ? "FALSE" : "TRUE" }
            let parameter = bind(String(value), "bigint")
            return operation == .equalTo ? "(\(sql) = \(parameter))" : "(\(sql) <> \(parameter) OR \(sql) IS NULL)"
        case .in:
            guard let members = Self.elements(constant) else { return nil }
            var parameters: [String] = []
            for member in members {
                guard let found = key(member) else { return nil }
                if case .key(let value) = found { parameters.append(bind(String(value), "bigint")) }
            }
            return parameters.isEmpty ? "FALSE" : "(\(sql) IN (\(parameters.joined(separator: ", "))))"
        default:
            return nil
        }
    }
}
