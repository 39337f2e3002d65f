import CSQLite
import Foundation

/// A row as the store last read or wrote it, and when (seconds of system uptime). Kept without its object ID, which
/// is the row cache's key: 24 bytes an entry, for caches of a hundred thousand rows.
struct SQLiteSnapshot {
    var values: StoredValues
    let version: Int64
    let time: TimeInterval

    init(values: StoredValues, version: Int64, time: TimeInterval) {
        self.values = values
        self.version = version
        self.time = time
    }

    /// The row of `objectID`, the key this snapshot is kept under.
    func row(_ objectID: NSManagedObjectID) -> StoreRow {
        StoreRow(objectID: objectID, values: values, version: version)
    }
}

/// A to-many relationship of one object, as a cache key.
struct SQLiteToManyKey: Hashable {
    let objectID: NSManagedObjectID
    let relationship: ObjectIdentifier

    static func == (lhs: SQLiteToManyKey, rhs: SQLiteToManyKey) -> Bool {
        lhs.relationship == rhs.relationship && lhs.objectID._isEqual(to: rhs.objectID)
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(objectID._hashValue)
        hasher.combine(relationship)
    }

    func _rawHashValue(seed: Int) -> Int {
        cheapHash(objectID._hashValue ^ Int(bitPattern: relationship), seed: seed)
    }
}

/// What decoding the rows of one query keeps from row to row: the store's reference that its IDs hold, and the
/// to-one destination ID the previous row named, which the next usually names again (one ID object for all the
/// children of a parent instead of one per child).
struct SQLiteDestinationIDCache {
    private var last: NSManagedObjectID?
    private var storeReference: ObjectIDStoreReference?

    /// A cache whose IDs hold `storeReference`, or the store's current reference if `nil`.
    init(storeReference: ObjectIDStoreReference? = nil) {
        self.storeReference = storeReference
    }

    /// An ID of `store` for the row `key` of `entity`.
    mutating func rowID(entity: NSEntityDescription, key: Int64, store: NSSQLiteStore) -> NSManagedObjectID {
        if storeReference == nil { storeReference = store._objectIDReference }
        return NSManagedObjectID(entity: entity, storeReference: storeReference, reference: .primaryKey(key))
    }

    /// The ID of a to-one destination: the previous one if it is the same.
    mutating func objectID(entity: NSEntityDescription, key: Int64, store: NSSQLiteStore) -> NSManagedObjectID {
        if let last, last._primaryKey == key, last._entity === entity { return last }
        let made = rowID(entity: entity, key: key, store: store)
        last = made
        return made
    }
}

/// Fetching: requests become SQL (`SQLiteQueryGenerator`), rows are decoded straight from the columns into
/// `StoredValue`s. The rows of a fetch are kept as snapshots (the row cache) that fulfil faults while fresh enough
/// (not those of a large fetch or of a to-many fault, whose objects are made with them at once); rows wanted soon —
/// the rest of a fetch with `fetchBatchSize`, the destinations of `relationshipKeyPathsForPrefetching` — are loaded
/// together, one query per batch or relationship (prefetched to-many rows wait for their faults in `_toManyCache`).
extension NSSQLiteStore: PersistentStoreRowCaching, PersistentStoreToManyPrefetching, PersistentStoreToManyRows {
    /// How many rows the caches hold before they are emptied.
    private static let cacheLimit = 100_000
    /// How many batched fetches' records of batches still to load are kept (an app shows a few batched results at a
    /// time; each record is searched by every fault the row cache cannot fulfil).
    static let batchedFetchLimit = 32

