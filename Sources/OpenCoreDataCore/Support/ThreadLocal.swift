#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A per-thread value: the context whose block is running on this thread, the object being constructed as a
/// fault. Kept out of Foundation's thread dictionary, which is too slow for per-object use.
final class ThreadLocal<Value: AnyObject>: @unchecked Sendable {
    // @unchecked: `key` is a constant; each thread reads and writes only its own value.
    // A constant, so that reading it is not an access the runtime checks for exclusivity.
    private let key = makeThreadKey()

    var value: Value? {
        get {
            guard let raw = pthread_getspecific(key) else { return nil }
            return Unmanaged<Value>.fromOpaque(raw).takeUnretainedValue()
        }
        set {
            pthread_setspecific(key, newValue.map { Unmanaged.passUnretained($0).toOpaque() })
        }
    }

    /// Runs `body` with the value set, restoring the previous value afterwards. The value is not retained: it must
    /// outlive the call, which it does for every use here.
    func withValue<T>(_ newValue: Value?, _ body: () throws -> T) rethrows -> T {
        let previous = value
        value = newValue
        defer { value = previous }
        return try body()
    }
}

/// A per-thread raw pointer, for handing a value that lives on the caller's stack to code the caller calls (without
/// allocating a box for it).
final class ThreadLocalPointer: @unchecked Sendable {
    // @unchecked: `key` is a constant; each thread reads and writes only its own value.
    private let key = makeThreadKey()

    var value: UnsafeMutableRawPointer? {
        @inline(__always) get { pthread_getspecific(key) }
        @inline(__always) set { pthread_setspecific(key, newValue) }
    }
}

/// A new key for per-thread values (with no destructor: the values are not owned by the thread).
private func makeThreadKey() -> pthread_key_t {
    var key = pthread_key_t()
    pthread_key_create(&key, nil)
    return key
}
