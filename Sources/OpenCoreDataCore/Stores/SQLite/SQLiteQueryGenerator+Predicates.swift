import Foundation

// Predicates to SQL. Each comparison becomes SQL that selects exactly the rows the in-memory evaluator accepts:
//
// - A comparison yields 1, 0 or NULL; NOT is `(…) IS NOT 1`, so that a NULL (a missing value) negates to true as
//   it does in memory. Equality is NULL-safe where memory treats nil as a value (`IS`, `IS NOT`).
// - `[c]`, `[d]` and `[cd]` fold both sides with `ocd_fold`, which calls the evaluator's folding. BEGINSWITH becomes
//   a GLOB pattern (escaped, so `*`, `?` and `[` in values stay literal) and ENDSWITH a comparison of UTF-8 bytes,
//   which text containing NUL needs; CONTAINS, LIKE and MATCHES call `ocd_compare`, the evaluator's own operator.
// - Constants of a kind a column can never match (a string against a number) fold to 0 or 1 here, because SQLite's
//   type affinity would otherwise convert them and match.
// - ANY/ALL over to-many relationships become EXISTS/NOT EXISTS subqueries; `@count`, `@sum`, `@avg`, `@min`,
//   `@max` and `SUBQUERY(…).@count` become scalar subqueries.
// Anything else throws `SQLiteUntranslatable`, and the store leaves it to memory.

extension SQLiteQueryGenerator {
    /// SQL for `predicate` evaluated against the rows of `scope`.
    func condition(_ predicate: NSPredicate, in scope: SQLiteScope) throws -> String {
        switch predicate {
        case let compound as NSCompoundPredicate:
            let parts = try compound.predicates.map { try condition($0, in: scope) }
            switch compound.compoundPredicateType {
            case .and: return parts.isEmpty ? "1" : "(" + parts.joined(separator: " AND ") + ")"
            case .or: return parts.isEmpty ? "0" : "(" + parts.joined(separator: " OR ") + ")"
            case .not: return "(\(parts[0])) IS NOT 1"
            }
        case let comparison as NSComparisonPredicate:
            return try self.comparison(comparison, in: scope)
        default:
            switch predicate.predicateKind {
            case .value(let value): return value ? "1" : "0"
            case .decoded(let inner): return try condition(inner, in: scope)
            case .block, .subclass: throw SQLiteUntranslatable("a block predicate")
            }
        }
    }

    private func comparison(_ predicate: NSComparisonPredicate, in scope: SQLiteScope) throws -> String {
        let type = predicate.predicateOperatorType
        guard type != .customSelector else { throw SQLiteUntranslatable("a custom selector") }
        let options = predicate.options.intersection([.caseInsensitive, .diacriticInsensitive])
        let lhs = try operand(predicate.leftExpression, in: scope)
        let rhs = try operand(predicate.rightExpression, in: scope)
        switch predicate.comparisonPredicateModifier {
        case .direct:
            return try compare(type, options, lhs, rhs)
        case .any, .all:
            let all = predicate.comparisonPredicateModifier == .all
            switch lhs {
            case .toMany(let path):
                return try quantified(path, all: all) { element in try compare(type, options, element, rhs) }
            case .value(let sql, _, _), .object(let sql, _):
                // A lone value: memory ranges over it alone, and over nothing when it is nil (ANY is then false,
                // ALL true).
                let compared = try compare(type, options, lhs, rhs)
                return all ? "(\(sql) IS NULL OR \(compared))" : "(\(sql) IS NOT NULL AND \(compared))"
            case .constant:
                throw SQLiteUntranslatable("ANY or ALL over a constant")
            }
        }
    }

    // MARK: Comparing operands

