import Foundation

/// Persistent history of the SQLite store (`NSPersistentHistoryTrackingKey`), in Apple's tables (see
/// `SQLiteHistory.swift`): every save and batch request records one transaction inside its own write transaction,
/// so history and data never disagree.
/// What the SQLite store keeps for persistent history and remote change notifications.
struct SQLiteStoreTracking {
    /// The store's persistent history, when it was added with `NSPersistentHistoryTrackingKey`.
    var history: SQLiteHistory?
    /// The store was opened read-only because it records history and was added without the option.
    var readOnlyForHistory = false
    /// Watches the file for commits, with `NSPersistentStoreRemoteChangeNotificationPostOptionKey`.
    var changeWatcher: SQLiteChangeWatcher?
}

extension NSSQLiteStore {
    var _history: SQLiteHistory? {
        get { _tracking.history }
        set { _tracking.history = newValue }
    }

    var _readOnlyForHistory: Bool {
        get { _tracking.readOnlyForHistory }
        set { _tracking.readOnlyForHistory = newValue }
    }

    /// Sets history up, then starts watching the file if asked to (`NSPersistentStoreRemoteChangeNotificationPost
    /// OptionKey`), as the store opens.
    func _prepareTracking(_ url: URL) throws {
        try _prepareHistory()
        if Self._flag(_options?[NSPersistentStoreRemoteChangeNotificationPostOptionKey]), !StoreLocation.isDevNull(url)
        {
            _tracking.changeWatcher = try SQLiteChangeWatcher(url: url) { [weak self] connection in
                self?._postRemoteChange(connection)
            }
        }
    }

    func _stopWatching() {
        _tracking.changeWatcher?.cancel()
        _tracking.changeWatcher = nil
    }

    /// Posts `.NSPersistentStoreRemoteChange` for a commit the watcher saw (on its queue, with its connection).
    func _postRemoteChange(_ connection: SQLiteConnection) {
        guard let url = _url else { return }
        var userInfo: [AnyHashable: Any] = [NSPersistentStoreURLKey: url]
        if let identifier { userInfo[NSStoreUUIDKey] = identifier }
        if let history = _history, let identifier,
            let number = try? history.lastTransactionNumber(connection: connection)
        {
            userInfo[NSPersistentHistoryTokenKey] = NSPersistentHistoryToken(storeTokens: [identifier: number])
        }
        NotificationCenter.default.post(name: .NSPersistentStoreRemoteChange, object: _coordinator, userInfo: userInfo)
    }

    /// Whether the store was added with `NSPersistentHistoryTrackingKey` (true, or a dictionary of its options).
    var _tracksHistoryOption: Bool {
        switch _options?[NSPersistentHistoryTrackingKey] {
        case nil: return false
        case is NSDictionary, is [String: Any], is [AnyHashable: Any]: return true
        case let value: return Self._flag(value)
        }
    }

    /// Sets history up when the store opens: with the option, the tables are created (or given the tombstone columns
    /// the model needs) unless the store is read-only. Without it, a store that has history is opened read-only, as
    /// Apple's framework opens it: saving without recording would leave holes that readers of its history could
    /// not see. A store whose history was all deleted (`deleteHistory(before: .distantFuture)`) has none to spoil,
    /// and opens writable, as Apple's does.
    func _prepareHistory() throws {
        _history = nil
        guard let connection = _connection, let mapping = _mapping else { return }
        let exists = try SQLiteHistorySchema.exists(in: connection)
        guard _tracksHistoryOption else {
            if exists, !_isReadOnly, try connection.scalar("SELECT EXISTS (SELECT 1 FROM ATRANSACTION)") == 1 {
                _isReadOnly = true
                _readOnlyForHistory = true
                FileHandle.standardError.write(
                    Data(
                        """
                        OpenCoreData: warning: the store at \(_url?.path ?? "(unknown)") records persistent history \
                        but was added without NSPersistentHistoryTrackingKey; it is opened read-only. Add the store \
                        with NSPersistentHistoryTrackingKey set to true to change it.

                        """.utf8))
            }
            return
        }
        if !_isReadOnly, !connection.isReadOnly {
            try connection.transaction(immediate: true) {
                try SQLiteHistorySchema.prepare(
                    connection, tombstones: SQLiteHistorySchema.tombstonesNeeded(by: mapping))
            }
            _history = try SQLiteHistory(connection: connection)
        } else if exists {
            _history = try SQLiteHistory(connection: connection)
        }
    }

