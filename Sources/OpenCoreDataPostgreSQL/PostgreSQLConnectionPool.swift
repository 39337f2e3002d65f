import Foundation

/// The connections a store reads through beside its other calls: fetches from several contexts on several threads
/// run at once on connections of their own, while saves and everything else go through the store's one write
/// connection, inside the store's serialization.
///
/// The pool is bounded: with `NSPersistentStoreConnectionPoolMaxSizeKey` (or the URL's `pool_size`) at `n`, at most
/// `n` connections serve the store's requests at once, the write connection and `n - 1` reading ones (so 1 turns
/// reading beside other calls off). Reading connections are opened when first needed and kept; a fetch that finds
/// them all busy waits for one. A connection the server dropped (a restart, `pg_terminate_backend`) is not put back:
/// the next fetch opens a new one.
final class PostgreSQLConnectionPool: @unchecked Sendable {
    // @unchecked: every stored property is read and changed under `condition` only; a connection taken from the
    // pool is used by one thread until it is given back.

    /// What a fetch beside other calls needs from the store, set once the store is open.
    struct Setup {
        let configuration: PostgreSQLConfiguration
        let schema: PostgreSQLSchema
        /// Reading connections at most.
        let capacity: Int
    }

    /// The default of `NSPersistentStoreConnectionPoolMaxSizeKey` for a PostgreSQL store: the write connection and
    /// three reading ones.
    static let defaultMaximumSize = 4

    private let condition = NSCondition()
    private var setup: Setup?
    private var idle: [PostgreSQLConnection] = []
    /// Reading connections open or being opened, idle or in use.
    private var count = 0
    /// Whether `lower()` folds case beyond ASCII in the database, once a reading connection asked.
    private var caseFolding: Bool?

    /// Lets fetches read beside other calls, with at most `capacity` connections (none if it is 0).
    func start(_ setup: Setup) {
        condition.withLock {
            self.setup = setup
        }
    }

    /// Closes the idle connections and lets no more fetches in: the store is being removed. Connections in use are
    /// closed when they are given back.
    func stop() {
        let closing: [PostgreSQLConnection] = condition.withLock {
            setup = nil
            let closing = idle
            idle = []
            count -= closing.count
            condition.broadcast()
            return closing
        }
        _ = closing  // Released (and so closed, `PQfinish`) here, outside the lock.
    }

    /// Reading connections open now, idle or in use.
    var openCount: Int {
        condition.withLock { count }
    }

    /// Runs `body` with a reading connection of its own, the store's mapping and whether `lower()` folds more than
    /// ASCII; `nil` without running it when the store does not read beside other calls (not open, or a pool of one).
    func withConnection<T>(_ body: (PostgreSQLConnection, PostgreSQLSchema, Bool) throws -> T) throws -> T? {
        guard let (connection, setup) = try take() else { return nil }
        defer { giveBack(connection) }
        let folds: Bool
        if let known = condition.withLock({ caseFolding }) {
            folds = known
        } else {
            let ctype = try connection.query("SELECT current_setting('lc_ctype')").text(0, 0) ?? "C"
            folds = ctype != "C" && ctype != "POSIX"
            condition.withLock { caseFolding = folds }
        }
        return try body(connection, setup.schema, folds)
    }

    /// An idle connection, a new one if there is room, or the next one given back.
    private func take() throws -> (PostgreSQLConnection, Setup)? {
        condition.lock()
        while true {
            guard let setup, setup.capacity > 0 else {
                condition.unlock()
                return nil
            }
            if let connection = idle.popLast() {
                condition.unlock()
                return (connection, setup)
            }
            if count < setup.capacity {
                count += 1
                condition.unlock()
                do {
                    return (try PostgreSQLConnection(setup.configuration), setup)
                } catch {
                    condition.withLock {
                        count -= 1
                        condition.signal()
                    }
                    throw error
                }
            }
            condition.wait()
        }
    }

    /// Puts `connection` back for the next fetch, or drops it if the server dropped it or the pool stopped meanwhile
    /// (reading connections hold no transaction between fetches, so a usable one is as good as new).
    private func giveBack(_ connection: PostgreSQLConnection) {
        condition.withLock {
            if connection.isUsable, setup != nil {
                idle.append(connection)
            } else {
                count -= 1
            }
            condition.signal()
        }
    }
}
