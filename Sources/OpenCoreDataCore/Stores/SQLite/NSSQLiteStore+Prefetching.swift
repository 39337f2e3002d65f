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

    /// Loads the destinations of `relationship` (stored as `storage`) of every source in one query, with their rows,
    /// into the cache that `destinationRows(of:from:)` answers from. Returns those rows, by source.
    ///
    /// The rows go to the objects made from them when the faults fire, not into the row cache (whose snapshots of the
    /// same rows they replace), as a to-many fault's do: the row cache takes at most a tenth of its capacity at once,
    /// so a prefetch of more rows than that lost their values, and each destination then read its row on its own.
    @discardableResult
    func _loadDestinations(
        _ storage: SQLiteToManyStorage, of relationship: NSRelationshipDescription, from sources: [NSManagedObjectID],
        connection: SQLiteConnection, mapping: SQLiteModelMapping
    ) throws -> Dictionary<Int64, [StoreRow]>.Values {
        var byKey: [Int64: NSManagedObjectID] = [:]
        for source in sources {
            if let key = source._primaryKey { byKey[key] = source }
        }
        var destinations: [Int64: [StoreRow]] = [:]
        guard !byKey.isEmpty else { return destinations.values }
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
                destinations[statement.int64(0), default: []].append(row)
            }
            statement.reset()
            for rows in destinations.values { _leaveToObjects(rows) }
        } else {
            let statement = try connection.statement(Self._destinationsSQL(storage, mapping: mapping, many: true))
            statement.bind(SQLiteTable.keyList(byKey.keys), at: 1)
            var bySource: [(source: Int64, destination: NSManagedObjectID)] = []
            var destinationIDs = SQLiteDestinationIDCache()
            while try statement.step() {
                let destination = try _destinationID(
                    statement, storage: storage, mapping: mapping, destinations: &destinationIDs)
                bySource.append((statement.int64(2), destination))
            }
            statement.reset()
            // A destination may belong to several sources: its row is read once.
            var rowOf: [NSManagedObjectID: StoreRow] = [:]
            var missing: [NSManagedObjectID] = []
            for (_, destination) in bySource where rowOf[destination] == nil {
                if let snapshot = _snapshots[destination] {
                    rowOf[destination] = snapshot.row(destination)
                } else {
                    rowOf[destination] = StoreRow(objectID: destination, values: [], version: 0)
                    missing.append(destination)
                }
            }
            for row in _leaveToObjects(try _loadRows(missing, connection: connection, mapping: mapping)) {
                rowOf[row.objectID] = row
            }
            for (source, destination) in bySource {
                destinations[source, default: []].append(
                    rowOf[destination] ?? StoreRow(objectID: destination, values: [], version: 0))
            }
        }
        for (key, source) in byKey {
            _toManyCache[SQLiteToManyKey(objectID: source, relationship: ObjectIdentifier(relationship))] =
                destinations[key] ?? []
        }
        return destinations.values
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
                        mapping: mapping
                    ).joined()
                }
                level = next
            }
        }
    }
}
