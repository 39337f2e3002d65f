import Foundation
import OpenCoreData

extension DictionaryStore {
    /// Writes a save request: inserted and updated objects' rows are written whole (their versions counting up from
    /// 1), deleted objects' rows removed, and the store's metadata kept with them — all or nothing.
    func save(_ request: NSSaveChangesRequest) throws {
        // Values are read before the database is locked: reading a relationship that is still a fault asks this store
        // for it.
        var written: [(key: String, row: Row, isNew: Bool)] = []
        for (objects, isNew) in [(request.insertedObjects, true), (request.updatedObjects, false)] {
            for object in objects ?? [] {
                guard let key = referenceObject(for: object.objectID) as? String else {
                    throw CocoaError(
                        .persistentStoreSave,
                        userInfo: [NSLocalizedDescriptionKey: "\(object.objectID) is not an ID of DictionaryStore"])
                }
                written.append((key, try row(of: object), isNew))
            }
        }
        let deleted = (request.deletedObjects ?? []).compactMap { referenceObject(for: $0.objectID) as? String }
        let database = self.database
        let metadata = self.metadata
        database.lock.withLock {
            for entry in written {
                var row = entry.row
                row.version = entry.isNew ? 1 : (database.rows[entry.key]?.version ?? 0) + 1
                database.rows[entry.key] = row
            }
            for key in deleted { database.rows[key] = nil }
            database.metadata = metadata
        }
    }

    /// The row of an object as it is now in its context: every persistent attribute and relationship.
    private func row(of object: NSManagedObject) throws -> Row {
        var row = Row(entityName: object.entity.name ?? "", attributes: [:], toOne: [:], toMany: [:], version: 0)
        for (name, attribute) in object.entity.attributesByName where !attribute.isTransient {
            if let value = object.value(forKey: name) { row.attributes[name] = value }
        }
        for (name, relationship) in object.entity.relationshipsByName where !relationship.isTransient {
            let value = object.value(forKey: name)
            if relationship.isToMany {
                let destinations: [NSManagedObject]
                switch value {
                case let ordered as NSOrderedSet: destinations = ordered.array.compactMap { $0 as? NSManagedObject }
                case let set as Set<NSManagedObject>: destinations = Array(set)
                default: destinations = []
                }
                row.toMany[name] = try destinations.map(key(of:))
            } else if let destination = value as? NSManagedObject {
                row.toOne[name] = try key(of: destination)
            }
        }
        return row
    }

    private func key(of object: NSManagedObject) throws -> String {
        guard !object.objectID.isTemporaryID, let key = referenceObject(for: object.objectID) as? String else {
            throw CocoaError(
                .persistentStoreSave,
                userInfo: [
                    NSLocalizedDescriptionKey:
                        "DictionaryStore cannot save a relationship to \(object.objectID), which is not one of its objects"
                ])
        }
        return key
    }
}
