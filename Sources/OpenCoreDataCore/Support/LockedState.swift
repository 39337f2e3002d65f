import Foundation

/// A value shared between threads, read and changed under a lock: what `Synchronization.Mutex` does, with a lock
/// ThreadSanitizer understands.
///
/// Why not `Mutex`: on Linux it waits with the futex system call, which ThreadSanitizer does not see, so every
/// contended use of one was reported as a data race (`.ci/run` runs the concurrency suites under ThreadSanitizer,
/// and a false report there hides real ones). `NSLock` is a pthread mutex, which ThreadSanitizer follows.
/// Guarded by `LockedStateTests`.
final class LockedState<Value>: @unchecked Sendable {
    // @unchecked: `value` is only touched inside `withLock`, under `lock`. For the same reason its accesses are not
    // checked for exclusivity at run time (a check the lock makes redundant, on every lookup's format cache and ID).
    @exclusivity(unchecked) private var value: Value
    private let lock = NSLock()

    init(_ value: Value) { self.value = value }

    /// Runs `body` with the value, under the lock.
    @inline(__always)
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
