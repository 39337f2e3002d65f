import Foundation
import OpenCoreData
import OpenCoreDataCore

/// The row cache: the rows the store's fetches and faults read, with when, so that faulting an object fetched
/// moments ago does not ask the server again while the asking context's `stalenessInterval` allows (negative:
/// forever; 0: never; the default is forever, as in Core Data).
///
/// The cache forgets what might no longer be the store's: the rows a save of this store wrote or deleted (and
/// conflicts found), everything when a batch request runs, and everything at each commit to the store by any
/// coordinator or process, when the store listens for them (`NSPersistentStoreRemoteChangeNotificationPostOptionKey`:
/// the notice does not say which rows changed). Without listening, other processes' changes reach the cache through
/// fetches, which always read the server and refresh the rows they read, and `stalenessInterval` bounds how old a
/// fault's row may be. Fetches beside other calls (on a connection of the pool) neither fill nor consult it: they may
/// read an older commit than a save that runs meanwhile.
final class PostgreSQLRowCache: @unchecked Sendable {
    // @unchecked: `snapshots` is read and changed under `lock` only (the change listener's thread clears it too).
    private struct Snapshot {
        var row: StoreRow
        let time: TimeInterval
    }

    /// A to-many relationship of one object, as the key of prefetched rows.
    private struct Relationship: Hashable {
        let objectID: NSManagedObjectID
        let relationship: ObjectIdentifier
    }

    private let lock = NSLock()
    private var snapshots: [NSManagedObjectID: Snapshot] = [:]
    /// Destinations' rows read ahead of need (prefetching), by source, each handed out once.
    private var prefetched: [Relationship: [StoreRow]] = [:]
    private var prefetchedRows = 0
    /// Rows kept at most: past it, the cache starts again from empty rather than grow without bound.
    static let limit = 200_000

    /// The cached row of `objectID` if it is at most `stalenessInterval` seconds old.
    func row(for objectID: NSManagedObjectID, stalenessInterval: TimeInterval) -> StoreRow? {
        guard stalenessInterval != 0 else { return nil }
        let now = ProcessInfo.processInfo.systemUptime
        return lock.withLock {
            guard let snapshot = snapshots[objectID],
                stalenessInterval < 0 || now - snapshot.time <= stalenessInterval
            else { return nil }
            return snapshot.row
        }
    }

    /// Keeps the rows that carry their values.
    func remember(_ rows: [StoreRow]) {
        let now = ProcessInfo.processInfo.systemUptime
        lock.withLock {
            if snapshots.count + rows.count > Self.limit { snapshots.removeAll(keepingCapacity: true) }
            for row in rows where !row.values.isEmpty {
                snapshots[row.objectID] = Snapshot(row: row, time: now)
            }
        }
    }

    /// Replaces the rows the cache holds of any of `rows` (those that carry their values), adding none: what rows
    /// read for objects made from them at once, and kept by nobody else, do to the cache.
    func replace(_ rows: [StoreRow]) {
        let now = ProcessInfo.processInfo.systemUptime
        lock.withLock {
            guard !snapshots.isEmpty else { return }
            for row in rows where !row.values.isEmpty && snapshots[row.objectID] != nil {
                snapshots[row.objectID] = Snapshot(row: row, time: now)
            }
        }
    }

    /// Keeps the destinations' rows prefetched for each source, until `takePrefetched(_:of:)` hands them out or a save
    /// or a commit makes them doubtful.
    func keepPrefetched(_ rows: [NSManagedObjectID: [StoreRow]], of relationship: NSRelationshipDescription) {
        lock.withLock {
            let added = rows.values.reduce(0) { $0 + $1.count }
            if prefetchedRows + added > Self.limit { forgetPrefetched() }
            for (source, destinations) in rows {
                prefetched[Relationship(objectID: source, relationship: ObjectIdentifier(relationship))] = destinations
            }
            prefetchedRows += added
        }
    }

    /// The rows prefetched for `relationship` of `source`, once: a snapshot read since wins over the prefetched row.
    func takePrefetched(_ relationship: NSRelationshipDescription, of source: NSManagedObjectID) -> [StoreRow]? {
        lock.withLock {
            guard !prefetched.isEmpty,
                var rows = prefetched.removeValue(
                    forKey: Relationship(objectID: source, relationship: ObjectIdentifier(relationship)))
            else { return nil }
            prefetchedRows -= rows.count
            if !snapshots.isEmpty {
                for index in rows.indices {
                    if let snapshot = snapshots[rows[index].objectID] { rows[index] = snapshot.row }
                }
            }
            return rows
        }
    }

    /// (Under `lock`.)
    private func forgetPrefetched() {
        prefetched.removeAll()
        prefetchedRows = 0
    }

    /// Forgets the rows of `objectIDs`, and every prefetched relationship (a save may have changed any of them).
    func forget(_ objectIDs: [NSManagedObjectID]) {
        guard !objectIDs.isEmpty else { return }
        lock.withLock {
            if !prefetched.isEmpty { forgetPrefetched() }
            guard !snapshots.isEmpty else { return }
            for objectID in objectIDs { snapshots[objectID] = nil }
        }
    }

    /// Forgets the row of `objectID` unless an object still holds its values (they are shared until the last object
    /// that was handed them goes away), as Core Data keeps a row while objects use it.
    func forgetUnlessHeld(_ objectID: NSManagedObjectID) {
        lock.withLock {
            // In place: a copy of the snapshot would share its values.
            if snapshots[objectID]?.row.values.isUnshared() == true { snapshots[objectID] = nil }
        }
    }

    func forgetAll() {
        lock.withLock {
            snapshots.removeAll()
            forgetPrefetched()
        }
    }

    var count: Int { lock.withLock { snapshots.count } }
}

extension PostgreSQLStore: PersistentStoreRowCaching {
    package func row(for objectID: NSManagedObjectID, stalenessInterval: TimeInterval) throws -> StoreRow? {
        if let cached = rowCache.row(for: objectID, stalenessInterval: stalenessInterval) { return cached }
        guard let row = try row(for: objectID) else {
            rowCache.forget([objectID])
            return nil
        }
        rowCache.remember([row])
        return row
    }

    package func forgetUnusedRow(of objectID: NSManagedObjectID) {
        rowCache.forgetUnlessHeld(objectID)
    }

    /// Keeps the rows of a fetch's answer in the cache.
    func remember(_ result: StoreFetchResult) {
        switch result {
        case .rows(let rows), .candidates(let rows): rowCache.remember(rows)
        case .count, .objects: break
        }
    }

    /// Forgets the rows a save touched, whether it committed or not.
    func forgetRows(of changes: StoreSaveChanges) {
        rowCache.forget((changes.inserted + changes.updated + changes.deleted).map(\.objectID))
    }
}
