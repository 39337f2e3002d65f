import Foundation
import OpenCoreData
import OpenCoreDataCore

/// Relationships in a lightweight migration: the key pairs of each relationship read from where the source schema
/// keeps them (a foreign key column or a join table, renamed aside), and written where the destination keeps them.
extension PostgreSQLLightweightMigration {
    /// The (source object, destination object) key pairs of a relationship in a source table under its aside name:
    /// `p.source` holds the keys of the objects the relationship starts from, `p.destination` those of its
    /// destinations.
    struct Pairs: Equatable {
        var table: String
        var source: String
        var destination: String
        var order: String?
        /// An extra condition on `p`, with its leading ` AND `.
        var filter = ""
        /// Whether every object the relationship starts from has a destination (a non-optional to-one).
        var isComplete = false

        var flipped: Pairs { Pairs(table: table, source: destination, destination: source, filter: filter) }
    }

    /// Where the source schema keeps `relationship` (of the source model).
    func sourcePairs(_ relationship: NSRelationshipDescription) -> Pairs? {
        guard let owner = source.entity(relationship.entity), let slot = owner.slotIndex[relationship.name] else {
            return nil
        }
        if case .toOne(let column, _, _)? = owner.slotColumns[slot], let table = aside[owner.table.name] {
            let kinds = owner.family.map(String.init).joined(separator: ", ")
            return Pairs(
                table: table, source: "Z_PK", destination: column,
                filter: " AND p.\(quoted(column)) IS NOT NULL AND p.\"Z_ENT\" IN (\(kinds))",
                isComplete: !relationship.isOptional)
        }
        switch owner.toMany[slot] {
        case .foreignKey(let table, let column, let order)?:
            guard let table = aside[table] else { return nil }
            return Pairs(
                table: table, source: column, destination: "Z_PK", order: order,
                filter: " AND p.\(quoted(column)) IS NOT NULL")
        case .join(let table, let sourceColumn, let destinationColumn, let order, _)?:
            guard let table = aside[table] else { return nil }
            return Pairs(table: table, source: sourceColumn, destination: destinationColumn, order: order)
        case nil:
            return nil
        }
    }

    /// The source pairs of destination relationship `relationship`: from the source relationship it maps from, or
    /// else from the one its inverse maps from, turned around. `nil` when it is new.
    func pairs(forDestination relationship: NSRelationshipDescription) throws -> Pairs? {
        func found(_ relationship: NSRelationshipDescription) throws -> Pairs? {
            var result: Pairs?
            for entity in destination.entities where entity.entity.isKindOf(entity: relationship.entity) {
                guard let origin = origins[entity.number],
                    let name = try sourcePropertyName(of: relationship.name, in: origin.mapping),
                    let sourceRelationship = origin.source.entity.relationshipsByName[name],
                    let pairs = sourcePairs(sourceRelationship)
                else { continue }
                if let result, result != pairs {
                    throw Unsupported(
                        reason: "relationship '\(relationship.name)' gathers several source relationships")
                }
                result = pairs
            }
            return result
        }
        if let direct = try found(relationship) { return direct }
        if let inverse = relationship.inverseRelationship, inverse !== relationship, let reverse = try found(inverse) {
            return reverse.flipped
        }
        return nil
    }

    /// A to-one's key for a row `t` of `sourceTable`, and whether a row may be left without one.
    func foreignKeyValue(_ relationship: NSRelationshipDescription, sourceTable: PostgreSQLTable) throws
        -> (sql: String, mayBeEmpty: Bool)
    {
        guard let pairs = try pairs(forDestination: relationship) else { return ("NULL", true) }
        if pairs.table == aside[sourceTable.name], pairs.source == "Z_PK" {
            return ("t." + quoted(pairs.destination), !pairs.isComplete)
        }
        let sql =
            "(SELECT p.\(quoted(pairs.destination)) FROM \(source.qualified(pairs.table)) p WHERE "
            + "p.\(quoted(pairs.source)) = t.\"Z_PK\"\(pairs.filter) ORDER BY p.\(quoted(pairs.destination)) LIMIT 1)"
        return (sql, true)
    }

    /// The to-many whose positions `column` of `table` keeps, with the foreign key of its inverse.
    func orderedToMany(column: String, in table: PostgreSQLTable) -> (NSRelationshipDescription, foreignKey: String)? {
        for entity in destination.entities {
            for (slot, toMany) in entity.toMany {
                guard case .foreignKey(let owner, let foreignKey, let order) = toMany, owner == table.name,
                    order == column,
                    let relationship = entity.entity._caches.slots[slot].property as? NSRelationshipDescription
                else { continue }
                return (relationship, foreignKey)
            }
        }
        return nil
    }

