import Foundation
import OpenCoreData

/// A sample `NSIncrementalStore` written with OpenCoreData's public API only, as a user's store in their own package
/// would be: its rows live in memory, in a database shared by every `DictionaryStore` opened at the same URL — so
/// that two coordinators on one URL see each other's saves, as two coordinators on one SQLite file do.
///
/// It answers every request itself: predicates and sort descriptors are evaluated against snapshots of its saved rows
/// (never against the context's objects, whose unsaved values are not the store's), dictionary results are projected
/// and aggregated from them, and each save bumps the saved rows' versions for optimistic locking.
///
/// ```swift
/// DictionaryStore.register()
/// try coordinator.addPersistentStore(
///     ofType: DictionaryStore.storeType, configurationName: nil, at: DictionaryStore.newURL(), options: nil)
/// ```
open class DictionaryStore: NSIncrementalStore, @unchecked Sendable {
    // @unchecked: the rows are in `Database`, behind its lock; the store's own state is the registration counts,
    // behind `registrationLock`.

    /// The type string the store is registered under.
    open class var storeType: String { "DictionaryStore" }

    /// Registers the class for `storeType` (again, harmlessly).
    public class func register() {
        NSPersistentStoreCoordinator.registerStoreClass(self, forStoreType: storeType)
    }

    /// A URL naming a new, empty database.
    public static func newURL() -> URL {
        URL(string: "dictionary-store://\(UUID().uuidString)")!
    }

    /// Forgets the database at `url`, as deleting a store's file does.
    public static func destroyDatabase(at url: URL) {
        databases.withLock { $0[url.absoluteString] = nil }
    }

    /// One saved object: its entity, the values of its attributes, its relationships as the reference objects of
    /// their destinations, and its version.
    struct Row {
        var entityName: String
        var attributes: [String: Any]
        var toOne: [String: String]
        var toMany: [String: [String]]
        var version: UInt64
    }

    /// The saved state of all the stores at one URL.
    final class Database: @unchecked Sendable {
        // @unchecked: every property is read and written under `lock`.
        let lock = NSRecursiveLock()
        var metadata: [String: Any]?
        var rows: [String: Row] = [:]
        var lastKey = 0
    }

    private static let databases = LockedValue<[String: Database]>([:])

    var database: Database {
        let key = url?.absoluteString ?? ""
        return Self.databases.withLock { databases in
            if let existing = databases[key] { return existing }
            let made = Database()
            databases[key] = made
            return made
        }
    }

    // MARK: Metadata

    open override func loadMetadata() throws {
        let database = self.database
        let stored = database.lock.withLock { database.metadata }
        if let stored {
            metadata = stored
        } else {
            let made: [String: Any] = [
                NSStoreTypeKey: Self.storeType,
                NSStoreUUIDKey: Self.identifierForNewStore(at: url ?? Self.newURL()),
            ]
            database.lock.withLock { database.metadata = made }
            metadata = made
        }
    }

    open override var type: String { Self.storeType }

    // MARK: Requests

    open override func execute(_ request: NSPersistentStoreRequest, with context: NSManagedObjectContext?) throws
        -> Any
    {
        switch request {
        case let saveRequest as NSSaveChangesRequest:
            try save(saveRequest)
            return [Any]()
        case let fetch as NSFetchRequest<NSFetchRequestResult>:
            return try self.fetch(fetch, context: context)
        default:
            throw CocoaError(
                .persistentStoreUnsupportedRequestType,
                userInfo: [NSLocalizedDescriptionKey: "DictionaryStore executes fetch and save requests only"])
        }
    }

    // MARK: Objects

    open override func newValuesForObject(with objectID: NSManagedObjectID, with context: NSManagedObjectContext)
        throws -> NSIncrementalStoreNode
    {
        guard let row = self.row(of: objectID) else { throw Self.missing(objectID) }
        var values = row.attributes
        for (name, key) in row.toOne {
            guard let relationship = objectID.entity.relationshipsByName[name],
                let destination = relationship.destinationEntity
            else { continue }
            values[name] = self.objectID(key: key, entityName: nil, fallback: destination) ?? NSNull()
        }
        for (name, relationship) in objectID.entity.relationshipsByName where !relationship.isToMany {
            if values[name] == nil { values[name] = NSNull() }
        }
        return NSIncrementalStoreNode(objectID: objectID, withValues: values, version: row.version)
    }

    open override func newValue(
        forRelationship relationship: NSRelationshipDescription, forObjectWith objectID: NSManagedObjectID,
        with context: NSManagedObjectContext?
    ) throws -> Any {
        guard let row = self.row(of: objectID), let destination = relationship.destinationEntity else {
            throw Self.missing(objectID)
        }
        if relationship.isToMany {
            return (row.toMany[relationship.name] ?? []).compactMap {
                self.objectID(key: $0, entityName: nil, fallback: destination)
            }
        }
        guard let key = row.toOne[relationship.name] else { return NSNull() }
        return self.objectID(key: key, entityName: nil, fallback: destination) ?? NSNull()
    }

    open override func obtainPermanentIDs(for array: [NSManagedObject]) throws -> [NSManagedObjectID] {
        let database = self.database
        return database.lock.withLock {
            array.map { object in
                database.lastKey += 1
                return newObjectID(for: object.entity, referenceObject: "k\(database.lastKey)")
            }
        }
    }

    // MARK: Registration

    private let registrationLock = NSLock()
    private var registrations: [NSManagedObjectID: Int] = [:]

    /// How many contexts use each object now, as the coordinator reports it.
    public var registrationCounts: [NSManagedObjectID: Int] {
        registrationLock.withLock { registrations }
    }

    open override func managedObjectContextDidRegisterObjects(with objectIDs: [NSManagedObjectID]) {
        registrationLock.withLock {
            for id in objectIDs { registrations[id, default: 0] += 1 }
        }
    }

    open override func managedObjectContextDidUnregisterObjects(with objectIDs: [NSManagedObjectID]) {
        registrationLock.withLock {
            for id in objectIDs {
                let count = (registrations[id] ?? 0) - 1
                registrations[id] = count > 0 ? count : nil
            }
        }
    }

    // MARK: Rows and IDs

    func row(of objectID: NSManagedObjectID) -> Row? {
        guard let key = referenceObject(for: objectID) as? String else { return nil }
        let database = self.database
        return database.lock.withLock { database.rows[key] }
    }

    /// The ID of the row `key`, of its own entity (looked up in `fallback`'s model).
    func objectID(key: String, entityName: String?, fallback: NSEntityDescription) -> NSManagedObjectID? {
        let name: String?
        if let entityName {
            name = entityName
        } else {
            let database = self.database
            name = database.lock.withLock { database.rows[key]?.entityName }
        }
        guard let name else { return nil }
        let model = persistentStoreCoordinator?.managedObjectModel
        let entity = model?.entitiesByName[name] ?? fallback
        return newObjectID(for: entity, referenceObject: key)
    }

    static func missing(_ objectID: NSManagedObjectID) -> Error {
        CocoaError(
            .managedObjectReferentialIntegrity,
            userInfo: [NSLocalizedDescriptionKey: "DictionaryStore has no object \(objectID.uriRepresentation())"])
    }
}

/// A value behind a lock: what the store's table of databases needs, without `Synchronization` (so that the sample
/// reads like code a user writes for any platform). Public for the tests of stores in other targets.
public final class LockedValue<Value>: @unchecked Sendable {
    // @unchecked: `value` is only touched under `lock`.
    private let lock = NSLock()
    private var value: Value

    public init(_ value: Value) { self.value = value }

    public func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
