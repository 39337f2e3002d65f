/// The SQL of one fetch and its arguments.
struct SQLiteFetchPlan {
    var sql: String
    var arguments: [SQLiteValue]
    /// Whether the SQL applies the whole request (predicate, order, offset, limit). When it does not, the rows are
    /// candidates (a superset, in primary-key order) that the caller filters, sorts and limits in memory.
    var isComplete: Bool
    /// Why the SQL does not apply the whole request, when it does not.
    var untranslatable: [String] = []
    /// Whether the rows are put in primary-key order once read: the SQL has no `ORDER BY`, so that SQLite may take
    /// them from an index (see `SQLiteQueryGenerator.plan`).
    var sortsByKey = false
}

/// Turns fetch requests into SQL over the store's tables (STYLE.md: SQL generation has its own files and its own
/// context object, `SQLiteGenerationContext`, for aliases and bound arguments).
struct SQLiteQueryGenerator {
    let context: SQLiteGenerationContext

    init(mapping: SQLiteModelMapping, store: NSPersistentStore) {
        context = SQLiteGenerationContext(mapping: mapping, store: store)
    }

    /// What a fetch selects.
    enum Selection {
        /// Every column: rows with their values.
        case rows
        /// `Z_PK`, `Z_ENT`, `Z_OPT` only: rows that become faults.
        case keys
        /// `Z_PK`, `Z_ENT`, `Z_OPT` and the columns of the named properties (of the entity and its subentities):
        /// rows of partial faults. The other columns are selected as NULL, so that rows decode as full ones do.
        case properties(Set<String>)
        /// The number of matching rows.
        case count
    }

    /// The SQL for `request` on the objects of `entity`.
    func plan(_ request: NSFetchRequest<NSFetchRequestResult>, entity: SQLiteEntityMapping, selection: Selection)
        -> SQLiteFetchPlan
    {
        let scope = SQLiteScope(alias: "t0", entity: entity)
        let filtered = filter(request.predicate, includesSubentities: request.includesSubentities, in: scope)
        let conditions = filtered.conditions
        var untranslatable = filtered.untranslatable
        var isComplete = untranslatable.isEmpty
        var order: [String] = []
        if isComplete, let descriptors = request.sortDescriptors, !descriptors.isEmpty {
            let checkpoint = context.checkpoint(scope)
            do {
                order = try descriptors.map { try orderTerm($0, in: scope) }
            } catch {
                context.restore(checkpoint, scope)
                order = []
                isComplete = false
                untranslatable.append((error as? SQLiteUntranslatable)?.reason ?? "\(error)")
            }
        }
        let whereClause = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        var limitClause = ""
        if isComplete, request.fetchLimit > 0 || request.fetchOffset > 0 {
            let limit = request.fetchLimit > 0 ? Int64(request.fetchLimit) : -1
            limitClause =
                " LIMIT \(context.bind(.integer(limit))) OFFSET \(context.bind(.integer(Int64(request.fetchOffset))))"
        }
        // Results come in primary-key order, or sorted with the primary key breaking ties, so that they are
        // deterministic and equal to a stable in-memory sort of the candidates. Without sort descriptors or a limit,
        // the rows are put in key order after they are read instead of by `ORDER BY Z_PK`, which makes SQLite scan
        // the whole table in key order rather than search an index on the predicate's column and sort.
        let sortsByKey = order.isEmpty && limitClause.isEmpty
        order.append("t0.Z_PK")
        let orderClause = sortsByKey ? "" : " ORDER BY " + order.joined(separator: ", ")
        let from = scope.fromClause
        let sql: String
        switch selection {
        case .count where isComplete:
            sql =
                limitClause.isEmpty
                ? "SELECT COUNT(*) FROM \(from)\(whereClause)"
                : "SELECT COUNT(*) FROM (SELECT 1 FROM \(from)\(whereClause)\(limitClause))"
        case .properties(let names) where isComplete:
            sql =
                "SELECT \(partialSelectList(entity, names)) FROM \(from)\(whereClause)\(orderClause)\(limitClause)"
        case .keys where isComplete:
            sql =
                "SELECT t0.Z_PK, t0.Z_ENT, t0.Z_OPT FROM \(from)\(whereClause)\(orderClause)\(limitClause)"
        default:
            // Rows for memory to finish must carry their values: the predicate is evaluated against them.
            sql =
                "SELECT \(entity.table.selectList(alias: "t0")) FROM \(from)\(whereClause)\(orderClause)\(limitClause)"
        }
        return SQLiteFetchPlan(
            sql: sql, arguments: context.arguments, isComplete: isComplete, untranslatable: untranslatable,
            sortsByKey: sortsByKey)
    }

