import CSQLite

/// Relationships in a lightweight migration: the key pairs of each relationship read from where the source store
/// keeps them (a foreign key column or a join table), and written where the destination keeps them.
extension SQLiteLightweightMigration {
    /// The (source object, destination object) key pairs of a relationship, read from where the source store keeps
    /// them, in a table under its current name: `p.source` holds the keys of the objects the relationship starts
    /// from, `p.destination` the keys of its destinations.
    struct Pairs: Equatable {
        var table: String
        var source: String
        var destination: String
        var order: String?
        /// An extra condition on `p`, with its leading ` AND `.
        var filter: String = ""

        var flipped: Pairs { Pairs(table: table, source: destination, destination: source, filter: filter) }
    }

    func pairs(of relationship: NSRelationshipDescription) -> Pairs? {
        guard let owner = relationship._entity.flatMap(source.entity),
            let slot = owner.entity._caches.slotByName[relationship._name], slot < owner.slots.count
        else { return nil }
        switch owner.slots[slot] {
        case .toOne(let foreignKey, _, _):
            let column = owner.table.columns[foreignKey].name
            let kinds = owner.kindNumbers.map(String.init).joined(separator: ", ")
            return Pairs(
                table: currentName[owner.table.name] ?? owner.table.name, source: "Z_PK", destination: column,
                filter: " AND p.\(Self.quote(column)) IS NOT NULL AND p.Z_ENT IN (\(kinds))")
        case .toMany(.foreignKey(let table, let column, let order), _):
            return Pairs(
                table: currentName[table.name] ?? table.name, source: column, destination: "Z_PK", order: order,
                filter: " AND p.\(Self.quote(column)) IS NOT NULL")
        case .toMany(.join(let join), _):
            return Pairs(
                table: currentName[join.table] ?? join.table, source: join.sourceColumn,
                destination: join.destinationColumn, order: join.orderColumn)
        default:
            return nil
        }
    }

    /// The source pairs of destination relationship `relationship`: from the source relationship it maps from, or
    /// else from the one its inverse maps from, turned around. `nil` when it is new.
    func pairs(
        forDestination relationship: NSRelationshipDescription,
        of members: [(destination: SQLiteEntityMapping, source: SQLiteEntityMapping, mapping: NSEntityMapping)]?
    ) throws -> Pairs? {
        func found(_ relationship: NSRelationshipDescription) throws -> Pairs? {
            var result: Pairs?
            for entity in destination.entities where entity.entity.isKindOf(entity: relationship._entity!) {
                guard let origin = origins[entity.number],
                    let name = try sourcePropertyName(of: relationship._name, in: origin.mapping),
                    let sourceRelationship = origin.source.entity._caches.relationshipsByName[name],
                    let pairs = pairs(of: sourceRelationship)
                else { continue }
                if let result, result != pairs {
                    throw Unsupported(description: "relationship '\(relationship._name)' gathers several sources")
                }
                result = pairs
            }
            return result
        }
        if let direct = try found(relationship) { return direct }
        if let inverse = relationship._inverseRelationship, inverse !== relationship, let reverse = try found(inverse) {
            return reverse.flipped
        }
        return nil
    }

    /// What must run once every table is filled: entity numbers of to-one destinations in hierarchies, and positions
    /// of ordered relationships that had none.
    func postpasses(_ plan: TablePlan) throws -> [(String, [SQLiteValue])] {
        var statements: [(String, [SQLiteValue])] = []
        let table = Self.quote(plan.table.name)
        for (index, column) in plan.table.columns.enumerated() {
            switch column.role {
            case .foreignEntity(let relationship):
                guard
                    let key = plan.table.columns.first(where: {
                        if case .foreignKey(let candidate) = $0.role { return candidate === relationship }
                        return false
                    }), let target = relationship._destinationEntity.flatMap(destination.entity)
                else { continue }
                statements.append(
                    (
                        "UPDATE \(table) SET \(Self.quote(column.name)) = (SELECT d.Z_ENT FROM "
                            + "\(Self.quote(target.table.name)) d WHERE d.Z_PK = \(table).\(Self.quote(key.name))) "
                            + "WHERE \(Self.quote(key.name)) IS NOT NULL", []
                    ))
            case .order(let toMany):
                guard plan.columns.indices.contains(index), plan.columns[index].sql == "NULL",
                    let inverse = toMany._inverseRelationship,
                    let key = plan.table.columns.first(where: {
                        if case .foreignKey(let candidate) = $0.role { return candidate === inverse }
                        return false
                    })
                else { continue }
                let foreignKey = Self.quote(key.name)
                statements.append(
                    (
                        "UPDATE \(table) SET \(Self.quote(column.name)) = r.position FROM (SELECT Z_PK, ROW_NUMBER() "
                            + "OVER (PARTITION BY \(foreignKey) ORDER BY Z_PK) AS position FROM \(table) WHERE "
                            + "\(foreignKey) IS NOT NULL) AS r WHERE \(table).Z_PK = r.Z_PK", []
                    ))
            default:
                break
            }
        }
        return statements
    }

    // MARK: Join tables

    struct JoinPlan {
        let join: SQLiteJoinTable
        var fill: String?
        var isUnchanged = false
    }

    func joinPlan(for join: SQLiteJoinTable, existing: SchemaObjects) throws -> JoinPlan {
        var plan = JoinPlan(join: join)
        // The relationship whose join this is, seen from the side whose keys the first column holds.
        var owner: NSRelationshipDescription?
        for entity in destination.entities {
            for case .toMany(.join(let candidate), let relationship) in entity.slots
            where candidate.table == join.name && candidate.sourceColumn == join.firstColumn {
                owner = relationship
            }
        }
        guard let owner, let pairs = try pairs(forDestination: owner, of: nil) else { return plan }
        let ownerOrder = join.orderColumns.first { $0 == "Z_FOK_" + join.secondColumn.dropFirst(2) }
        let otherOrder = join.orderColumns.first { $0 == "Z_FOK_" + join.firstColumn.dropFirst(2) }
        if let sourceJoin = source.joinTables.first(where: { $0.name == join.name }),
            existing.tableSQL[join.name] == SQLiteModelMapping.createStatement(for: join),
            sourceJoin.orderColumns == join.orderColumns, pairs.table == join.name,
            pairs.source == join.firstColumn, pairs.destination == join.secondColumn
        {
            plan.isUnchanged = true
            return plan
        }
        var names = [join.firstColumn, join.secondColumn]
        var values = ["p.\(Self.quote(pairs.source))", "p.\(Self.quote(pairs.destination))"]
        if let ownerOrder {
            names.append(ownerOrder)
            let by = pairs.order.map { "p.\(Self.quote($0)), " } ?? ""
            values.append(
                "ROW_NUMBER() OVER (PARTITION BY p.\(Self.quote(pairs.source)) ORDER BY \(by)"
                    + "p.\(Self.quote(pairs.destination)))")
        }
        if let otherOrder {
            names.append(otherOrder)
            values.append(
                "ROW_NUMBER() OVER (PARTITION BY p.\(Self.quote(pairs.destination)) ORDER BY "
                    + "p.\(Self.quote(pairs.source)))")
        }
        plan.fill =
            "INSERT OR IGNORE INTO \(Self.quote(join.name)) (\(names.map(Self.quote).joined(separator: ", "))) SELECT "
            + values.joined(separator: ", ") + " FROM \(Self.quote(pairs.table)) p WHERE "
            + "p.\(Self.quote(pairs.source)) IS NOT NULL AND p.\(Self.quote(pairs.destination)) IS NOT NULL"
            + pairs.filter
        return plan
    }
}
