import Foundation

/// A token that indicates which generation of the persistent store a context reads: `current` asks a context to pin
/// itself to the store as it is at its next read, and a pinned context's `queryGenerationToken` names the generation
/// it reads, so that another context of the same coordinator can be pinned to it too.
///
/// ```swift
/// try viewContext.setQueryGenerationFrom(.current)        // pinned at the next fetch or fault
/// let items = try viewContext.fetch(request)               // reads the store as it is now, and keeps reading that
/// try otherContext.setQueryGenerationFrom(viewContext.queryGenerationToken)  // the same generation
/// try viewContext.setQueryGenerationFrom(nil)              // unpinned: reads the latest commit again
/// ```
///
/// Tokens compare equal when they denote the same generation. A token does not keep its generation alive: once no
/// context reads a generation any more it expires (the SQLite store lets go of the read transaction that kept it,
/// so that the write-ahead log can be checkpointed), and pinning a context to an expired token throws.
open class NSQueryGenerationToken: NSObject, NSCopying, NSSecureCoding, @unchecked Sendable {
    // @unchecked: immutable once made (`_generation` is a weak reference, which Swift reads atomically).
    /// 0 for `current`; otherwise the number of the generation (see `QueryGeneration.number`), unique in the process.
    let _number: UInt64
    /// The generation the token names, while some context reads it.
    weak var _generation: QueryGeneration?

    /// A token that informs a context to use the current generation.
    public class var current: NSQueryGenerationToken { _current }

    private static let _current = NSQueryGenerationToken(number: 0, generation: nil)

    init(number: UInt64, generation: QueryGeneration?) {
        _number = number
        _generation = generation
        super.init()
    }

    /// Whether this is `current`, which names no generation of its own.
    var _isCurrent: Bool { _number == 0 }

    public static var supportsSecureCoding: Bool { true }

    private static let numberKey = "generation"

    public func encode(with coder: NSCoder) {
        coder.encode(Int64(bitPattern: _number), forKey: Self.numberKey)
    }

    /// A decoded token compares equal to the token it was encoded from, but names no generation a context can be
    /// pinned to (that throws), except `current`: a generation is a read transaction of this process.
    public required init?(coder: NSCoder) {
        _number = UInt64(bitPattern: coder.decodeInt64(forKey: Self.numberKey))
        _generation = nil
        super.init()
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSQueryGenerationToken else { return false }
        return other._number == _number
    }

    open override var hash: Int { _number.hashValue }

    open override var description: String {
        _isCurrent ? "<NSQueryGenerationToken: current>" : "<NSQueryGenerationToken: generation \(_number)>"
    }
}