    func compare(
        _ type: NSComparisonPredicate.Operator, _ options: NSComparisonPredicate.Options, _ lhs: SQLiteOperand,
        _ rhs: SQLiteOperand
    ) throws -> String {
        switch (lhs, rhs) {
        case (.toMany(let path), _) where type == .contains:
            // A collection contains an element: some destination equals it.
            return try quantified(path, all: false) { element in try compare(.equalTo, options, element, rhs) }
        case (_, .toMany(let path)) where type == .in:
            return try quantified(path, all: false) { element in try compare(.equalTo, options, lhs, element) }
        case (.toMany, _), (_, .toMany):
            throw SQLiteUntranslatable("a to-many key path compared as a whole")
        case (.constant(let a), .constant(let b)):
            return PredicateComparisonOperator.evaluate(type, a, b, options: options) ? "1" : "0"
        case (.value, .constant(let constant)), (.object, .constant(let constant)):
            return try compare(type, options, lhs, constant: constant)
        case (.constant(let constant), .value), (.constant(let constant), .object):
            if let mirrored = type.mirrored { return try compare(mirrored, options, rhs, constant: constant) }
            guard case .value(let sql, .string, true) = rhs,
                let string = constant.flatMap(PredicateValueComparison.string)
            else { throw SQLiteUntranslatable("a string operator with a constant left of a non-string") }
            return
                "\(SQLiteFunctions.compare)(\(type.rawValue), \(options.rawValue), \(context.bind(.text(string))), \(sql))"
        case (.value(let a, let aKind, let aExact), .value(let b, let bKind, let bExact)):
            guard aExact, bExact, aKind.isComparable(with: bKind) else {
                throw SQLiteUntranslatable("values of different kinds, or an average, compared with each other")
            }
            return try compareValues(type, options, a, b, kind: aKind)
        case (.object(let a, let aEntity), .object(let b, let bEntity)):
            guard aEntity.table === bEntity.table else {
                throw SQLiteUntranslatable("objects of different entity hierarchies compared")
            }
            switch type {
            case .equalTo: return "\(a) IS \(b)"
            case .notEqualTo: return "\(a) IS NOT \(b)"
            default: throw SQLiteUntranslatable("objects compared with \(type)")
            }
        default:
            throw SQLiteUntranslatable("operands that cannot be compared in SQL")
        }
    }

    /// Two SQL values of comparable kinds.
    private func compareValues(
        _ type: NSComparisonPredicate.Operator, _ options: NSComparisonPredicate.Options, _ a: String, _ b: String,
        kind: SQLiteValueKind
    ) throws -> String {
        let folds = kind == .string && !options.isEmpty
        let left = folds ? fold(a, options) : a
        let right = folds ? fold(b, options) : b
        switch type {
        case .equalTo: return "\(left) IS \(right)"
        case .notEqualTo: return "\(left) IS NOT \(right)"
        case .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo:
            // Memory orders URLs with no comparison: never true.
            if kind == .uri { return "0" }
            return "\(left) \(type.sqlOperator) \(right)"
        case .beginsWith, .endsWith, .contains, .like, .matches, .in:
            guard kind == .string else { throw SQLiteUntranslatable("a string operator on non-string values") }
            return "\(SQLiteFunctions.compare)(\(type.rawValue), \(options.rawValue), \(a), \(b))"
        case .between, .customSelector:
            throw SQLiteUntranslatable("\(type) between two key paths")
        }
    }

    /// A column (or object reference) against a constant.
    private func compare(
        _ type: NSComparisonPredicate.Operator, _ options: NSComparisonPredicate.Options, _ column: SQLiteOperand,
        constant raw: Any?
    ) throws -> String {
        let constant = PredicateValueComparison.unwrap(raw)
        switch column {
        case .object(let sql, let entity):
            return try compareObject(type, sql, entity, constant)
        case .value(let sql, let kind, let exact):
            guard let constant else {
                switch type {
                case .equalTo: return "\(sql) IS NULL"
                case .notEqualTo: return "\(sql) IS NOT NULL"
                default: return "0"
                }
            }
            if !exact {
                // An average is a float in SQL and a decimal in memory: compare it only with integers.
                guard type.isOrderingOrEquality,
                    case .value(.integer) = try SQLiteBinding.binding(of: constant, for: .number)
                else { throw SQLiteUntranslatable("an average compared with a non-integer") }
            }
            return try compareColumn(type, options, sql, kind, constant)
        default:
            throw SQLiteUntranslatable("a constant compared with a collection")
        }
    }

