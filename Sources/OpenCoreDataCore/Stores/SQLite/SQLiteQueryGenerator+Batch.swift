import Foundation

/// SQL and its arguments.
struct SQLiteStatementPlan {
    let sql: String
    let arguments: [SQLiteValue]
}

// Batch requests as SQL: an UPDATE or DELETE of the rows a predicate selects, as one statement. UPDATE and DELETE
// name one table (aliased `t0`, so that the predicate's SQL applies as it is); a predicate that needs joins (a key
// path through a to-one relationship) selects the rows' keys in a subquery that has them. A predicate or value that
// SQL cannot compute exactly as memory does throws `SQLiteUntranslatable`: a batch request never falls back to
// loading rows.

extension SQLiteQueryGenerator {
    /// The WHERE clause (with its leading space; empty when every row matches) selecting the rows of `entity` that
    /// `predicate` matches, for a statement on `entity`'s table aliased `t0`.
    func batchCondition(_ predicate: NSPredicate?, includesSubentities: Bool, entity: SQLiteEntityMapping) throws
        -> String
    {
        let scope = SQLiteScope(alias: "t0", entity: entity)
        let filtered = filter(predicate, includesSubentities: includesSubentities, in: scope)
        guard filtered.untranslatable.isEmpty else {
            throw SQLiteUntranslatable(filtered.untranslatable.joined(separator: "; "))
        }
        guard !filtered.conditions.isEmpty else { return "" }
        let conditions = filtered.conditions.joined(separator: " AND ")
        if scope.joins.isEmpty { return " WHERE " + conditions }
        return " WHERE t0.Z_PK IN (SELECT t0.Z_PK FROM \(scope.fromClause) WHERE \(conditions))"
    }

    /// `SELECT Z_PK, Z_ENT` of the rows a batch request's predicate selects, in key order.
    func batchKeys(_ predicate: NSPredicate?, includesSubentities: Bool, entity: SQLiteEntityMapping) throws
        -> SQLiteStatementPlan
    {
        let condition = try batchCondition(predicate, includesSubentities: includesSubentities, entity: entity)
        return SQLiteStatementPlan(
            sql: "SELECT t0.Z_PK, t0.Z_ENT FROM \(entity.table.name) t0\(condition) ORDER BY t0.Z_PK",
            arguments: context.arguments)
    }

    /// `DELETE` of the rows a batch request's predicate selects.
    func batchDelete(_ predicate: NSPredicate?, includesSubentities: Bool, entity: SQLiteEntityMapping) throws
        -> SQLiteStatementPlan
    {
        let condition = try batchCondition(predicate, includesSubentities: includesSubentities, entity: entity)
        return SQLiteStatementPlan(
            sql: "DELETE FROM \(entity.table.name) AS t0\(condition)", arguments: context.arguments)
    }

    /// The `UPDATE` of a batch update: the new values, and a version one higher for every row it changes.
    func batchUpdate(_ update: StoreBatchUpdate, entity: SQLiteEntityMapping) throws -> SQLiteStatementPlan {
        // The SET clause's placeholders come before the WHERE clause's: its values are bound first.
        var assignments = ["Z_OPT = t0.Z_OPT + 1"]
        for assignment in update.assignments {
            let column = try self.column(of: assignment.attribute, in: entity)
            assignments.append(
                "\(column) = \(try value(assignment.value, assignedTo: assignment.attribute, in: entity))")
        }
        let condition = try batchCondition(
            update.predicate, includesSubentities: update.includesSubentities, entity: entity)
        return SQLiteStatementPlan(
            sql: "UPDATE \(entity.table.name) AS t0 SET \(assignments.joined(separator: ", "))\(condition)",
            arguments: context.arguments)
    }

    /// The column of `attribute` in `entity`'s table.
    private func column(of attribute: NSAttributeDescription, in entity: SQLiteEntityMapping) throws -> String {
        guard let slot = entity.entity._caches.slotByName[attribute._name], slot < entity.slots.count,
            case .attribute(let column, _, _) = entity.slots[slot]
        else { throw SQLiteUntranslatable("'\(attribute._name)' is not a stored attribute of '\(entity.name)'") }
        return entity.table.columns[column].name
    }

    /// SQL for a value assigned to `attribute`: constants bound in the attribute's stored form, computed values
    /// converted as memory converts them (toward zero, for an integer attribute).
    private func value(
        _ value: StoreBatchValue, assignedTo attribute: NSAttributeDescription, in entity: SQLiteEntityMapping
    ) throws -> String {
        let type = attribute._attributeType
        if case .constant(let constant) = value {
            return context.bind(try SQLiteValueCoding.sqliteValue(constant, type: type, attribute: attribute))
        }
        let sql = try operand(value, in: entity)
        switch type {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType:
            if case .attribute(let source, _) = value, SQLiteColumnType(source._attributeType) == .integer {
                return sql
            }
            return "CAST(\(sql) AS INTEGER)"
        default:
            return sql
        }
    }

    private func operand(_ value: StoreBatchValue, in entity: SQLiteEntityMapping) throws -> String {
        switch value {
        case .constant(.int(let number)):
            return context.bind(.integer(number))
        case .constant(.double(let number)):
            return context.bind(.real(number))
        case .constant(.date(let date)):
            return context.bind(.real(date.timeIntervalSinceReferenceDate))
        case .constant(let other):
            throw SQLiteUntranslatable("arithmetic on \(other)")
        case .attribute(let attribute, _):
            return "t0." + (try column(of: attribute, in: entity))
        case .now:
            return context.bind(.real(Date().timeIntervalSinceReferenceDate))
        case .arithmetic(let operation, let lhs, let rhs):
            let a = try operand(lhs, in: entity)
            let b = try operand(rhs, in: entity)
            switch operation {
            case .add: return "(\(a) + \(b))"
            case .subtract: return "(\(a) - \(b))"
            case .multiply: return "(\(a) * \(b))"
            // Memory divides in floating point, SQL integers as integers.
            case .divide: return "(CAST(\(a) AS REAL) / \(b))"
            }
        }
    }
}