    package func fetchRows(_ request: NSFetchRequest<NSFetchRequestResult>) throws -> StoreFetchResult {
        let (connection, mapping) = try _openStore()
        guard let requested = request.entity, let entity = mapping.entity(requested) else { return .rows([]) }
        do {
            if request.resultType == .countResultType {
                let plan = _plan(request, entity: entity, selection: .count, mapping: mapping)
                if plan.isComplete {
                    let statement = try connection.statement(plan.sql)
                    return .count(Int(try statement.scalarInteger(plan.arguments) ?? 0))
                }
                return .candidates(
                    _remember(try _rows(plan, of: entity.table, connection: connection, mapping: mapping, values: true))
                )
            }
            let wantsValues = request.includesPropertyValues && request.resultType != .managedObjectIDResultType
            let batchSize = wantsValues ? request.fetchBatchSize : 0
            // Partial faults: only the columns of propertiesToFetch. Such rows are not kept in the row cache, which
            // fulfils faults with whole rows.
            let partial = wantsValues && batchSize == 0 ? request._partialPropertyNames : nil
            let selection: SQLiteQueryGenerator.Selection =
                partial.map { .properties($0) } ?? (wantsValues && batchSize == 0 ? .rows : .keys)
            let plan = _plan(request, entity: entity, selection: selection, mapping: mapping)
            guard plan.isComplete else {
                let rows = _remember(
                    try _rows(plan, of: entity.table, connection: connection, mapping: mapping, values: true))
                try _prefetch(request.relationshipKeyPathsForPrefetching, of: rows, mapping: mapping)
                return .candidates(rows)
            }
            // The SQL applies the limit, so its last row is known when it arrives: the step after it, which would
            // only find the end, is left out.
            var rows = try _rows(
                plan, of: entity.table, connection: connection, mapping: mapping, values: wantsValues && batchSize == 0,
                limit: request.fetchLimit)
            if wantsValues, batchSize == 0, partial == nil { _remember(rows) }
            if batchSize > 0 {
                try _batch(&rows, of: entity.table, size: batchSize, connection: connection, mapping: mapping)
            }
            try _prefetch(request.relationshipKeyPathsForPrefetching, of: rows, mapping: mapping)
            return .rows(rows)
        } catch let error as SQLiteError {
            throw error.coreDataError(url: _url, action: "fetching from")
        }
    }

    /// The SQL of `request`: the plan cache's, when a request of its shape was planned before and its values bind
    /// as they did then; else the generator's, which the cache keeps if it can.
    private func _plan(
        _ request: NSFetchRequest<NSFetchRequestResult>, entity: SQLiteEntityMapping,
        selection: SQLiteQueryGenerator.Selection, mapping: SQLiteModelMapping
    ) -> SQLiteFetchPlan {
        let cachedSelection: SQLiteFetchPlanCache.Selection?
        switch selection {
        case .rows: cachedSelection = .rows
        case .keys: cachedSelection = .keys
        case .count: cachedSelection = .count
        case .properties: cachedSelection = nil
        }
        guard let cachedSelection else {
            return SQLiteQueryGenerator(mapping: mapping, store: self).plan(
                request, entity: entity, selection: selection)
        }
        if let plan = _fetchPlans.plan(templated: request, entity: entity, selection: cachedSelection) { return plan }
        guard let parts = SQLiteFetchPlanCache.parts(of: request, entity: entity, selection: cachedSelection)
        else {
            return SQLiteQueryGenerator(mapping: mapping, store: self).plan(
                request, entity: entity, selection: selection)
        }
        if let plan = _fetchPlans.plan(for: parts) { return plan }
        let plan = SQLiteQueryGenerator(mapping: mapping, store: self).plan(
            request, entity: entity, selection: selection)
        _fetchPlans.remember(plan, for: parts)
        return plan
    }

    /// Runs `plan` over `table` and decodes its rows, with IDs that hold `storeReference` (the store's current one if
    /// `nil`). A `limit` above 0 is the limit `plan`'s SQL applies: reading ends at that many rows.
    func _rows(
        _ plan: SQLiteFetchPlan, of table: SQLiteTable, connection: SQLiteConnection, mapping: SQLiteModelMapping,
        values: Bool, storeReference: ObjectIDStoreReference? = nil, limit: Int = 0
    ) throws -> [StoreRow] {
        let statement = try connection.statement(plan.sql)
        statement.bind(plan.arguments)
        var rows: [StoreRow] = []
        var destinations = SQLiteDestinationIDCache(storeReference: storeReference)
        // A plan without an order of its own returns rows by primary key, which a scan of the table and a search of an
        // index for one value give already: the order is checked as the rows come (a pass over them afterwards met
        // every ID again after a large fetch had pushed it out of the processor's caches) and the rows sorted only if
        // it was broken.
        var previousKey = Int64.min
        var inKeyOrder = true
        while try statement.step() {
            let row = try _decodeRow(
                statement, of: table, mapping: mapping, values: values, destinations: &destinations)
            if plan.sortsByKey, inKeyOrder {
                let key = row.objectID._primaryKey ?? .min
                if key < previousKey { inKeyOrder = false }
                previousKey = key
            }
            rows.append(row)
            if rows.count == limit { break }
        }
        statement.reset()
        if !inKeyOrder { rows.sort { ($0.objectID._primaryKey ?? .min) < ($1.objectID._primaryKey ?? .min) } }
        return rows
    }