    /// `column IN (…)` for a Swift array of integers compared with a number column, or of strings compared with a
    /// string column without options: the SQL and the bound values the general path below writes for it, without
    /// boxing each element in `Any` and asking its type (2,300 instructions a value, for `serial IN %@` with 1,000).
    /// `nil` for any other list.
    private func typedInList(_ constant: Any, column: String, kind: SQLiteValueKind, folds: Bool) -> String? {
        let count: Int
        switch Swift.type(of: constant) {
        case let type where type == [Int64].self && kind == .number:
            let values = constant as! [Int64]
            for value in values { _ = context.bind(.integer(value)) }
            count = values.count
        case let type where type == [Int].self && kind == .number:
            let values = constant as! [Int]
            for value in values { _ = context.bind(.integer(Int64(value))) }
            count = values.count
        case let type where type == [String].self && kind == .string && !folds:
            let values = constant as! [String]
            for value in values { _ = context.bind(.text(value)) }
            count = values.count
        default:
            return nil
        }
        guard count > 0 else { return "0" }
        // The placeholders written into one buffer: appending them one by one (`String(repeating:count:)` does)
        // took more instructions than binding the values.
        let placeholders = String(unsafeUninitializedCapacity: 3 * count - 2) { buffer in
            buffer[0] = UInt8(ascii: "?")
            var index = 1
            for _ in 1..<count {
                buffer[index] = UInt8(ascii: ",")
                buffer[index + 1] = UInt8(ascii: " ")
                buffer[index + 2] = UInt8(ascii: "?")
                index += 3
            }
            return index
        }
        return "(\(column) IN (\(placeholders)))"
    }

    private func compareColumn(
        _ type: NSComparisonPredicate.Operator, _ options: NSComparisonPredicate.Options, _ sql: String,
        _ kind: SQLiteValueKind, _ constant: Any
    ) throws -> String {
        let folds = kind == .string && !options.isEmpty
        let column = folds ? fold(sql, options) : sql
        /// The constant bound for comparison with the column, folded like it; `nil` if it can never match.
        func bound(_ value: Any) throws -> String? {
            guard case .value(let binding) = try SQLiteBinding.binding(of: value, for: kind) else { return nil }
            if folds, case .text(let string) = binding {
                return context.bind(.text(PredicateStringFolding.fold(string, options: options)))
            }
            return context.bind(binding)
        }
        switch type {
        case .equalTo, .notEqualTo, .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo:
            guard let value = try bound(constant) else { return type == .notEqualTo ? "1" : "0" }
            switch type {
            case .equalTo: return "\(column) = \(value)"
            case .notEqualTo: return "\(column) IS NOT \(value)"
            default: return kind == .uri ? "0" : "\(column) \(type.sqlOperator) \(value)"
            }
        case .between:
            guard kind != .uri, let bounds = PredicateValueComparison.elements(constant), bounds.count == 2,
                let low = PredicateValueComparison.unwrap(bounds[0]),
                let high = PredicateValueComparison.unwrap(bounds[1])
            else { return "0" }
            guard let lowSQL = try bound(low), let highSQL = try bound(high) else { return "0" }
            return "\(column) BETWEEN \(lowSQL) AND \(highSQL)"
        case .in:
            if let string = PredicateValueComparison.string(constant) {
                // IN against a string is a substring test.
                guard kind == .string else { return "0" }
                return "\(SQLiteFunctions.compare)(\(type.rawValue), \(options.rawValue), \(sql), "
                    + "\(context.bind(.text(string))))"
            }
            if let list = typedInList(constant, column: column, kind: kind, folds: folds) { return list }
            guard let elements = PredicateValueComparison.elements(constant) else { return "0" }
            var placeholders: [String] = []
            var matchesNil = false
            for element in elements {
                guard let element = PredicateValueComparison.unwrap(element) else {
                    matchesNil = true
                    continue
                }
                if let placeholder = try bound(element) { placeholders.append(placeholder) }
            }
            var parts: [String] = []
            if !placeholders.isEmpty { parts.append("\(column) IN (\(placeholders.joined(separator: ", ")))") }
            if matchesNil { parts.append("\(sql) IS NULL") }
            return parts.isEmpty ? "0" : "(" + parts.joined(separator: " OR ") + ")"
        case .contains, .like, .matches:
            guard kind == .string, let string = PredicateValueComparison.string(constant) else { return "0" }
            return "\(SQLiteFunctions.compare)(\(type.rawValue), \(options.rawValue), \(sql), "
                + "\(context.bind(.text(string))))"
        case .beginsWith, .endsWith:
            guard kind == .string, let string = PredicateValueComparison.string(constant), !string.isEmpty else {
                return "0"
            }
            let affix = folds ? PredicateStringFolding.fold(string, options: options) : string
            // SQLite's GLOB (like its LIKE and substr of text) reads text up to its first NUL. A prefix without NUL
            // still answers right: a value whose first NUL comes before the prefix's length cannot begin with it.
            // So a prefix without NUL becomes a GLOB pattern of literal characters, which tests it byte by byte in
            // UTF-8 as the evaluator does and lets SQLite use an index; anything else compares the UTF-8 bytes.
            if type == .beginsWith, !affix.utf8.contains(0) {
                return "\(column) GLOB \(context.bind(.text(Self.globEscaped(affix) + "*")))"
            }
            let bytes = Data(affix.utf8)
            let start = context.bind(.integer(type == .beginsWith ? 1 : -Int64(bytes.count)))
            return "substr(CAST(\(column) AS BLOB), \(start), \(context.bind(.integer(Int64(bytes.count))))) = "
                + context.bind(.blob(bytes))
        case .customSelector:
            throw SQLiteUntranslatable("a custom selector")
        }
    }

