import Foundation

/// The data every library writes and reads: the same rows, generated deterministically.
///
/// The entity has 10 attributes: 3 Int64 (`serial`, indexed; `quantity`; `flags`), 2 Double (`price`, `ratio`),
/// 3 strings of 20 characters (`name`, `category`, `note`), a 16-byte `payload` and an optional integer `rank` that
/// is nil in one row of three.
public enum Fixture {
    /// Rows in the item table.
    public static let itemCount = 100_000
    /// Objects looked up one at a time, updated, or deleted (with their children).
    public static let batchCount = 10_000
    /// Objects changed one at a time, each change saved on its own.
    public static let editCount = 1_000
    /// Children of each deleted parent.
    public static let childrenPerDeletedParent = 10
    /// Parents, and children of each, in the relationship walk.
    public static let walkedParents = 1_000
    public static let childrenPerWalkedParent = 100
    /// What the `CONTAINS[cd]` fetch looks for: it matches "CAFÉ Olé …" and "cafe au lait …", two names in ten.
    public static let searchedText = "cafe"

    /// Thirteen characters each; mixed case and diacritics, for the case- and diacritic-insensitive search.
    static let words = [
        "Alpha station", "Bravo harbour", "CAFÉ Olé noir", "Delta kitchen", "Écho du matin", "Foxtrot lodge",
        "cafe au lait ", "Hôtel Central", "India market", "Juliet garden",
    ]

    /// Every item, made once.
    public static let items: [ItemValues] = (0..<itemCount).map(item)

    /// The item with serial `index` (0-based). Rows are inserted in serial order, so row IDs are `index + 1`.
    public static func item(_ index: Int) -> ItemValues {
        let serial = Int64(index)
        var bytes = [UInt8](repeating: 0, count: 16)
        var state = UInt64(truncatingIfNeeded: index) &* 0x9E37_79B9_7F4A_7C15
        for offset in 0..<16 {
            state ^= state >> 29
            state = state &* 0xBF58_476D_1CE4_E5B9
            bytes[offset] = UInt8(truncatingIfNeeded: state >> 56)
        }
        let payload = Data(bytes)
        return ItemValues(
            serial: serial,
            quantity: Int64(index % 1_000),
            flags: Int64(index & 0xFF),
            price: Double(index) * 0.25,
            ratio: Double(index % 100) / 100,
            name: words[index % words.count] + " " + digits(index, 6),
            category: "category-" + digits(index % 5_000, 11),
            note: "note-" + digits(index &* 7_919 % 1_000_003, 15),
            payload: payload,
            rank: index % 3 == 0 ? nil : Int64(index)
        )
    }

    /// The serials of the objects looked up one at a time: spread over the whole table, each once.
    public static var lookedUpSerials: [Int64] {
        (0..<batchCount).map { Int64($0 &* 7_919 % itemCount) }
    }

    /// The attribute data of one average item, in bytes: what the memory row's overhead is measured beyond.
    /// Strings count their UTF-8 bytes; the optional integer counts 8 bytes where it is not nil.
    public static var attributeBytesPerItem: Double {
        var total = 0
        for item in items {
            total += 3 * 8 + 2 * 8 + item.payload.count
            total += item.name.utf8.count + item.category.utf8.count + item.note.utf8.count
            total += item.rank == nil ? 0 : 8
        }
        return Double(total) / Double(itemCount)
    }

    static func digits(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
}

/// One item's attribute values, as the raw SQLite code holds them.
public struct ItemValues: Sendable, Equatable {
    public var serial: Int64
    public var quantity: Int64
    public var flags: Int64
    public var price: Double
    public var ratio: Double
    public var name: String
    public var category: String
    public var note: String
    public var payload: Data
    public var rank: Int64?

    public init(
        serial: Int64, quantity: Int64, flags: Int64, price: Double, ratio: Double, name: String, category: String,
        note: String, payload: Data, rank: Int64?
    ) {
        self.serial = serial
        self.quantity = quantity
        self.flags = flags
        self.price = price
        self.ratio = ratio
        self.name = name
        self.category = category
        self.note = note
        self.payload = payload
        self.rank = rank
    }
}

/// Folds the values read from one object into a number, so that the compiler cannot skip the reads and so that a
/// workload can check it read what was written.
public struct Checksum: Equatable, Sendable, CustomStringConvertible {
    public private(set) var value: UInt64 = 0
    public private(set) var count = 0