    /// The row of `table` at the statement's cursor (`Z_PK`, `Z_ENT`, `Z_OPT`, then the table's columns if
    /// `values`). `destinations` keeps the last to-one destination ID made, which the next row usually names again
    /// (the children of one parent come together).
    func _decodeRow(
        _ statement: SQLiteStatement, of table: SQLiteTable, mapping: SQLiteModelMapping, values: Bool,
        offset: Int32 = 0, destinations: inout SQLiteDestinationIDCache
    ) throws -> StoreRow {
        let key = statement.int64(offset)
        let number = statement.int64(offset + 1)
        // The row's entity, unretained (the mapping holds it): found by number, and checked to be stored in `table`.
        let found = mapping.unretainedEntity(number: number)
        unowned(unsafe) let entity =
            try found.flatMap { $0._withUnsafeGuaranteedRef { $0.table === table } ? $0 : nil }?.takeUnretainedValue()
            ?? _rowEntity(number, key: key, table: table.name, mapping: mapping)
        let version = statement.int64(offset + 2)
        let objectID = destinations.rowID(entity: entity.entity, key: key, store: self)
        guard values else { return StoreRow(objectID: objectID, values: [], version: version) }
        let plan = entity.decodePlan
        let row = StoredValues(count: plan.slots) { buffer in
            for step in plan.readSteps {
                let column = step.column + offset
                // Text and blobs say NULL by a null pointer; the other kinds ask the column's storage class.
                switch step.kind {
                case .string:
                    if let text = statement.textIfNotNull(column) { buffer[step.slot] = .string(text) }
                    continue
                case .binary:
                    if let data = statement.blobIfNotNull(column) { buffer[step.slot] = .data(data) }
                    continue
                default:
                    break
                }
                let storage = statement.columnType(column)
                if storage == SQLITE_NULL { continue }
                switch step.kind {
                case .integer:
                    if storage != SQLITE_FLOAT {
                        buffer[step.slot] = .int(statement.int64(column))
                        continue
                    }
                case .boolean:
                    buffer[step.slot] = .bool(statement.int64(column) != 0)
                    continue
                case .double:
                    buffer[step.slot] = .double(statement.double(column))
                    continue
                case .float:
                    buffer[step.slot] = .float(Float(statement.double(column)))
                    continue
                case .date:
                    buffer[step.slot] = .date(Date(timeIntervalSinceReferenceDate: statement.double(column)))
                    continue
                case .toOne:
                    var destination = step.destination.flatMap { mapping.entity($0.takeUnretainedValue()) }?.entity
                    if step.entityColumn >= 0, !statement.isNull(step.entityColumn + offset),
                        let actual = mapping.entity(number: statement.int64(step.entityColumn + offset))
                    {
                        destination = actual.entity
                    }
                    if let destination {
                        buffer[step.slot] = .objectID(
                            destinations.objectID(entity: destination, key: statement.int64(column), store: self))
                    }
                    continue
                case .string, .binary, .general:
                    break
                }
                // Integers stored as reals, and the attribute types decoded through their descriptions.
                switch entity.slots[step.slot] {
                case .attribute(_, let type, let attribute), .derived(_, let type, let attribute):
                    buffer[step.slot] = SQLiteValueCoding.read(
                        statement, column: column, type: type, attribute: attribute)
                default:
                    break
                }
            }
            for slot in plan.toManySlots { buffer[slot] = .toManyFault }
        }
        return StoreRow(objectID: objectID, values: row, version: version)
    }