    /// An object reference (`SELF`, a to-one relationship) against an object, an object ID or a collection of them.
    private func compareObject(
        _ type: NSComparisonPredicate.Operator, _ sql: String, _ entity: SQLiteEntityMapping, _ constant: Any?
    ) throws -> String {
        switch type {
        case .equalTo, .notEqualTo:
            guard let constant else { return type == .equalTo ? "\(sql) IS NULL" : "\(sql) IS NOT NULL" }
            guard let key = primaryKey(of: constant, kindOf: entity) else { return type == .equalTo ? "0" : "1" }
            return type == .equalTo
                ? "\(sql) = \(context.bind(.integer(key)))" : "\(sql) IS NOT \(context.bind(.integer(key)))"
        case .in:
            guard let constant, let elements = PredicateValueComparison.elements(constant) else { return "0" }
            var placeholders: [String] = []
            var matchesNil = false
            for element in elements {
                guard let element = PredicateValueComparison.unwrap(element) else {
                    matchesNil = true
                    continue
                }
                if let key = primaryKey(of: element, kindOf: entity) {
                    placeholders.append(context.bind(.integer(key)))
                }
            }
            var parts: [String] = []
            if !placeholders.isEmpty { parts.append("\(sql) IN (\(placeholders.joined(separator: ", ")))") }
            if matchesNil { parts.append("\(sql) IS NULL") }
            return parts.isEmpty ? "0" : "(" + parts.joined(separator: " OR ") + ")"
        default:
            throw SQLiteUntranslatable("an object compared with \(type)")
        }
    }

    /// The primary key of a saved object (or object ID) of this store whose entity is `entity` or one of its
    /// subentities; `nil` for anything that cannot be such a row.
    private func primaryKey(of value: Any, kindOf entity: SQLiteEntityMapping) -> Int64? {
        let objectID: NSManagedObjectID
        if let object = value as? NSManagedObject {
            objectID = object.objectID
        } else if let id = value as? NSManagedObjectID {
            objectID = id
        } else {
            return nil
        }
        guard objectID._isInStore(context.store), let key = objectID._primaryKey,
            let mapping = context.mapping.entity(objectID._entity), entity.kindNumbers.contains(mapping.number)
        else { return nil }
        return key
    }

    private func fold(_ sql: String, _ options: NSComparisonPredicate.Options) -> String {
        "\(SQLiteFunctions.fold)(\(sql), \(options.rawValue))"
    }

    /// `text` as a GLOB pattern that matches only itself.
    static func globEscaped(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "*": escaped += "[*]"
            case "?": escaped += "[?]"
            case "[": escaped += "[[]"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }

    // MARK: To-many relationships

