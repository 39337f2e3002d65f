import Foundation
import OpenCoreData
import StoreConformance

/// A deliberately faulty `NSIncrementalStore`: the sample dictionary store, made to answer one kind of request wrongly
/// at a time (`fault`), to show that the coordinator reports each mistake clearly and that the asking context stays
/// usable once the store behaves again.
final class FaultyIncrementalStore: DictionaryStore, @unchecked Sendable {
    // @unchecked: `fault` is set by the test between requests, on the test's thread.

    /// The mistakes the store can make.
    enum Fault {
        case none
        /// `newValuesForObject(with:with:)` returns the node of another object.
        case nodeForAnotherObject
        /// `newValuesForObject(with:with:)` gives an integer attribute a string.
        case attributeOfWrongType
        /// `newValuesForObject(with:with:)` gives a to-one relationship a string instead of an ID.
        case toOneNotAnID
        /// Fetches return a string instead of an array.
        case fetchNotAnArray
        /// Fetches of objects return IDs instead of objects.
        case fetchIDsForObjects
        /// Fetches return an ID of another store.
        case fetchForeignID
        /// Fetches return an ID of the wrong entity.
        case fetchWrongEntity
        /// Counts come back as two numbers.
        case countNotOneNumber
        /// `obtainPermanentIDs(for:)` returns one ID too few.
        case tooFewPermanentIDs
        /// `obtainPermanentIDs(for:)` returns one ID for every object.
        case samePermanentIDTwice
        /// `obtainPermanentIDs(for:)` returns temporary IDs.
        case temporaryPermanentIDs
        /// Saves fail halfway, with an error of the store's own domain.
        case saveThrows
        /// To-many relationships come back holding strings.
        case toManyNotIDs
        /// The next save finds that another writer (`otherWriter`, run first) changed its updated objects, and
        /// reports them as merge conflicts, as a database store finds them inside its transaction.
        case conflictInSave
    }

    /// Another process's write, for `conflictInSave`.
    var otherWriter: (() throws -> Void)?

    override class var storeType: String { "FaultyIncremental" }

    /// The mistake the store makes now.
    var fault = Fault.none
    /// The ID of a store of another coordinator, for `fetchForeignID`.
    var foreignID: NSManagedObjectID?

    struct Failure: Error, CustomStringConvertible {
        var description: String { "the disk caught fire" }
    }

    override func execute(_ request: NSPersistentStoreRequest, with context: NSManagedObjectContext?) throws -> Any {
        if request is NSSaveChangesRequest, fault == .saveThrows { throw Failure() }
        if let save = request as? NSSaveChangesRequest, fault == .conflictInSave, let context {
            fault = .none
            try otherWriter?()
            let conflicts = try (save.updatedObjects ?? []).map { object in
                let stored = try newValuesForObject(with: object.objectID, with: context).version
                return NSMergeConflict(
                    source: object, newVersion: Int(stored), oldVersion: Int(stored) - 1, cachedSnapshot: nil,
                    persistedSnapshot: nil)
            }
            throw NSError(
                domain: NSCocoaErrorDomain, code: NSManagedObjectMergeError,
                userInfo: [NSPersistentStoreSaveConflictsErrorKey: conflicts])
        }
        let answer = try super.execute(request, with: context)
        guard let fetch = request as? NSFetchRequest<NSFetchRequestResult> else { return answer }
        let results = answer as? [Any] ?? []
        switch fault {
        case .fetchNotAnArray:
            return "results"
        case .fetchIDsForObjects where fetch.resultType == .managedObjectResultType:
            return results.compactMap { ($0 as? NSManagedObject)?.objectID }
        case .fetchForeignID where fetch.resultType == .managedObjectIDResultType:
            return results + [foreignID as Any]
        case .fetchWrongEntity where fetch.resultType == .managedObjectIDResultType:
            let model = persistentStoreCoordinator!.managedObjectModel
            return results + [newObjectID(for: model.entitiesByName["Note"]!, referenceObject: "k1")]
        case .countNotOneNumber where fetch.resultType == .countResultType:
            return [NSNumber(value: 1), NSNumber(value: 2)]
        default:
            return answer
        }
    }

    override func newValuesForObject(with objectID: NSManagedObjectID, with context: NSManagedObjectContext) throws
        -> NSIncrementalStoreNode
    {
        let node = try super.newValuesForObject(with: objectID, with: context)
        let values = Dictionary(uniqueKeysWithValues: objectID.entity.properties.map { ($0.name, node.value(for: $0)) })
            .compactMapValues { $0 }
        switch fault {
        case .nodeForAnotherObject:
            let other = newObjectID(for: objectID.entity, referenceObject: "elsewhere")
            return NSIncrementalStoreNode(objectID: other, withValues: values, version: node.version)
        case .attributeOfWrongType:
            var wrong = values
            wrong["age"] = "thirty"
            return NSIncrementalStoreNode(objectID: objectID, withValues: wrong, version: node.version)
        case .toOneNotAnID:
            var wrong = values
            wrong["department"] = "R&D"
            return NSIncrementalStoreNode(objectID: objectID, withValues: wrong, version: node.version)
        default:
            return node
        }
    }

    override func newValue(
        forRelationship relationship: NSRelationshipDescription, forObjectWith objectID: NSManagedObjectID,
        with context: NSManagedObjectContext?
    ) throws -> Any {
        if fault == .toManyNotIDs, relationship.isToMany { return ["Ann", "Bob"] }
        return try super.newValue(forRelationship: relationship, forObjectWith: objectID, with: context)
    }

    override func obtainPermanentIDs(for array: [NSManagedObject]) throws -> [NSManagedObjectID] {
        let ids = try super.obtainPermanentIDs(for: array)
        switch fault {
        case .tooFewPermanentIDs: return Array(ids.dropLast())
        case .samePermanentIDTwice: return ids.map { _ in ids[0] }
        case .temporaryPermanentIDs: return array.map(\.objectID)
        default: return ids
        }
    }
}

/// A store whose `loadMetadata()` forgets the store UUID.
final class NamelessIncrementalStore: NSIncrementalStore, @unchecked Sendable {
    override func loadMetadata() throws {
        metadata = [NSStoreTypeKey: "Nameless"]
    }
}

/// A store that overrides nothing.
final class EmptyIncrementalStore: NSIncrementalStore, @unchecked Sendable {}