    /// `_decodeRow` with a destination cache of its own, for one row.
    func _decodeRow(
        _ statement: SQLiteStatement, of table: SQLiteTable, mapping: SQLiteModelMapping, values: Bool,
        offset: Int32 = 0
    ) throws -> StoreRow {
        var destinations = SQLiteDestinationIDCache()
        return try _decodeRow(
            statement, of: table, mapping: mapping, values: values, offset: offset, destinations: &destinations)
    }

    /// The entity that row `key` of `table` names in its `Z_ENT` column. A number that names no entity of the
    /// model, or one stored in another table, means the file does not hold what its metadata says: the read fails
    /// with the row named, rather than drop the row or read it with another entity's columns.
    func _rowEntity(_ number: Int64, key: Int64, table: String, mapping: SQLiteModelMapping) throws
        -> SQLiteEntityMapping
    {
        if let entity = mapping.entity(number: number), entity.table.name == table { return entity }
        let named = mapping.entity(number: number).map {
            "entity \($0.entity._name ?? ""), stored in table \($0.table.name)"
        }
        throw coreDataError(
            CocoaError.Code.fileReadCorruptFile.rawValue,
            """
            The store at \(_url?.path ?? "(unknown)") is damaged: row \(key) of table \(table) has Z_ENT \(number), \
            which names \(named ?? "no entity of the model")
            """,
            userInfo: _url.map { [NSURLErrorKey: $0, NSFilePathErrorKey: $0.path] } ?? [:])
    }

    // MARK: One object

    package func row(for objectID: NSManagedObjectID) throws -> StoreRow? {
        try row(for: objectID, stalenessInterval: 0)
    }

    package func row(for objectID: NSManagedObjectID, stalenessInterval: TimeInterval) throws -> StoreRow? {
        if let snapshot = _snapshots[objectID],
            stalenessInterval < 0 || ProcessInfo.processInfo.systemUptime - snapshot.time <= stalenessInterval
        {
            return snapshot.row(objectID)
        }
        let (connection, mapping) = try _openStore()
        guard let key = objectID._primaryKey, let entity = mapping.entity(objectID._entity) else { return nil }
        do {
            if let rows = try _loadBatch(containing: key, of: entity.table, connection: connection, mapping: mapping),
                let found = rows.first(where: { $0.objectID == objectID })
            {
                return found
            }
            let statement = try connection.statement(entity.table.selectByPrimaryKeySQL)
            statement.bind(key, at: 1)
            defer { statement.reset() }
            guard try statement.step(),
                case let row = try _decodeRow(statement, of: entity.table, mapping: mapping, values: true),
                row.objectID._entity._name == objectID._entity._name
            else {
                _snapshots[objectID] = nil
                return nil
            }
            _remember([row])
            return row
        } catch let error as SQLiteError {
            throw error.coreDataError(url: _url, action: "fetching from")
        }
    }

    /// The rows of `objectIDs` (of this store), in one query per table.
    func _loadRows(_ objectIDs: [NSManagedObjectID], connection: SQLiteConnection, mapping: SQLiteModelMapping)
        throws -> [StoreRow]
    {
        var byTable: [ObjectIdentifier: (table: SQLiteTable, keys: [Int64])] = [:]
        for objectID in objectIDs {
            guard let key = objectID._primaryKey, let table = mapping.entity(objectID._entity)?.table else { continue }
            byTable[ObjectIdentifier(table), default: (table, [])].keys.append(key)
        }
        var rows: [StoreRow] = []
        for (_, group) in byTable {
            try _loadRows(keys: group.keys, of: group.table, connection: connection, mapping: mapping, into: &rows)
        }
        return rows
    }

    /// Appends the rows of `table` with `keys` to `rows`, in one query.
    func _loadRows(
        keys: some Sequence<Int64>, of table: SQLiteTable, connection: SQLiteConnection, mapping: SQLiteModelMapping,
        into rows: inout [StoreRow]
    ) throws {
        // The keys travel as one bound JSON array, so that one cached statement serves every batch size.
        let statement = try connection.statement(table.selectByPrimaryKeysSQL)
        statement.bind(SQLiteTable.keyList(keys), at: 1)
        defer { statement.reset() }
        var destinations = SQLiteDestinationIDCache()
        while try statement.step() {
            rows.append(
                try _decodeRow(statement, of: table, mapping: mapping, values: true, destinations: &destinations))
        }
    }