    /// `EXISTS` (some element satisfies `body`) or, for ALL, `NOT EXISTS` (an element that does not). The elements
    /// are the values of the key path after the relationship, one per destination; missing values are not elements,
    /// as a key applied to a set drops them in memory.
    func quantified(_ path: SQLiteToManyPath, all: Bool, _ body: (SQLiteOperand) throws -> String) throws -> String {
        let inner = SQLiteScope(alias: context.newAlias("s"), entity: path.destination)
        let element = try operand(path.rest, in: inner, ofElements: true)
        var correlation: [String] = []
        if !path.rest.isEmpty {
            switch element {
            case .value(let sql, _, _), .object(let sql, _): correlation.append("\(sql) IS NOT NULL")
            default: break
            }
        }
        let test = try body(element)
        let (from, owner) = subqueryFrom(path, inner)
        let filter = ([owner] + correlation).joined(separator: " AND ")
        if all {
            return "NOT EXISTS (SELECT 1 FROM \(from) WHERE \(filter) AND (\(test)) IS NOT 1)"
        }
        return "EXISTS (SELECT 1 FROM \(from) WHERE \(filter) AND \(test))"
    }

    /// The FROM clause and the correlation of a subquery over a to-many relationship's destinations.
    func subqueryFrom(_ path: SQLiteToManyPath, _ inner: SQLiteScope) -> (from: String, correlation: String) {
        switch path.storage {
        case .foreignKey(_, let column, _):
            return (inner.fromClause, "\(inner.alias).\(column) = \(path.ownerAlias).Z_PK")
        case .join(let join):
            let joinAlias = context.newAlias("j")
            let from =
                [
                    "\(join.table) \(joinAlias) JOIN \(inner.entity.table.name) \(inner.alias) ON "
                        + "\(inner.alias).Z_PK = \(joinAlias).\(join.destinationColumn)"
                ] + inner.joins.map(\.sql)
            return (from.joined(separator: " "), "\(joinAlias).\(join.sourceColumn) = \(path.ownerAlias).Z_PK")
        }
    }

    /// `@count`, `@sum`, `@avg`, `@min` or `@max` of a to-many relationship. Reached through a to-one relationship
    /// that has no destination, the aggregate is NULL, as memory finds no collection to count.
    private func aggregate(_ path: SQLiteToManyPath, in scope: SQLiteScope) throws -> SQLiteOperand {
        guard path.ownerAlias != scope.alias else { return try aggregate(path) }
        switch try aggregate(path) {
        case .value(let sql, let kind, let exact):
            return .value("(CASE WHEN \(path.ownerAlias).Z_PK IS NULL THEN NULL ELSE \(sql) END)", kind, exact: exact)
        case let other:
            return other
        }
    }

    private func aggregate(_ path: SQLiteToManyPath) throws -> SQLiteOperand {
        guard let function = path.rest.first else { throw SQLiteUntranslatable("a to-many key path") }
        let arguments = path.rest.dropFirst()
        if function == "@count" {
            guard arguments.isEmpty else { throw SQLiteUntranslatable("a key path after @count") }
            switch path.storage {
            case .foreignKey(let table, let column, _):
                return .value(
                    "(SELECT COUNT(*) FROM \(table.name) WHERE \(column) = \(path.ownerAlias).Z_PK)", .number,
                    exact: true)
            case .join(let join):
                return .value(
                    "(SELECT COUNT(*) FROM \(join.table) WHERE \(join.sourceColumn) = \(path.ownerAlias).Z_PK)",
                    .number,
                    exact: true)
            }
        }
        guard arguments.count == 1, let key = arguments.first,
            let slot = path.destination.entity._caches.slotByName[key], slot < path.destination.slots.count
        else { throw SQLiteUntranslatable("\(function) over a key path that is not an attribute") }
        let column: Int
        let type: NSAttributeType
        switch path.destination.slots[slot] {
        case .attribute(let index, let attributeType, _), .derived(let index, let attributeType, _):
            column = index
            type = attributeType
        default:
            throw SQLiteUntranslatable("\(function) over a relationship")
        }
        guard let kind = SQLiteValueKind(type) else { throw SQLiteUntranslatable("\(function) over \(type)") }
        let inner = SQLiteScope(alias: context.newAlias("s"), entity: path.destination)
        let value = "\(inner.alias).\(path.destination.table.columns[column].name)"
        let (from, correlation) = subqueryFrom(path, inner)
        let integer = [
            .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .booleanAttributeType,
        ]
        .contains(type)
        switch function {
        case "@sum":
            // Memory sums in decimal; SQL sums integers exactly, floating point only approximately.
            guard integer else { throw SQLiteUntranslatable("@sum of non-integer values") }
            return .value("(SELECT IFNULL(SUM(\(value)), 0) FROM \(from) WHERE \(correlation))", .number, exact: true)
        case "@avg":
            guard integer else { throw SQLiteUntranslatable("@avg of non-integer values") }
            // Memory divides by the number of destinations, those without a value included.
            return .value(
                "(SELECT TOTAL(\(value)) / COUNT(*) FROM \(from) WHERE \(correlation))", .number, exact: false)
        case "@min", "@max":
            let name = function == "@min" ? "MIN" : "MAX"
            return .value("(SELECT \(name)(\(value)) FROM \(from) WHERE \(correlation))", kind, exact: true)
        default:
            throw SQLiteUntranslatable("the \(function) operator")
        }
    }

