import Foundation
import OpenCoreData
import Testing

/// A kind of store the conformance suite runs against: its type string and how to make a place for a new store.
///
/// A package with a store of its own adds a fixture for it and runs every case:
///
/// ```swift
/// extension StoreFixture {
///     static let postgreSQL = StoreFixture(
///         name: "PostgreSQL", storeType: PostgreSQLStoreType, persists: true, sharesLiveChanges: true,
///         makeURL: { PostgreSQLTestDatabase.newURL() }, destroy: { PostgreSQLTestDatabase.drop($0) })
/// }
///
/// @Test(arguments: StoreConformanceCase.all)
/// func conformance(_ testCase: StoreConformanceCase) throws { try testCase.run(.postgreSQL) }
/// ```
public struct StoreFixture: Sendable, CustomTestStringConvertible {
    /// The name tests are reported under.
    public let name: String
    /// The store type string the coordinator is given.
    public let storeType: String
    /// Whether a store added at the same URL by another coordinator finds what the first one saved.
    public let persists: Bool
    /// Whether two coordinators on one URL see each other's later saves, so that a conflict between them is caught
    /// (true of database-backed stores; an atomic store reads its file once, when added).
    public let sharesLiveChanges: Bool
    let makeURL: @Sendable () -> URL?
    let destroy: @Sendable (URL?) -> Void
    let prepare: @Sendable () -> Void

    public init(
        name: String, storeType: String, persists: Bool, sharesLiveChanges: Bool,
        makeURL: @escaping @Sendable () -> URL?, destroy: @escaping @Sendable (URL?) -> Void = { _ in },
        prepare: @escaping @Sendable () -> Void = {}
    ) {
        self.name = name
        self.storeType = storeType
        self.persists = persists
        self.sharesLiveChanges = sharesLiveChanges
        self.makeURL = makeURL
        self.destroy = destroy
        self.prepare = prepare
    }

    public var testDescription: String { name }

    /// A new, empty place for a store (its store type made known first).
    public func newURL() -> URL? {
        prepare()
        return makeURL()
    }

    /// Deletes what a store at `url` left behind.
    public func destroyStore(at url: URL?) {
        destroy(url)
    }

    // MARK: The framework's stores and the samples

    /// Core Data's default store, in a temporary file.
    public static let sqlite = StoreFixture(
        name: "SQLite", storeType: NSSQLiteStoreType, persists: true, sharesLiveChanges: true,
        makeURL: { temporaryFile("sqlite") }, destroy: removeFiles)

    /// The in-memory store: nothing outlives the coordinator.
    public static let inMemory = StoreFixture(
        name: "InMemory", storeType: NSInMemoryStoreType, persists: false, sharesLiveChanges: false,
        makeURL: { nil })

    /// The sample `NSIncrementalStore` (public API only).
    public static let dictionary = StoreFixture(
        name: "DictionaryStore (NSIncrementalStore)", storeType: DictionaryStore.storeType, persists: true,
        sharesLiveChanges: true, makeURL: { DictionaryStore.newURL() },
        destroy: { url in url.map(DictionaryStore.destroyDatabase(at:)) }, prepare: { DictionaryStore.register() })

    /// The sample `NSAtomicStore` (public API only), in a temporary property list file.
    public static let propertyListAtomic = StoreFixture(
        name: "PropertyListAtomicStore (NSAtomicStore)", storeType: PropertyListAtomicStore.storeType, persists: true,
        sharesLiveChanges: false, makeURL: { temporaryFile("plist") }, destroy: removeFiles,
        prepare: { PropertyListAtomicStore.register() })

    /// The binary store (OpenCoreData's own file format), in a temporary file.
    public static let binary = StoreFixture(
        name: "Binary", storeType: NSBinaryStoreType, persists: true, sharesLiveChanges: false,
        makeURL: { temporaryFile("binary") }, destroy: removeFiles)

    /// Every store of this package.
    public static let all: [StoreFixture] = [.sqlite, .inMemory, .binary, .propertyListAtomic, .dictionary]

    static func temporaryFile(_ pathExtension: String) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent(
            "StoreConformance-\(UUID().uuidString).\(pathExtension)")
    }

    @Sendable static func removeFiles(_ url: URL?) {
        guard let url else { return }
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(at: URL(fileURLWithPath: url.path + suffix))
        }
    }
}