    /// A position column's value: carried over when the source kept the positions of the same relationship in the
    /// same rows, else `NULL` (numbered afterwards, see `postpasses`).
    func orderValue(of column: String, in table: PostgreSQLTable, sourceTable: PostgreSQLTable) throws -> String {
        guard let (toMany, _) = orderedToMany(column: column, in: table),
            let pairs = try pairs(forDestination: toMany), let order = pairs.order,
            pairs.table == aside[sourceTable.name], pairs.destination == "Z_PK"
        else { return "NULL" }
        return "t." + quoted(order)
    }

    /// What runs once the tables are filled: the entity numbers of to-one destinations in hierarchies, and the
    /// positions of ordered relationships that had none (in key order).
    func postpasses(for table: PostgreSQLTable, values: [String]?) throws -> [String] {
        var statements: [String] = []
        let name = destination.qualified(table.name)
        var done = Set<String>()
        for entity in destination.entities where entity.table === table {
            for case .toOne(let column, let entityColumn?, let target)? in entity.slotColumns
            where done.insert(entityColumn).inserted {
                guard let targetTable = destination.entity(target)?.table else { continue }
                statements.append(
                    "UPDATE \(name) AS u SET \(quoted(entityColumn)) = (SELECT d.\"Z_ENT\" FROM "
                        + "\(destination.qualified(targetTable.name)) d WHERE d.\"Z_PK\" = u.\(quoted(column))) "
                        + "WHERE u.\(quoted(column)) IS NOT NULL")
            }
        }
        for (index, column) in table.columns.enumerated() where values?[index] == "NULL" {
            guard let (_, foreignKey) = orderedToMany(column: column.name, in: table) else { continue }
            let key = quoted(foreignKey)
            statements.append(
                "UPDATE \(name) AS u SET \(quoted(column.name)) = r.position FROM (SELECT \"Z_PK\", ROW_NUMBER() "
                    + "OVER (PARTITION BY \(key) ORDER BY \"Z_PK\") AS position FROM \(name) WHERE \(key) IS NOT "
                    + "NULL) AS r WHERE u.\"Z_PK\" = r.\"Z_PK\"")
        }
        return statements
    }

    // MARK: Join tables

    /// Whether the source join table of the same name holds this relationship's pairs, in these columns.
    func isUnchanged(_ join: (name: String, first: String, second: String, orderColumns: [String])) throws -> Bool {
        guard let sourceJoin = source.joinTables.first(where: { $0.name == join.name }),
            sourceJoin.first == join.first, sourceJoin.second == join.second,
            sourceJoin.orderColumns == join.orderColumns, let owner = joinOwner(join),
            let pairs = try pairs(forDestination: owner)
        else { return false }
        return pairs.table == join.name && pairs.source == join.first && pairs.destination == join.second
    }

    /// The relationship whose join table `join` is, seen from the side whose keys its first column holds.
    func joinOwner(_ join: (name: String, first: String, second: String, orderColumns: [String]))
        -> NSRelationshipDescription?
    {
        for entity in destination.entities {
            for (slot, toMany) in entity.toMany {
                if case .join(join.name, join.first, _, _, _) = toMany {
                    return entity.entity._caches.slots[slot].property as? NSRelationshipDescription
                }
            }
        }
        return nil
    }

    /// Fills a destination join table from where the source kept its relationship's pairs.
    func fill(_ join: (name: String, first: String, second: String, orderColumns: [String])) throws {
        guard let owner = joinOwner(join), let pairs = try pairs(forDestination: owner) else { return }
        let ownerOrder = join.orderColumns.first { $0 == "Z_FOK_" + join.second.dropFirst(2) }
        let otherOrder = join.orderColumns.first { $0 == "Z_FOK_" + join.first.dropFirst(2) }
        let from = "p." + quoted(pairs.source)
        let to = "p." + quoted(pairs.destination)
        var names = [join.first, join.second]
        var values = [from, to]
        if let ownerOrder {
            names.append(ownerOrder)
            let by = pairs.order.map { "p.\(quoted($0)), " } ?? ""
            values.append("ROW_NUMBER() OVER (PARTITION BY \(from) ORDER BY \(by)\(to))")
        }
        if let otherOrder {
            names.append(otherOrder)
            values.append("ROW_NUMBER() OVER (PARTITION BY \(to) ORDER BY \(from))")
        }
        try connection.execute(
            "INSERT INTO \(destination.qualified(join.name)) (\(names.map(quoted).joined(separator: ", "))) SELECT "
                + values.joined(separator: ", ") + " FROM \(source.qualified(pairs.table)) p WHERE \(from) IS NOT "
                + "NULL AND \(to) IS NOT NULL\(pairs.filter) ON CONFLICT DO NOTHING")
    }
}
