import Foundation

/// Query generations: a pinned context keeps reading the store as it was when it pinned itself — fetches, counts,
/// faults and relationship faults fired later — whatever other contexts, coordinators or processes commit
/// meanwhile, until it moves on.
///
/// A context pinned to `NSQueryGenerationToken.current` takes the generation of its next read. It moves on to the
/// generation of the read after a save, a merge (`mergeChanges(fromContextDidSave:)`,
/// `mergeChanges(fromRemoteContextSave:into:)`, and so automatic merges) or `reset()`, and when it is pinned again;
/// refreshing objects and batch requests leave it where it is. Saving itself, with its conflict checks, always works
/// against the latest commit. Child contexts are never pinned themselves: they read through their parent, and so
/// its generation. Only SQLite stores in WAL mode keep generations; with other stores a pinned context reads as an
/// unpinned one does, as on Apple platforms.
extension NSManagedObjectContext {
    /// The token of the generation the context reads: `nil` while it is unpinned — and before its first read after
    /// being pinned to `current` (or after a save, merge or reset), as the generation is taken lazily — and always
    /// for child contexts, and when none of its coordinator's stores keeps generations.
    public var queryGenerationToken: NSQueryGenerationToken? {
        _assertOnQueue()
        guard case .pinned(let generation?) = _queryGeneration else { return nil }
        return generation.token
    }

    /// Sets the query generation this context should use: `NSQueryGenerationToken.current` pins it to the generation
    /// of its next read, another context's `queryGenerationToken` to that context's generation, and `nil` unpins it.
    ///
    /// ```swift
    /// try viewContext.setQueryGenerationFrom(.current)
    /// ```
    ///
    /// Throws `NSPersistentStoreOperationError` for a token of another coordinator, or of a generation that ended
    /// (no context read it any more). Calling it on a child context with a token is a programmer error: a child
    /// reads its parent's generation.
    public func setQueryGenerationFrom(_ generation: NSQueryGenerationToken?) throws {
        _assertOnQueue()
        guard let generation else {
            _queryGeneration = .unpinned
            return
        }
        precondition(
            _parentContext == nil,
            """
            setQueryGenerationFrom(_:) was called on the child context \(_debugName): child contexts read their \
            parent's query generation; pin the parent context instead
            """)
        if generation._isCurrent {
            _queryGeneration = .current
            return
        }
        guard let pinned = generation._generation else {
            throw coreDataError(
                NSPersistentStoreOperationError,
                """
                The query generation \(generation) has ended (no context reads it any more), or was not made in this \
                process: pin the context \(_debugName) to NSQueryGenerationToken.current, or to the token of a \
                context that is still pinned
                """)
        }
        guard let coordinator = pinned.coordinator, coordinator === persistentStoreCoordinator else {
            throw coreDataError(
                NSPersistentStoreOperationError,
                """
                The query generation \(generation) is one of another persistent store coordinator's stores: the \
                context \(_debugName) can only be pinned to a generation of its own coordinator
                """)
        }
        _queryGeneration = .pinned(pinned)
    }

    /// The generation the context reads, taken now if it is pinned to the next read; `nil` if it reads the latest
    /// commit.
    func _pinnedGeneration() throws -> QueryGeneration? {
        switch _queryGeneration {
        case .unpinned:
            return nil
        case .pinned(let generation):
            return generation
        case .current:
            guard let coordinator = _coordinator else { return nil }
            let generation = try coordinator._currentQueryGeneration()
            _queryGeneration = .pinned(generation)
            return generation
        }
    }

    /// After a save, a merge or a reset, a pinned context moves on to the generation of its next read (and lets go
    /// of the one it read).
    func _queryGenerationMovesOn() {
        if case .unpinned = _queryGeneration { return }
        _queryGeneration = .current
    }
}