    /// The history of one save: its rows as changes, the tombstones of its deletions read before they go.
    func _historyChanges(
        of changes: StoreSaveChanges, tombstones: [SQLiteHistoryKey: [SQLiteValue]], history: SQLiteHistory,
        mapping: SQLiteModelMapping
    ) -> [SQLiteHistoryChange] {
        var result: [SQLiteHistoryChange] = []
        result.reserveCapacity(changes.inserted.count + changes.updated.count + changes.deleted.count)
        for change in changes.inserted {
            guard let key = change.objectID._primaryKey, let entity = mapping.entity(change.objectID._entity) else {
                continue
            }
            result.append(SQLiteHistoryChange(type: .insert, entity: entity.number, key: key))
        }
        for change in changes.updated where !change.changedSlots.isEmpty {
            guard let key = change.objectID._primaryKey, let entity = mapping.entity(change.objectID._entity) else {
                continue
            }
            let slots = entity.entity._caches.slots
            let names = change.changedSlots.elements.compactMap { $0 < slots.count ? slots[$0].name : nil }
            let bitmap = history.columnsBitmap(of: names, entity: entity.entity)
            result.append(SQLiteHistoryChange(type: .update, entity: entity.number, key: key, columns: bitmap))
        }
        for change in changes.deleted {
            guard let key = change.objectID._primaryKey, let entity = mapping.entity(change.objectID._entity) else {
                continue
            }
            let tombstone = tombstones[SQLiteHistoryKey(entity: entity.number, key: key)] ?? []
            result.append(SQLiteHistoryChange(type: .delete, entity: entity.number, key: key, tombstone: tombstone))
        }
        return result
    }

    /// The rows a save deletes, for reading their tombstones first.
    func _deletedRows(of changes: StoreSaveChanges, mapping: SQLiteModelMapping)
        -> [(entity: SQLiteEntityMapping, key: Int64)]
    {
        changes.deleted.compactMap { change in
            guard let key = change.objectID._primaryKey, let entity = mapping.entity(change.objectID._entity) else {
                return nil
            }
            return (entity, key)
        }
    }
}

extension NSSQLiteStore: PersistentStoreHistoryTracking {
    package var _hasHistory: Bool { _history != nil }

    private func _openHistory() throws -> (SQLiteHistory, SQLiteConnection, SQLiteModelMapping) {
        let (connection, mapping) = try _openStore()
        guard let history = _history else {
            throw coreDataError(
                NSPersistentStoreUnsupportedRequestTypeError,
                "The store at \(_url?.path ?? "(unknown)") does not record persistent history",
                userInfo: [NSAffectedStoresErrorKey: [self]])
        }
        return (history, connection, mapping)
    }

    package func _historyTransactions(in range: PersistentHistoryRange, withChanges: Bool) throws
        -> [NSPersistentHistoryTransaction]
    {
        let (history, connection, mapping) = try _openHistory()
        do {
            // One read transaction: the changes read belong to the transactions read.
            return try connection.transaction(immediate: false) {
                try history.transactions(
                    in: range, withChanges: withChanges, store: self, mapping: mapping, connection: connection)
            }
        } catch let error as SQLiteError {
            throw error.coreDataError(url: _url, action: "reading the persistent history of")
        }
    }

    package func _deleteHistory(in range: PersistentHistoryRange) throws -> Int {
        try _checkWritable()
        let (history, connection, _) = try _openHistory()
        do {
            return try connection.transaction(immediate: true) { try history.delete(range, connection: connection) }
        } catch let error as SQLiteError {
            throw error.coreDataError(url: _url, action: "deleting the persistent history of")
        }
    }

    package func _lastHistoryTransactionNumber() throws -> Int64 {
        let (history, connection, _) = try _openHistory()
        do {
            return try history.lastTransactionNumber(connection: connection)
        } catch let error as SQLiteError {
            throw error.coreDataError(url: _url, action: "reading the persistent history of")
        }
    }

    package func _historyWasDeleted(after number: Int64) throws -> Bool {
        let (history, connection, _) = try _openHistory()
        do {
            return try history.hasDeletedTransactions(after: number, connection: connection)
        } catch let error as SQLiteError {
            throw error.coreDataError(url: _url, action: "reading the persistent history of")
        }
    }
}
