import Foundation

/// Prefetching: the destinations of many objects' relationships loaded in one statement per relationship, for
/// `relationshipKeyPathsForPrefetching` and for the delete rules of many deleted objects.
extension NSSQLiteStore {
    package func prefetchDestinations(of relationship: NSRelationshipDescription, from objectIDs: [NSManagedObjectID])
        throws
    {
        let (connection, mapping) = try _openStore()
        // Sources of several entities share a relationship through inheritance; group them by where it is stored.
        var groups: [String: (storage: SQLiteToManyStorage, sources: [NSManagedObjectID])] = [:]
        for objectID in objectIDs where objectID._isInStore(self) {
            guard let entity = mapping.entity(objectID._entity),
                let slot = entity.entity._caches.slotByName[relationship._name], slot < entity.slots.count,
                case .toMany(let storage, _) = entity.slots[slot]
            else { continue }
            let place: String
            switch storage {
            case .foreignKey(let destination, let column, _): place = destination.name + "." + column
            case .join(let join): place = join.table + "." + join.sourceColumn
            }
            groups[place, default: (storage, [])].sources.append(objectID)
        }
        do {
            for (_, group) in groups {
                try _loadDestinations(
                    group.storage, of: relationship, from: group.sources, connection: connection, mapping: mapping)
            }
        } catch let error as SQLiteError {
            throw error.coreDataError(url: _url, action: "fetching from")
        }
    }

    /// Loads the destinations of `relationship` (stored as `storage`) of every source in one query, into the cache
    /// that `destinations(of:from:)` answers from, and their rows into the row cache. Returns those rows.
    @discardableResult
    func _loadDestinations(
        _ storage: SQLiteToManyStorage, of relationship: NSRelationshipDescription, from sources: [NSManagedObjectID],
        connection: SQLiteConnection, mapping: SQLiteModelMapping
    ) throws -> [StoreRow] {
        var byKey: [Int64: NSManagedObjectID] = [:]
        for source in sources {
            if let key = source._primaryKey { byKey[key] = source }
        }
        guard !byKey.isEmpty else { return [] }
        var destinations: [Int64: [NSManagedObjectID]] = [:]
        var rows: [StoreRow] = []
        if case .foreignKey(let table, let column, let order) = storage {
            // The destinations' rows come in the same query, behind the source's key.
            let ordering = (order.map { ["t0.\($0)"] } ?? []) + ["t0.Z_PK"]
            let statement = try connection.statement(
                "SELECT t0.\(column), \(table.selectList(alias: "t0")) FROM \(table.name) t0 WHERE t0.\(column) IN "
                    + "\(SQLiteTable.boundKeys) ORDER BY t0.\(column), \(ordering.joined(separator: ", "))")
            statement.bind(SQLiteTable.keyList(byKey.keys), at: 1)
            var destinationIDs = SQLiteDestinationIDCache()
            while try statement.step() {
                let row = try _decodeRow(
                    statement, of: table, mapping: mapping, values: true, offset: 1, destinations: &destinationIDs)
                destinations[statement.int64(0), default: []].append(row.objectID)
                rows.append(row)
            }
            statement.reset()
            _remember(rows)
        } else {
            let statement = try connection.statement(Self._destinationsSQL(storage, mapping: mapping, many: true))
            statement.bind(SQLiteTable.keyList(byKey.keys), at: 1)
            var all: [NSManagedObjectID] = []
            while try statement.step() {
                let destination = try _destinationID(statement, storage: storage, mapping: mapping)
                destinations[statement.int64(2), default: []].append(destination)
                all.append(destination)
            }
            statement.reset()
            rows = all.compactMap { _snapshots[$0]?.row($0) }
            let missing = all.filter { _snapshots[$0] == nil }
            rows += _remember(try _loadRows(missing, connection: connection, mapping: mapping))
        }
        for (key, source) in byKey {
            _toManyCache[SQLiteToManyKey(objectID: source, relationship: ObjectIdentifier(relationship))] =
                destinations[key] ?? []
        }
        return rows
    }

    /// Loads the destinations along each of `keyPaths` for `rows` in one query per relationship, into the caches
    /// that firing their faults reads.
    func _prefetch(_ keyPaths: [String]?, of rows: [StoreRow], mapping: SQLiteModelMapping) throws {
        guard let keyPaths, !keyPaths.isEmpty, !rows.isEmpty, let connection = _connection else { return }
        for keyPath in keyPaths {
            var level = rows
            for component in keyPath.split(separator: ".").map(String.init) {
                var next: [StoreRow] = []
                var toOne: [NSManagedObjectID] = []
                var toMany:
                    [(storage: SQLiteToManyStorage, relationship: NSRelationshipDescription, source: StoreRow)] =
                        []
                for row in level {
                    guard let entity = mapping.entity(row.objectID._entity),
                        let slot = entity.entity._caches.slotByName[component], slot < entity.slots.count
                    else { continue }
                    switch entity.slots[slot] {
                    case .toOne:
                        if slot < row.values.count, case .objectID(let destination) = row.values[slot] {
                            toOne.append(destination)
                        }
                    case .toMany(let storage, let relationship):
                        toMany.append((storage, relationship, row))
                    default:
                        break
                    }
                }
                if !toOne.isEmpty {
                    let unique = Array(Set(toOne))
                    next += unique.compactMap { _snapshots[$0]?.row($0) }
                    let missing = unique.filter { _snapshots[$0] == nil }
                    next += _remember(try _loadRows(missing, connection: connection, mapping: mapping))
                }
                // One query per relationship (sources of several entities may share it through inheritance).
                var groups: [ObjectIdentifier: [(SQLiteToManyStorage, NSRelationshipDescription, StoreRow)]] = [:]
                for entry in toMany { groups[ObjectIdentifier(entry.relationship), default: []].append(entry) }
                for (_, group) in groups {
                    let (storage, relationship, _) = group[0]
                    next += try _loadDestinations(
                        storage, of: relationship, from: group.map(\.2.objectID), connection: connection,
                        mapping: mapping)
                }
                level = next
            }
        }
    }
}