    /// Keeps `rows` (with their values) as the row cache's snapshots.
    @discardableResult
    func _remember(_ rows: [StoreRow]) -> [StoreRow] {
        // A large fetch leaves its rows to its objects alone (see `_makeRoomInRowCache(for:)`).
        guard _makeRoomInRowCache(for: rows.count) else { return _leaveToObjects(rows) }
        let now = ProcessInfo.processInfo.systemUptime
        // Read in place: a copy of each row would retain and release its ID and values once more.
        rows.withUnsafeBufferPointer { rows in
            for index in rows.indices where !rows[index].values.isEmpty {
                _snapshots[rows[index].objectID] = SQLiteSnapshot(
                    values: rows[index].values, version: rows[index].version, time: now)
            }
        }
        return rows
    }

    /// Leaves `rows` to the objects made from them without keeping them in the row cache, but not older snapshots of
    /// the same rows there: those are replaced, as keeping the rows would have.
    @discardableResult
    func _leaveToObjects(_ rows: [StoreRow]) -> [StoreRow] {
        if !_snapshots.isEmpty { _replaceSnapshots(with: rows) }
        return rows
    }

    /// Replaces the snapshots the cache holds of any of `rows` with `rows`' values, adding none.
    private func _replaceSnapshots(with rows: [StoreRow]) {
        let now = ProcessInfo.processInfo.systemUptime
        rows.withUnsafeBufferPointer { rows in
            for index in rows.indices where !rows[index].values.isEmpty && _snapshots[rows[index].objectID] != nil {
                _snapshots[rows[index].objectID] = SQLiteSnapshot(
                    values: rows[index].values, version: rows[index].version, time: now)
            }
        }
    }

    /// Whether `count` rows more may go into the row cache, and room made for them: a cache that would overflow
    /// starts again empty.
    ///
    /// A batch of more than a tenth of the cache is left to its objects alone. It would push out much of what the
    /// cache holds for everyone else, and keeping it costs more than it saves: a snapshot lives only while an object
    /// holds its values, so what it saves is a query for a fault of the same row in another context, while entering
    /// and removing 100,000 rows in a table too large for the processor's caches was a tenth of the time of fetching
    /// them.
    func _makeRoomInRowCache(for count: Int) -> Bool {
        guard count <= Self.cacheLimit / 10 else { return false }
        if _snapshots.count + count > Self.cacheLimit { _snapshots.removeAll(keepingCapacity: true) }
        if count > 64 { _snapshots.reserveCapacity(_snapshots.count + count) }
        return true
    }

    package func forgetUnusedRow(of objectID: NSManagedObjectID) {
        // A snapshot whose values are shared is still some object's (in another context, say).
        guard !_snapshots.isEmpty, objectID._isInStore(self) else { return }
        _snapshots.removeValue(forKey: objectID) { $0.values.isUnshared() }
    }

    func _discardCaches() {
        _snapshots = [:]
        _toManyCache = [:]
        _batchedRows = []
    }

    // MARK: Batches

    /// Gives the first batch of `rows` (keys only, of `table`) its values, and leaves the other rows faults whose
    /// values load a batch at a time. In place: a copy of a million rows' keys would be 24 MB made and freed in every
    /// such fetch.
    private func _batch(
        _ rows: inout [StoreRow], of table: SQLiteTable, size: Int, connection: SQLiteConnection,
        mapping: SQLiteModelMapping
    ) throws {
        guard !rows.isEmpty else { return }
        // Results given up before their batches were touched leave their records, which every fault that the row
        // cache cannot fulfil asks: past a million rows, or when a record is one of more than `batchedFetchLimit`,
        // the oldest go (their faults then load one by one).
        if _batchedRows.reduce(0, { $0 + $1.count }) >= Self.cacheLimit * 10 { _batchedRows = [] }
        if _batchedRows.count >= Self.batchedFetchLimit {
            _batchedRows.removeFirst(_batchedRows.count - Self.batchedFetchLimit + 1)
        }
        let first = rows.prefix(size).map(\.objectID)
        let loaded = Dictionary(
            _remember(try _loadRows(first, connection: connection, mapping: mapping)).map { ($0.objectID, $0) },
            uniquingKeysWith: { first, _ in first })
        for index in rows.indices.prefix(size) {
            if let row = loaded[rows[index].objectID] { rows[index] = row }
        }
        guard rows.count > size else { return }
        let keys = rows[size...].map { $0.objectID._primaryKey ?? .min }
        if let batched = SQLiteBatchedRows(keys: keys, table: table, batchSize: size) { _batchedRows.append(batched) }
    }