    /// `relationship.attribute.@count`: memory counts the set of the destinations' values, which holds each value
    /// once and no nil, as `COUNT(DISTINCT …)` counts.
    private func distinctCount(_ path: SQLiteToManyPath, in scope: SQLiteScope) throws -> SQLiteOperand {
        guard let key = path.rest.first, let slot = path.destination.entity._caches.slotByName[key],
            slot < path.destination.slots.count,
            case .attribute(let column, let type, _) = path.destination.slots[slot], SQLiteValueKind(type) != nil
        else { throw SQLiteUntranslatable("@count of a key path that is not an attribute") }
        let inner = SQLiteScope(alias: context.newAlias("s"), entity: path.destination)
        let value = "\(inner.alias).\(path.destination.table.columns[column].name)"
        let (from, correlation) = subqueryFrom(path, inner)
        let count = "(SELECT COUNT(DISTINCT \(value)) FROM \(from) WHERE \(correlation))"
        guard path.ownerAlias != scope.alias else { return .value(count, .number, exact: true) }
        return .value("(CASE WHEN \(path.ownerAlias).Z_PK IS NULL THEN NULL ELSE \(count) END)", .number, exact: true)
    }

    // MARK: Expressions

    /// What `expression` stands for, evaluated against the rows of `scope`.
    func operand(_ expression: NSExpression, in scope: SQLiteScope) throws -> SQLiteOperand {
        switch expression.kind {
        case .constant(let value):
            return .constant(value)
        case .evaluatedObject:
            return .object("\(scope.alias).Z_PK", scope.entity)
        case .variable(let name):
            if let column = context.resultColumns[name] { return column }
            guard let bound = context.variables[name] else { throw SQLiteUntranslatable("the variable $\(name)") }
            return .object("\(bound.alias).Z_PK", bound.entity)
        case .keyPath(_, let components, let base):
            if base == nil, components.count == 1, let column = context.resultColumns[components[0]] { return column }
            guard let base else { return try operand(components[...], in: scope) }
            switch base.kind {
            case .evaluatedObject:
                return try operand(components[...], in: scope)
            case .variable(let name):
                guard let bound = context.variables[name] else { throw SQLiteUntranslatable("the variable $\(name)") }
                return try operand(components[...], in: bound)
            case .subquery(let collection, let variable, let predicate) where components == ["@count"]:
                return try subqueryCount(collection, variable: variable, predicate: predicate, in: scope)
            default:
                throw SQLiteUntranslatable("a key path on a computed value")
            }
        default:
            guard Self.isConstant(expression) else { throw SQLiteUntranslatable("a computed expression") }
            return .constant(
                PredicateValueComparison.unwrap(
                    expression.value(nil, in: PredicateScope(variables: [:], context: nil))))
        }
    }

