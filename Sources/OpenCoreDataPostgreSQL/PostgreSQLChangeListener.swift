import CLibPQ
import Foundation

/// Listens for the commits of every process to one store (`LISTEN` on the store's channel; each save sends `NOTIFY`
/// in its transaction, so that the notice arrives when, and only if, it commits), on a thread and connection of its
/// own, and calls `onCommit` with each one's payload — for `NSPersistentStoreRemoteChangeNotificationPostOptionKey`.
///
/// The thread waits on the connection's socket a quarter of a second at a time, so that `cancel()` ends it soon; a
/// connection the server dropped is made again, and listening resumes (commits in between are not seen).
final class PostgreSQLChangeListener: @unchecked Sendable {
    // @unchecked: the connection is used by the listening thread only; `cancelled` is behind its lock.
    private let configuration: PostgreSQLConfiguration
    private let channel: String
    private let onCommit: @Sendable (String) -> Void
    private let lock = NSLock()
    private var cancelled = false
    private let finished = DispatchSemaphore(value: 0)

    /// The channel of the store with `identifier`: the same in every process that opens it.
    static func channel(forStore identifier: String) -> String {
        "opencoredata_" + identifier.lowercased()
    }

    /// Starts listening; throws if the first connection or `LISTEN` fails.
    init(configuration: PostgreSQLConfiguration, channel: String, onCommit: @escaping @Sendable (String) -> Void) throws
    {
        self.configuration = configuration
        self.channel = channel
        self.onCommit = onCommit
        let connection = try PostgreSQLConnection(configuration)
        try connection.execute("LISTEN \(quoted(channel))")
        // Handed to the thread, which alone uses it from then on.
        nonisolated(unsafe) let handedOver = connection
        let thread = Thread { [self] in
            listen(handedOver)
            finished.signal()
        }
        thread.name = "OpenCoreData PostgreSQL change listener"
        thread.start()
    }

    private var isCancelled: Bool { lock.withLock { cancelled } }

    /// Stops listening and waits for the thread to end.
    func cancel() {
        let first = lock.withLock {
            defer { cancelled = true }
            return !cancelled
        }
        if first { finished.wait() }
    }

    private func listen(_ first: PostgreSQLConnection) {
        var connection: PostgreSQLConnection? = first
        while !isCancelled {
            guard let current = connection else {
                // The server went away: try again now and then.
                Thread.sleep(forTimeInterval: 0.25)
                connection = try? PostgreSQLConnection(configuration)
                if let made = connection, (try? made.execute("LISTEN \(quoted(channel))")) == nil { connection = nil }
                continue
            }
            switch current.waitForNotifications(timeout: 250) {
            case .some(let payloads):
                for payload in payloads where !isCancelled { onCommit(payload) }
            case .none:
                connection = nil
            }
        }
    }
}

extension PostgreSQLConnection {
    /// Waits up to `timeout` milliseconds for notifications; the payloads of those that arrived (none if none), or
    /// `nil` if the connection is gone.
    func waitForNotifications(timeout: Int32) -> [String]? {
        guard let handle = rawHandle, PQstatus(handle) == CONNECTION_OK else { return nil }
        var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, timeout)
        if ready < 0 { return errno == EINTR ? [] : nil }
        guard PQconsumeInput(handle) == 1 else { return nil }
        var payloads: [String] = []
        while let notice = PQnotifies(handle) {
            payloads.append(notice.pointee.extra.map { String(cString: $0) } ?? "")
            PQfreemem(notice)
        }
        return payloads
    }
}