    /// The rows of the batch of a batched fetch of `table` that holds the row with `key`, loaded now and kept in the
    /// row cache; `nil` if no such batch is still to load (the latest fetch's record is asked first).
    func _loadBatch(
        containing key: Int64, of table: SQLiteTable, connection: SQLiteConnection, mapping: SQLiteModelMapping
    ) throws -> [StoreRow]? {
        for index in _batchedRows.indices.reversed() where _batchedRows[index].table === table {
            let batched = _batchedRows[index]
            guard let batch = batched.pendingBatch(of: key) else { continue }
            let keys = batched.take(batch)
            if batched.pendingBatches == 0 { _batchedRows.remove(at: index) }
            var rows: [StoreRow] = []
            rows.reserveCapacity(keys.count)
            try _loadRows(keys: keys, of: table, connection: connection, mapping: mapping, into: &rows)
            return _remember(rows)
        }
        return nil
    }

    // MARK: To-many relationships

    package func destinations(of relationship: NSRelationshipDescription, from objectID: NSManagedObjectID) throws
        -> [NSManagedObjectID]
    {
        try destinationRows(of: relationship, from: objectID).map(\.objectID)
    }

    package func destinationRows(of relationship: NSRelationshipDescription, from objectID: NSManagedObjectID) throws
        -> [StoreRow]
    {
        let cacheKey = SQLiteToManyKey(objectID: objectID, relationship: ObjectIdentifier(relationship))
        if var cached = _toManyCache.removeValue(forKey: cacheKey) {
            // Prefetched with their rows. A snapshot the row cache holds now was read since, or is the same row.
            if !_snapshots.isEmpty {
                for index in cached.indices {
                    if let snapshot = _snapshots[cached[index].objectID] {
                        cached[index] = snapshot.row(cached[index].objectID)
                    }
                }
            }
            return cached
        }
        let (connection, mapping) = try _openStore()
        return try _destinationRows(of: relationship, from: objectID, connection: connection, mapping: mapping)
    }

    /// The destinations of `relationship` from `objectID` read through `connection`, with their rows when the
    /// destination's table holds the foreign key; snapshots the row cache holds of those rows are replaced by them if
    /// `current` (the store's latest state was read, not an older query generation's).
    ///
    /// The rows are not added to the row cache. Every context that fires the fault reads the relationship itself and
    /// makes its objects from these rows, so a cached row would only fulfil a fault of the same object by ID in another
    /// context while this one holds it — and keeping the rows of every fault (a walk over 1,000 parents' 100 children
    /// each filled the cache, which was then emptied) cost that walk a tenth to a quarter of its time.
    func _destinationRows(
        of relationship: NSRelationshipDescription, from objectID: NSManagedObjectID, connection: SQLiteConnection,
        mapping: SQLiteModelMapping, current: Bool = true
    ) throws -> [StoreRow] {
        guard let key = objectID._primaryKey, let source = mapping.entity(objectID._entity),
            let slot = source.entity._caches.slotByName[relationship._name], slot < source.slots.count,
            case .toMany(let storage, _) = source.slots[slot]
        else { return [] }
        do {
            if case .foreignKey(let table, let column, let order) = storage {
                // The destinations' rows come with their keys, as Core Data reads them when a to-many fault fires:
                // the objects are made with their values instead of each firing a query of its own.
                let sql: String
                if let cached = _destinationRowsSQL[ObjectIdentifier(relationship)],
                    cached.relationship === relationship
                {
                    sql = cached.sql
                } else {
                    let ordering = (order.map { ["t0.\($0)"] } ?? []) + ["t0.Z_PK"]
                    sql =
                        "SELECT \(table.selectList(alias: "t0")) FROM \(table.name) t0 WHERE t0.\(column) = ? ORDER BY "
                        + ordering.joined(separator: ", ")
                    _destinationRowsSQL[ObjectIdentifier(relationship)] = (relationship, sql)
                }
                let statement = try connection.statement(sql)
                statement.bind(key, at: 1)
                var rows: [StoreRow] = []
                var destinations = SQLiteDestinationIDCache()
                while try statement.step() {
                    rows.append(
                        try _decodeRow(
                            statement, of: table, mapping: mapping, values: true, destinations: &destinations))
                }
                statement.reset()
                return current ? _leaveToObjects(rows) : rows
            }
            let statement = try connection.statement(Self._destinationsSQL(storage, mapping: mapping, many: false))
            statement.bind(key, at: 1)
            var destinations: [StoreRow] = []
            var destinationIDs = SQLiteDestinationIDCache()
            while try statement.step() {
                let destination = try _destinationID(
                    statement, storage: storage, mapping: mapping, destinations: &destinationIDs)
                // Only the key: the row cache's copy may be older than the asking context accepts.
                destinations.append(StoreRow(objectID: destination, values: [], version: 0))
            }
            statement.reset()
            return destinations
        } catch let error as SQLiteError {
            throw error.coreDataError(url: _url, action: "fetching from")
        }
    }