    public init() {}

    @inline(__always)
    public mutating func add(_ integer: Int64) {
        value = (value &* 31) &+ UInt64(bitPattern: integer)
    }

    @inline(__always)
    public mutating func add(_ double: Double) {
        value = (value &* 31) &+ double.bitPattern
    }

    @inline(__always)
    public mutating func add(_ string: String) {
        value = (value &* 31) &+ UInt64(string.utf8.count)
    }

    @inline(__always)
    public mutating func add(_ data: Data) {
        value = (value &* 31) &+ UInt64(data.count) &+ UInt64(data.first ?? 0)
    }

    @inline(__always)
    public mutating func add(_ optional: Int64?) {
        value = (value &* 31) &+ (optional.map { UInt64(bitPattern: $0) } ?? 0xFFFF)
    }

    /// Counts one object read.
    @inline(__always)
    public mutating func object() {
        count += 1
    }

    public mutating func add(_ item: ItemValues) {
        add(item.serial)
        add(item.quantity)
        add(item.flags)
        add(item.price)
        add(item.ratio)
        add(item.name)
        add(item.category)
        add(item.note)
        add(item.payload)
        add(item.rank)
        object()
    }

    public var description: String { "\(count) objects, checksum \(String(value, radix: 16))" }
}

/// A directory of database files for one run, removed when it goes away.
public final class ScratchDirectory: @unchecked Sendable {
    public let url: URL

    public init(_ name: String) {
        let base =
            ProcessInfo.processInfo.environment["OPENCOREDATA_BENCHMARK_DIRECTORY"]
            .map { URL(fileURLWithPath: $0, isDirectory: true) } ?? FileManager.default.temporaryDirectory
        url = base.appendingPathComponent("ocd-bench-\(name)-\(getpid())-\(UUID().uuidString.prefix(8))")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    public func file(_ name: String) -> URL {
        url.appendingPathComponent(name)
    }
}

/// Fixture databases built once and copied for each use: in the directory `OPENCOREDATA_BENCHMARK_DIRECTORY` names
/// when the `run` script or a profile gives one, so that every benchmark process shares them (building one under
/// valgrind takes longer than the work it counts), otherwise in the process's scratch directory.
enum TemplateFiles {
    /// The template called `name`, built by `build` (given an empty database's URL) if it does not exist yet.
    static func url(named name: String, in scratch: ScratchDirectory, build: (URL) throws -> Void) throws -> URL {
        let directory =
            ProcessInfo.processInfo.environment["OPENCOREDATA_BENCHMARK_DIRECTORY"]
            .map { URL(fileURLWithPath: $0, isDirectory: true) } ?? scratch.url
        let url = directory.appendingPathComponent("template-\(name).sqlite")
        if FileManager.default.fileExists(atPath: url.path) { return url }
        let building = scratch.file("building-\(name).sqlite")
        DatabaseFiles.remove(building)
        try build(building)
        // Another process may build the same template meanwhile: each renames its own complete copy into place, the
        // main file last, so that a template whose main file exists is whole.
        let partial = URL(fileURLWithPath: url.path + ".\(getpid()).partial")
        try DatabaseFiles.copy(building, to: partial)
        DatabaseFiles.remove(building)
        for suffix in ["-wal", ""] where FileManager.default.fileExists(atPath: partial.path + suffix) {
            guard rename(partial.path + suffix, url.path + suffix) == 0 else {
                throw WorkloadMismatch(description: "could not move the template \(name) into place (errno \(errno))")
            }
        }
        return url
    }
}

/// Database files: a SQLite database is its main file plus `-wal` and `-shm` in WAL mode.
public enum DatabaseFiles {
    public static func remove(_ url: URL) {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            try? FileManager.default.removeItem(atPath: url.path + suffix)
        }
    }

    /// Copies a closed (checkpointed) database to `destination`, replacing what is there.
    public static func copy(_ source: URL, to destination: URL) throws {
        remove(destination)
        for suffix in ["", "-wal"] {
            let from = source.path + suffix
            guard FileManager.default.fileExists(atPath: from) else { continue }
            try FileManager.default.copyItem(atPath: from, toPath: destination.path + suffix)
        }
    }
}