    /// The operand of a key path, walked from the rows of `scope`: to-one relationships join, a to-many one ends
    /// the walk (as a collection or an aggregate), an attribute ends it as a column.
    ///
    /// `ofElements` walks the rest of a key path after a to-many relationship, for each destination. Memory applies
    /// that rest to the whole collection instead; the two agree only while it crosses no further to-many
    /// relationship (`tags.items.@count` counts distinct sets of items in memory), so such paths are refused.
    func operand(_ components: ArraySlice<String>, in scope: SQLiteScope, ofElements: Bool = false) throws
        -> SQLiteOperand
    {
        var alias = scope.alias
        var mapping = scope.entity
        var index = components.startIndex
        while index < components.endIndex {
            let key = components[index]
            let isLast = index == components.endIndex - 1
            guard let slot = mapping.entity._caches.slotByName[key], slot < mapping.slots.count else {
                throw SQLiteUntranslatable("'\(key)' is not a stored property of entity '\(mapping.name)'")
            }
            switch mapping.slots[slot] {
            case .attribute(let column, let type, _), .derived(let column, let type, _):
                guard isLast else { throw SQLiteUntranslatable("a key path through attribute '\(key)'") }
                guard let kind = SQLiteValueKind(type) else {
                    throw SQLiteUntranslatable("attribute '\(key)' of type \(type)")
                }
                return .value("\(alias).\(mapping.table.columns[column].name)", kind, exact: true)
            case .toOne(let foreignKey, _, let relationship):
                let column = mapping.table.columns[foreignKey].name
                guard let destination = relationship._destinationEntity.flatMap(context.mapping.entity) else {
                    throw SQLiteUntranslatable("relationship '\(key)' leaves the store")
                }
                if isLast { return .object("\(alias).\(column)", destination) }
                alias = scope.join(from: alias, column: column, to: destination, context: context)
                mapping = destination
            case .toMany(let storage, let relationship):
                guard !ofElements else {
                    throw SQLiteUntranslatable("a key path through two to-many relationships")
                }
                guard let destination = relationship._destinationEntity.flatMap(context.mapping.entity) else {
                    throw SQLiteUntranslatable("relationship '\(key)' leaves the store")
                }
                let path = SQLiteToManyPath(
                    ownerAlias: alias, relationship: relationship, storage: storage, destination: destination,
                    rest: components[(index + 1)...])
                if let next = path.rest.first, next.hasPrefix("@") { return try aggregate(path, in: scope) }
                if path.rest.count == 2, path.rest.last == "@count" { return try distinctCount(path, in: scope) }
                return .toMany(path)
            case .none:
                throw SQLiteUntranslatable("'\(key)' is not stored")
            }
            index += 1
        }
        return .object("\(alias).Z_PK", mapping)
    }

    /// `SUBQUERY(collection, $variable, predicate).@count`.
    private func subqueryCount(
        _ collection: NSExpression, variable: String, predicate: NSPredicate, in scope: SQLiteScope
    ) throws -> SQLiteOperand {
        guard case .toMany(let path) = try operand(collection, in: scope), path.rest.isEmpty else {
            throw SQLiteUntranslatable("a SUBQUERY over something other than a to-many relationship")
        }
        let inner = SQLiteScope(alias: context.newAlias("s"), entity: path.destination)
        let saved = context.variables[variable]
        context.variables[variable] = inner
        defer { context.variables[variable] = saved }
        // Inside the subquery both `$variable` and plain key paths stand for the element, as in memory.
        let test = try condition(predicate, in: inner)
        let (from, correlation) = subqueryFrom(path, inner)
        return .value("(SELECT COUNT(*) FROM \(from) WHERE \(correlation) AND \(test))", .number, exact: true)
    }

    /// Whether `expression` reads nothing from the object (so it can be evaluated once, here).
    static func isConstant(_ expression: NSExpression) -> Bool {
        switch expression.kind {
        case .constant, .symbolicIndex: return true
        case .function(_, let target, let arguments):
            return (target.map(isConstant) ?? true) && arguments.allSatisfy(isConstant)
        case .aggregate(let expressions): return expressions.allSatisfy(isConstant)
        case .unionSet(let a, let b), .intersectSet(let a, let b), .minusSet(let a, let b):
            return isConstant(a) && isConstant(b)
        default: return false
        }
    }
}

extension NSComparisonPredicate.Operator {
    /// The operator with its operands swapped (`a < b` ⇔ `b > a`), for the comparison operators.
    var mirrored: NSComparisonPredicate.Operator? {
        switch self {
        case .lessThan: return .greaterThan
        case .lessThanOrEqualTo: return .greaterThanOrEqualTo
        case .greaterThan: return .lessThan
        case .greaterThanOrEqualTo: return .lessThanOrEqualTo
        case .equalTo, .notEqualTo: return self
        default: return nil
        }
    }

    var isOrderingOrEquality: Bool { mirrored != nil }

    var sqlOperator: String {
        switch self {
        case .lessThan: return "<"
        case .lessThanOrEqualTo: return "<="
        case .greaterThan: return ">"
        case .greaterThanOrEqualTo: return ">="
        case .equalTo: return "="
        case .notEqualTo: return "IS NOT"
        default: return ""
        }
    }
}