    /// The destination named by the current row of a `_destinationsSQL` statement (its key, then its entity);
    /// `destinations` keeps the store's reference for the IDs of the rows that follow. (Not inlined: in
    /// `_loadDestinations`, whose other branch decodes whole rows, its code inlined there cost that branch a retain
    /// and a release of three references a row, 1.2% of the cascade delete's instructions.)
    @inline(never)
    func _destinationID(
        _ statement: SQLiteStatement, storage: SQLiteToManyStorage, mapping: SQLiteModelMapping,
        destinations: inout SQLiteDestinationIDCache
    ) throws -> NSManagedObjectID {
        let key = statement.int64(0)
        let entity = try _rowEntity(
            statement.int64(1), key: key, table: Self._destinationTable(storage), mapping: mapping)
        return destinations.rowID(entity: entity.entity, key: key, store: self)
    }

    /// `SELECT destination key, destination entity[, source key] …` for one source (`?`) or, with `many`, for a
    /// JSON array of sources, in the relationship's order.
    /// The table of the destinations stored as `storage`.
    private static func _destinationTable(_ storage: SQLiteToManyStorage) -> String {
        switch storage {
        case .foreignKey(let table, _, _): table.name
        case .join(let join): join.destinationTable
        }
    }

    static func _destinationsSQL(_ storage: SQLiteToManyStorage, mapping: SQLiteModelMapping, many: Bool)
        -> String
    {
        let sources = many ? "IN (SELECT value FROM json_each(?))" : "= ?"
        switch storage {
        case .foreignKey(let table, let column, let order):
            let ordering = (order.map { ["t0.\($0)"] } ?? []) + ["t0.Z_PK"]
            return "SELECT t0.Z_PK, t0.Z_ENT, t0.\(column) FROM \(table.name) t0 WHERE t0.\(column) \(sources) "
                + "ORDER BY \(many ? "t0.\(column), " : "")\(ordering.joined(separator: ", "))"
        case .join(let join):
            let ordering = (join.orderColumn.map { ["j.\($0)"] } ?? []) + ["j.\(join.destinationColumn)"]
            return "SELECT j.\(join.destinationColumn), d.Z_ENT, j.\(join.sourceColumn) FROM \(join.table) j JOIN "
                + "\(join.destinationTable) d ON d.Z_PK = j.\(join.destinationColumn) WHERE j.\(join.sourceColumn) "
                + "\(sources) ORDER BY \(many ? "j.\(join.sourceColumn), " : "")\(ordering.joined(separator: ", "))"
        }
    }
}

extension NSSQLiteStore: PersistentStoreRowInvalidating {
    package func invalidateRows(of objectIDs: [NSManagedObjectID]) {
        // IDs of another coordinator's store object on the same file name it by its identifier.
        let identifier = self.identifier
        for objectID in objectIDs where objectID._isInStore(self) || objectID._storeIdentifier == identifier {
            _snapshots[objectID] = nil
        }
        _toManyCache = [:]
    }
}