    /// The select list of a partial fetch: the keys, then each column of the table if it holds a named property of
    /// the entity or a subentity (a to-one relationship's entity column with its key), else NULL.
    private func partialSelectList(_ entity: SQLiteEntityMapping, _ names: Set<String>) -> String {
        var selected = Set<Int>()
        for number in entity.kindNumbers {
            guard let kind = context.mapping.entity(number: number) else { continue }
            for (index, slot) in kind.slots.enumerated() where names.contains(kind.entity._caches.slots[index].name) {
                switch slot {
                case .attribute(let column, _, _), .derived(let column, _, _):
                    selected.insert(column)
                case .toOne(let foreignKey, let entityColumn, _):
                    selected.insert(foreignKey)
                    if let entityColumn { selected.insert(entityColumn) }
                default:
                    break
                }
            }
        }
        let columns = entity.table.columns.indices.map {
            selected.contains($0) ? "t0.\(entity.table.columns[$0].name)" : "NULL"
        }
        return (["t0.Z_PK", "t0.Z_ENT", "t0.Z_OPT"] + columns).joined(separator: ", ")
    }

    /// The highest predicate translated to SQL; a higher one is left to memory. SQLite's parser gives up on SQL
    /// nested about a hundred parentheses deep ("parser stack overflow"), and a level of a predicate takes up to two.
    static let maximumPredicateHeight = 40

    /// The conditions that select the rows of `scope`'s entity (with its subentities, if asked) that `predicate`
    /// matches, and why SQL cannot express the conjuncts it leaves out. Each conjunct that SQL can express narrows
    /// the rows even when another one cannot be expressed (the rows are then candidates for memory to finish).
    func filter(_ predicate: NSPredicate?, includesSubentities: Bool, in scope: SQLiteScope) -> (
        conditions: [String], untranslatable: [String]
    ) {
        let entity = scope.entity
        var conditions: [String] = []
        let kinds = includesSubentities ? entity.kindNumbers : [entity.number]
        // The table holds its root entity's kinds, and an entity's kinds are among them: all of them need no test.
        if kinds.count != context.mapping.entity(number: entity.table.rootNumber)?.kindNumbers.count {
            conditions.append(SQLiteEntityMapping.condition(scope.alias, isOneOf: kinds))
        }
        var untranslatable: [String] = []
        if let predicate {
            for conjunct in Self.conjuncts(of: predicate) {
                guard conjunct.height <= Self.maximumPredicateHeight else {
                    untranslatable.append("a predicate nested more than \(Self.maximumPredicateHeight) levels deep")
                    continue
                }
                let checkpoint = context.checkpoint(scope)
                do {
                    conditions.append(try condition(conjunct, in: scope))
                } catch {
                    context.restore(checkpoint, scope)
                    untranslatable.append((error as? SQLiteUntranslatable)?.reason ?? "\(error)")
                }
            }
        }
        return (conditions, untranslatable)
    }

    /// The top-level conjuncts of `predicate`.
    static func conjuncts(of predicate: NSPredicate) -> [NSPredicate] {
        if let compound = predicate as? NSCompoundPredicate, compound.compoundPredicateType == .and {
            return compound.predicates.flatMap(conjuncts)
        }
        return [predicate]
    }

    /// `expression ASC|DESC` for a sort descriptor, if SQL orders exactly as the descriptor does in memory:
    /// `compare:` on numbers, dates, strings (by code point), data, UUIDs and URIs; `caseInsensitiveCompare:` on
    /// strings.
    func orderTerm(_ descriptor: NSSortDescriptor, in scope: SQLiteScope) throws -> String {
        guard let selector = descriptor.selector, let key = descriptor.key, !key.isEmpty else {
            throw SQLiteUntranslatable("a comparator-based sort descriptor")
        }
        guard case .value(let sql, let kind, true) = try operand(KeyValueCodingPath.split(key)[...], in: scope) else {
            throw SQLiteUntranslatable("sorting by '\(key)', which is not an attribute")
        }
        let term: String
        switch selector.name {
        case "compare:":
            term = sql
        case "caseInsensitiveCompare:" where kind == .string:
            term = "\(SQLiteFunctions.fold)(\(sql), \(NSComparisonPredicate.Options.caseInsensitive.rawValue))"
        default:
            throw SQLiteUntranslatable("sorting with \(selector.name)")
        }
        return term + (descriptor.ascending ? " ASC" : " DESC")
    }
}
