import Foundation
import OpenCoreData

/// A sample `NSAtomicStore` written with OpenCoreData's public API only: the whole store is one property list file,
/// read into cache nodes when the store is added (`load()`) and written whole on every save (`save()`).
///
/// ```swift
/// PropertyListAtomicStore.register()
/// try coordinator.addPersistentStore(
///     ofType: PropertyListAtomicStore.storeType, configurationName: nil, at: fileURL, options: nil)
/// ```
open class PropertyListAtomicStore: NSAtomicStore, @unchecked Sendable {
    // @unchecked: its state is NSAtomicStore's cache, which the coordinator uses one call at a time.

    /// The type string the store is registered under.
    public static let storeType = "PropertyListAtomic"

    /// Registers the class for `storeType` (again, harmlessly).
    public static func register() {
        NSPersistentStoreCoordinator.registerStoreClass(PropertyListAtomicStore.self, forStoreType: storeType)
    }

    open override var type: String { Self.storeType }

    /// The file's contents: `metadata`, and `objects`, one dictionary per object (`entity`, `key`, `attributes`,
    /// `toOne`, `toMany`).
    private func readFile() throws -> [String: Any]? {
        guard let url, FileManager.default.fileExists(atPath: url.path) else { return nil }
        let data = try Data(contentsOf: url)
        guard let file = try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any] else {
            throw CocoaError(
                .fileReadCorruptFile,
                userInfo: [NSLocalizedDescriptionKey: "\(url.path) is not a PropertyListAtomicStore file"])
        }
        return file
    }

    open override func loadMetadata() throws {
        if let metadata = try readFile()?["metadata"] as? [String: Any] {
            self.metadata = metadata
        } else {
            metadata = [NSStoreTypeKey: Self.storeType, NSStoreUUIDKey: UUID().uuidString]
        }
        try super.loadMetadata()
    }

    open override func load() throws {
        guard let file = try readFile(), let objects = file["objects"] as? [[String: Any]] else { return }
        guard let model = persistentStoreCoordinator?.managedObjectModel else { return }
        var nodes: [String: NSAtomicStoreCacheNode] = [:]
        for object in objects {
            guard let name = object["entity"] as? String, let key = object["key"] as? String,
                let entity = model.entitiesByName[name]
            else { continue }
            nodes[key] = NSAtomicStoreCacheNode(objectID: objectID(for: entity, withReferenceObject: key))
        }
        for object in objects {
            guard let key = object["key"] as? String, let node = nodes[key] else { continue }
            let entity = node.objectID.entity
            for (name, encoded) in object["attributes"] as? [String: Any] ?? [:] {
                node.setValue(Self.decode(encoded), forKey: name)
            }
            for (name, destination) in object["toOne"] as? [String: String] ?? [:] {
                node.setValue(nodes[destination], forKey: name)
            }
            for (name, destinations) in object["toMany"] as? [String: [String]] ?? [:] {
                let members = destinations.compactMap { nodes[$0] }
                let ordered = entity.relationshipsByName[name]?.isOrdered ?? false
                node.setValue(ordered ? NSOrderedSet(array: members) : NSSet(array: members), forKey: name)
            }
        }
        addCacheNodes(Set(nodes.values))
    }

    open override func save() throws {
        guard let url else { return }
        var objects: [[String: Any]] = []
        for node in cacheNodes() {
            let entity = node.objectID.entity
            var attributes: [String: Any] = [:]
            var toOne: [String: String] = [:]
            var toMany: [String: [String]] = [:]
            for (name, attribute) in entity.attributesByName where !attribute.isTransient {
                if let value = node.value(forKey: name), let encoded = Self.encode(value) {
                    attributes[name] = encoded
                }
            }
            for (name, relationship) in entity.relationshipsByName {
                let value = node.value(forKey: name)
                if relationship.isToMany {
                    let members: [Any]
                    switch value {
                    case let ordered as NSOrderedSet: members = ordered.array
                    case let set as NSSet: members = set.allObjects
                    default: members = []
                    }
                    toMany[name] = members.compactMap { ($0 as? NSAtomicStoreCacheNode).flatMap(key(of:)) }
                } else if let destination = value as? NSAtomicStoreCacheNode, let key = key(of: destination) {
                    toOne[name] = key
                }
            }
            guard let key = key(of: node) else { continue }
            objects.append([
                "entity": entity.name ?? "", "key": key, "attributes": attributes, "toOne": toOne, "toMany": toMany,
            ])
        }
        let file: [String: Any] = ["metadata": metadata ?? [:], "objects": objects]
        let data = try PropertyListSerialization.data(fromPropertyList: file, format: .binary, options: 0)
        try data.write(to: url, options: .atomic)
    }

    open override func newReferenceObject(for managedObject: NSManagedObject) -> Any {
        UUID().uuidString
    }

    private func key(of node: NSAtomicStoreCacheNode) -> String? {
        referenceObject(for: node.objectID) as? String
    }

    /// A value as the file holds it: a one-entry dictionary whose key says what the value was.
    static func encode(_ value: Any) -> [String: Any]? {
        switch value {
        case let number as NSDecimalNumber: return ["decimal": number.stringValue]
        case let decimal as Decimal: return ["decimal": NSDecimalNumber(decimal: decimal).stringValue]
        case let number as NSNumber: return ["number": number]
        case let string as String: return ["string": string]
        case let date as Date: return ["date": date]
        case let data as Data: return ["data": data]
        case let uuid as UUID: return ["uuid": uuid.uuidString]
        case let url as URL: return ["url": url.absoluteString]
        case let strings as [String]: return ["strings": strings]
        default: return nil
        }
    }

    static func decode(_ encoded: Any) -> Any? {
        guard let entry = encoded as? [String: Any], let (kind, value) = entry.first else { return nil }
        switch kind {
        case "decimal": return (value as? String).map { NSDecimalNumber(string: $0) }
        case "uuid": return (value as? String).flatMap(UUID.init(uuidString:))
        case "url": return (value as? String).flatMap(URL.init(string:))
        default: return value
        }
    }
}
