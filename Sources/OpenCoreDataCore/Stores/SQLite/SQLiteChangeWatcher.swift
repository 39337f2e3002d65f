import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Tells when any connection — this store's, another coordinator's, another process's — commits to a store file,
/// for `NSPersistentStoreRemoteChangeNotificationPostOptionKey`.
///
/// No polling: the kernel reports writes to the file and its journal (inotify, on the folder, since SQLite creates
/// and deletes the `-wal` and `-journal` files), and a connection of the watcher's own then asks SQLite whether a
/// commit happened (`PRAGMA data_version` changes when another connection commits). A write is reported before
/// its commit is visible, so each burst of writes is looked at once more shortly after its last event.
final class SQLiteChangeWatcher: @unchecked Sendable {
    // @unchecked: its variables and its connection are used on `queue` only (the inotify source's handler and
    // `cancel()`, which hops onto it); the rest is constant.
    private let connection: SQLiteConnection
    private let queue = DispatchQueue(label: "OpenCoreData.SQLiteChangeWatcher")
    private let names: Set<String>
    private let onCommit: @Sendable (SQLiteConnection) -> Void
    private var lastVersion: Int64 = 0
    private var pendingRecheck = false
    private var isCancelled = false
    #if canImport(Glibc)
    private let descriptor: Int32
    private var source: DispatchSourceRead?
    #endif

    /// Starts watching `url`; `onCommit` runs on the watcher's queue with its connection after every commit.
    init(url: URL, onCommit: @escaping @Sendable (SQLiteConnection) -> Void) throws {
        connection = try SQLiteConnection(path: url.path, readOnly: true, create: false)
        connection.setBusyTimeout(seconds: 1)
        let name = url.lastPathComponent
        names = [name, name + "-wal", name + "-journal"]
        self.onCommit = onCommit
        lastVersion = (try? connection.scalar("PRAGMA data_version")) ?? 0
        #if canImport(Glibc)
        descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        let events = UInt32(IN_MODIFY | IN_CLOSE_WRITE | IN_CREATE | IN_MOVED_TO | IN_DELETE)
        guard descriptor >= 0,
            inotify_add_watch(descriptor, url.deletingLastPathComponent().path, events) >= 0
        else {
            let code = errno
            if descriptor >= 0 { Glibc.close(descriptor) }
            connection.close()
            throw coreDataError(
                NSPersistentStoreOpenError,
                """
                Cannot watch the store at \(url.path) for changes by other processes \
                (NSPersistentStoreRemoteChangeNotificationPostOptionKey): inotify failed with errno \(code)
                """)
        }
        queue.setSpecific(key: Self.queueKey, value: ObjectIdentifier(self))
        let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
        source.setEventHandler { [weak self] in self?._readEvents() }
        let descriptor = self.descriptor
        source.setCancelHandler { Glibc.close(descriptor) }
        self.source = source
        source.resume()
        #else
        connection.close()
        throw coreDataError(
            NSPersistentStoreOpenError,
            "NSPersistentStoreRemoteChangeNotificationPostOptionKey needs inotify, which this platform does not have")
        #endif
    }

    /// Stops watching; no `onCommit` runs after it returns. (It may be called from `onCommit`: an observer of the
    /// notification may remove the store.)
    func cancel() {
        let stop = {
            #if canImport(Glibc)
            self.source?.cancel()
            self.source = nil
            #endif
            self.isCancelled = true
            self.connection.close()
        }
        if DispatchQueue.getSpecific(key: Self.queueKey) == ObjectIdentifier(self) {
            stop()
        } else {
            queue.sync(execute: stop)
        }
    }

    private static let queueKey = DispatchSpecificKey<ObjectIdentifier>()

    #if canImport(Glibc)
    private func _readEvents() {
        guard source != nil else { return }
        var buffer = [UInt8](repeating: 0, count: 4096)
        var relevant = false
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            var offset = 0
            while offset + MemoryLayout<inotify_event>.size <= count {
                let (length, name) = buffer.withUnsafeBytes { bytes -> (Int, String) in
                    let event = bytes.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    let start = offset + MemoryLayout<inotify_event>.size
                    let raw = bytes[start..<min(start + Int(event.len), count)]
                    return (Int(event.len), String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self))
                }
                if names.contains(name) { relevant = true }
                offset += MemoryLayout<inotify_event>.size + length
            }
        }
        guard relevant else { return }
        _check()
        if !pendingRecheck {
            pendingRecheck = true
            queue.asyncAfter(deadline: .now() + .milliseconds(50)) { [weak self] in
                guard let self, self.source != nil else { return }
                self.pendingRecheck = false
                self._check()
            }
        }
    }
    #endif

    /// Reports a commit if the file's data version moved since last looked at.
    private func _check() {
        guard !isCancelled, let version = try? connection.scalar("PRAGMA data_version"), version != lastVersion else {
            return
        }
        lastVersion = version
        onCommit(connection)
    }
}
