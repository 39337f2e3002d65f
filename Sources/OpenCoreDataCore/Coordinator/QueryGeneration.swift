import Synchronization

/// A store that can keep reading itself as it was at one moment (Core Data's query generations): the SQLite store
/// with a write-ahead log, through a read transaction held open on a connection of its own.
package protocol PersistentStoreQueryGenerating: PersistentStoreBackend {
    /// A backend that reads the store as it is now, and keeps reading that state for as long as it is held; `nil` if
    /// the store cannot (it then reads unpinned, as Apple's stores without a write-ahead log do). Called inside the
    /// store's serialization. A store may hand out the same generation again while nothing was committed since.
    func currentGeneration() throws -> (any PersistentStoreGeneration)?
}

/// One store's part of a query generation: a backend that answers reads from the pinned state, and saves (which
/// generations do not affect) as the store itself does.
package protocol PersistentStoreGeneration: PersistentStoreBackend {
    /// The store it reads.
    var store: NSPersistentStore { get }
}

/// A generation of a coordinator's stores that contexts are pinned to: the pinned state of each store that keeps
/// one. Contexts hold it strongly and tokens weakly, so that it ends — and its stores let go of what keeps the state
/// readable — when the last context pinned to it moves on or goes away.
final class QueryGeneration: @unchecked Sendable {
    // @unchecked: immutable once made; each store's generation is used inside that store's serialization or under a
    // lock of its own.
    /// Unique in the process, never 0 (the number of `NSQueryGenerationToken.current`).
    let number: UInt64
    /// The coordinator whose stores it reads.
    weak var coordinator: NSPersistentStoreCoordinator?
    /// Each store's pinned state, by store identity (the generation holds the store, so the identity stays its).
    let stores: [ObjectIdentifier: any PersistentStoreGeneration]

    private static let counter = Atomic<UInt64>(0)

    init(coordinator: NSPersistentStoreCoordinator, stores: [ObjectIdentifier: any PersistentStoreGeneration]) {
        number = Self.counter.add(1, ordering: .relaxed).newValue
        self.coordinator = coordinator
        self.stores = stores
    }

    /// Whether both read the very same state of every store.
    func readsTheSameState(as stores: [ObjectIdentifier: any PersistentStoreGeneration]) -> Bool {
        self.stores.count == stores.count
            && self.stores.allSatisfy { key, generation in stores[key].map { $0 === generation } ?? false }
    }

    /// The token that names this generation.
    var token: NSQueryGenerationToken { NSQueryGenerationToken(number: number, generation: self) }
}

/// What a context reads: the latest commit, or one generation (see `NSManagedObjectContext+QueryGenerations.swift`).
enum ContextQueryGeneration {
    /// Reads the latest commit.
    case unpinned
    /// Pinned to the generation of its next read (`NSQueryGenerationToken.current`, and after a save, a merge or a
    /// reset).
    case current
    /// Pinned to a generation; `nil` when none of the coordinator's stores keeps generations (Apple's contexts then
    /// "gracefully revert to unpinned behavior").
    case pinned(QueryGeneration?)
}
