import Foundation

/// The binary store (`NSBinaryStoreType`): an atomic store kept in one file, read whole when the store is added and
/// written whole, atomically (a new file renamed over the old), by every save.
///
/// **The file format is OpenCoreData's own, not Apple's.** No file written by Apple's binary store could be found in
/// public sources to establish Apple's format from (its readers name private archiver classes), so a store written by
/// Apple's `NSBinaryStoreType` does not open here, nor the reverse; use the SQLite store to share files with Apple
/// platforms. The format, version 1, is a binary property list (`bplist00`, which Foundation reads on every
/// platform) whose root dictionary holds:
///
/// - `OpenCoreDataBinaryStore`: the format version, `1`;
/// - `metadata`: the store metadata (`NSStoreUUID`, `NSStoreType` = `"Binary"`, the model's version hashes…);
/// - `lastKey`: the last object key given out;
/// - `entities`: the names of the entities the objects belong to;
/// - `objects`: one array per object: `[entity index, key, version, values]`, where `values` maps each persistent
///   property that has a value to it — integers, doubles, booleans, strings, dates and data as themselves, UUIDs as 16
///   bytes of data, URIs as strings, decimals as strings, transformable values as their value transformer's data, a
///   to-one relationship as its destination's key, a to-many relationship as its destinations' keys (in order, for
///   an ordered one).
///
/// Keys are integers unique in the store, so object URIs read `x-coredata://<store UUID>/<Entity>/p<key>` as the SQLite
/// store's do. A file that is not such a property list, or names entities, keys or values that do not fit the model,
/// is reported as damaged (`CocoaError.fileReadCorruptFile`) and never half-loaded.
///
/// ```swift
/// try coordinator.addPersistentStore(ofType: NSBinaryStoreType, configurationName: nil, at: url, options: nil)
/// ```
final class NSBinaryStore: NSAtomicStore, @unchecked Sendable {
    // @unchecked: its state is NSAtomicStore's cache plus `lastKey`, which the coordinator uses one call at a time.

    /// The format version this release reads and writes.
    static let formatVersion = 1
    static let formatKey = "OpenCoreDataBinaryStore"

    private var lastKey: Int64 = 0

    override var type: String { NSBinaryStoreType }

    // MARK: Reading

    override func loadMetadata() throws {
        guard let url else { return try super.loadMetadata() }
        guard let file = try Self.readFile(at: url) else {
            try super.loadMetadata()
            // A new store: written empty now, as Apple's binary store does, so that it is on disk once it is added.
            if !isReadOnly, !StoreLocation.isDevNull(url), let model = persistentStoreCoordinator?.managedObjectModel {
                metadata = _metadataRecordingModel(model)
                try save()
            }
            return
        }
        metadata = file.metadata
        if let model = persistentStoreCoordinator?.managedObjectModel {
            // Checked before the objects are read, so that a store of another model is reported as such rather than
            // as objects that do not fit.
            try _checkCompatibility(with: model, configuration: configurationName)
            try addCacheNodes(Self.nodes(of: file, in: model, store: self, url: url, lastKey: &lastKey))
        }
    }

    override func load() throws {
        // Everything was read by `loadMetadata()`, with the metadata.
    }

    /// The contents of a store file: its metadata, and the rest of the root dictionary.
    struct File {
        let metadata: [String: Any]
        let root: [String: Any]
    }

    /// The file at `url`; `nil` if there is none.
    static func readFile(at url: URL) throws -> File? {
        switch StoreLocation(url) {
        case .missing: return nil
        case .devNull: return nil
        case .notAFile(let kind): throw StoreLocation.notAFileError(url, kind: kind, action: "open")
        case .regularFile: break
        }
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw coreDataError(
                NSPersistentStoreOpenError, "The binary store at \(url.path) cannot be read",
                userInfo: [NSURLErrorKey: url, NSUnderlyingErrorKey: error])
        }
        if data.isEmpty { return nil }
        let plist = try? PropertyListSerialization.propertyList(from: data, format: nil)
        guard let root = plist as? [String: Any] else {
            throw damaged(url, "it is not an OpenCoreData binary store (not a property list)")
        }
        guard let version = (root[formatKey] as? NSNumber)?.intValue else {
            throw damaged(url, "it is not an OpenCoreData binary store (no \(formatKey) format version)")
        }
        guard version == formatVersion else {
            throw damaged(
                url, "it is in format version \(version) of OpenCoreData's binary store; this release reads version 1")
        }
        guard let metadata = root["metadata"] as? [String: Any], metadata[NSStoreUUIDKey] is String else {
            throw damaged(url, "its metadata is missing or has no store UUID")
        }
        return File(metadata: metadata, root: root)
    }

    /// The cache nodes of the file's objects, checked against the model: every entity known, every key unique,
    /// every value of its property's type, every relationship naming an object of the file of the right entity.
    static func nodes(
        of file: File, in model: NSManagedObjectModel, store: NSBinaryStore, url: URL, lastKey: inout Int64
    ) throws -> Set<NSAtomicStoreCacheNode> {
        let names = file.root["entities"] as? [String] ?? []
        let objects = file.root["objects"] as? [Any] ?? []
        var entities: [NSEntityDescription] = []
        for name in names {
            guard let entity = model.entitiesByName[name] else {
                throw damaged(url, "it holds objects of entity '\(name)', which the model does not have")
            }
            entities.append(entity)
        }
        lastKey = (file.root["lastKey"] as? NSNumber)?.int64Value ?? 0
        // First the nodes, so that relationships can name any of them.
        var nodes: [Int64: NSAtomicStoreCacheNode] = [:]
        var rows: [(node: NSAtomicStoreCacheNode, values: [String: Any])] = []
        rows.reserveCapacity(objects.count)
        // The store's reference, looked up once rather than for every ID (a lock and a comparison of identifiers).
        let storeReference = store._objectIDReference
        for (index, object) in objects.enumerated() {
            guard let fields = object as? [Any], fields.count == 4,
                let entityIndex = (fields[0] as? NSNumber)?.intValue, entities.indices.contains(entityIndex),
                let key = (fields[1] as? NSNumber)?.int64Value,
                let version = (fields[2] as? NSNumber)?.int64Value, version > 0,
                let values = fields[3] as? [String: Any]
            else {
                throw damaged(url, "object \(index) is not [entity index, key, version, values]")
            }
            guard nodes[key] == nil else { throw damaged(url, "two objects have the key \(key)") }
            let node = NSAtomicStoreCacheNode(
                objectID: NSManagedObjectID(
                    entity: entities[entityIndex], storeReference: storeReference, reference: .primaryKey(key)))
            nodes[key] = node
            store._versions[node.objectID] = version
            rows.append((node, values))
            lastKey = max(lastKey, key)
        }
        for (node, values) in rows {
            let entity = node.objectID._entity
            let cache = NSMutableDictionary()
            for (name, stored) in values {
                guard let property = entity._caches.propertiesByName[name] else {
                    throw damaged(
                        url, "an object of '\(entity._name ?? "")' has a value for unknown property '\(name)'")
                }
                let value = try decode(stored, for: property, nodes: nodes, url: url)
                cache.setObject(value, forKey: name as NSString)
            }
            node.propertyCache = cache
        }
        return Set(nodes.values)
    }

    private static func decode(
        _ stored: Any, for property: NSPropertyDescription, nodes: [Int64: NSAtomicStoreCacheNode], url: URL
    ) throws -> Any {
        func wrong() -> Error {
            damaged(
                url,
                """
                the value of '\(property._name)' of an object of '\(property._entity?._name ?? "")' is a \
                \(Swift.type(of: stored)), which does not fit the property
                """)
        }
        func destination(_ key: Any) throws -> NSAtomicStoreCacheNode {
            guard let relationship = property as? NSRelationshipDescription,
                let number = (key as? NSNumber)?.int64Value, let node = nodes[number],
                relationship._destinationEntity.map({ node.objectID._entity.isKindOf(entity: $0) }) ?? false
            else {
                throw damaged(
                    url,
                    "relationship '\(property._name)' of an object names \(key), which is no object of its destination")
            }
            return node
        }
        switch property {
        case let relationship as NSRelationshipDescription:
            guard relationship.isToMany else { return try destination(stored) }
            guard let keys = stored as? [Any] else { throw wrong() }
            let members = try keys.map(destination)
            return relationship._isOrdered ? NSOrderedSet(array: members) : NSSet(array: members)
        case let attribute as NSAttributeDescription:
            switch attribute._attributeType {
            case .UUIDAttributeType:
                guard let data = stored as? Data, data.count == 16 else { throw wrong() }
                return data.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
            case .URIAttributeType:
                guard let string = stored as? String, let url = URL(string: string) else { throw wrong() }
                return url
            case .decimalAttributeType:
                guard let string = stored as? String, let decimal = Decimal(string: string, locale: posix) else {
                    throw wrong()
                }
                return NSDecimalNumber(decimal: decimal)
            case .transformableAttributeType, .compositeAttributeType:
                guard let data = stored as? Data else { throw wrong() }
                return SQLiteValueCoding.decodeTransformable(data, attribute: attribute) ?? data
            case let type:
                guard StoredValue.attributeValue(stored, type: type) != nil else { throw wrong() }
                return stored
            }
        default:
            throw wrong()
        }
    }

    static let posix = Locale(identifier: "en_US_POSIX")

    static func damaged(_ url: URL, _ reason: String) -> NSError {
        coreDataError(
            CocoaError.Code.fileReadCorruptFile.rawValue, "The binary store at \(url.path) is damaged: \(reason)",
            userInfo: [NSURLErrorKey: url])
    }

    // MARK: Writing

    override func newReferenceObject(for managedObject: NSManagedObject) -> Any {
        lastKey += 1
        return NSNumber(value: lastKey)
    }

    override func save() throws {
        guard let url, !StoreLocation.isDevNull(url) else { return }
        var entityIndex: [String: Int] = [:]
        var entityNames: [String] = []
        var objects: [[Any]] = []
        let nodes = cacheNodes().sorted { ($0.objectID._primaryKey ?? 0) < ($1.objectID._primaryKey ?? 0) }
        objects.reserveCapacity(nodes.count)
        for node in nodes {
            let entity = node.objectID._entity
            let name = entity._name ?? ""
            let index = entityIndex[name] ?? entityNames.count
            if index == entityNames.count {
                entityIndex[name] = index
                entityNames.append(name)
            }
            var values: [String: Any] = [:]
            let layout = entity._caches
            for slot in layout.persistentSlots {
                let property = layout.slots[slot].property
                guard let value = node.value(forKey: property._name), !(value is NSNull) else { continue }
                values[property._name] = try Self.encode(value, for: property)
            }
            objects.append([
                index, node.objectID._primaryKey ?? 0, _versions[node.objectID] ?? 1, values,
            ])
        }
        let root: [String: Any] = [
            Self.formatKey: Self.formatVersion, "metadata": try Self.propertyListMetadata(metadata ?? [:]),
            "lastKey": lastKey, "entities": entityNames, "objects": objects,
        ]
        try Self.write(root, to: url)
    }

    private static func encode(_ value: Any, for property: NSPropertyDescription) throws -> Any {
        func key(_ node: Any) -> Int64 { (node as? NSAtomicStoreCacheNode)?.objectID._primaryKey ?? 0 }
        switch property {
        case let relationship as NSRelationshipDescription:
            guard relationship.isToMany else { return key(value) }
            switch value {
            case let ordered as NSOrderedSet: return ordered.array.map(key)
            case let set as NSSet: return set.allObjects.map(key).sorted()
            default: return [Int64]()
            }
        case let attribute as NSAttributeDescription:
            switch attribute._attributeType {
            case .UUIDAttributeType:
                guard let uuid = value as? UUID else { break }
                return withUnsafeBytes(of: uuid.uuid) { Data($0) }
            case .URIAttributeType:
                guard let url = value as? URL else { break }
                return url.absoluteString
            case .decimalAttributeType:
                guard let stored = StoredValue.attributeValue(value, type: .decimalAttributeType),
                    case .boxed(let box) = stored, let decimal = box.value as? Decimal
                else { break }
                return decimal.description
            case .transformableAttributeType, .compositeAttributeType:
                return try SQLiteValueCoding.encodeTransformable(value, attribute: attribute)
            case .dateAttributeType:
                guard let date = value as? Date else { break }
                return date
            case let type:
                guard let stored = StoredValue.attributeValue(value, type: type), let plain = stored.publicValue else {
                    break
                }
                return plain
            }
        default:
            break
        }
        throw coreDataError(
            NSPersistentStoreSaveError,
            "The value of '\(property._name)' (a \(Swift.type(of: value))) cannot be written to a binary store")
    }

    private static func write(_ root: [String: Any], to url: URL) throws {
        do {
            let data = try PropertyListSerialization.data(fromPropertyList: root, format: .binary, options: 0)
            try data.write(to: url, options: .atomic)
        } catch let error as NSError where error.domain == NSCocoaErrorDomain && error.code >= 134_000 {
            throw error
        } catch {
            throw coreDataError(
                NSPersistentStoreSaveError, "The binary store at \(url.path) could not be written",
                userInfo: [NSURLErrorKey: url, NSUnderlyingErrorKey: error])
        }
    }

    /// `metadata` as property-list values: sets become arrays, `AnyHashable` is unwrapped; a value that is no
    /// property-list value fails the save with its key named.
    static func propertyListMetadata(_ metadata: [String: Any]) throws -> [String: Any] {
        func convert(_ value: Any) -> Any? {
            switch value {
            case let hashable as AnyHashable where !(hashable.base is String) && !(hashable.base is NSObject):
                return convert(hashable.base)
            case is String, is Data, is Date, is Bool, is Int, is Int64, is Int32, is Double, is Float, is NSNumber:
                return value
            case let array as [Any]:
                let converted = array.compactMap(convert)
                return converted.count == array.count ? converted : nil
            case let set as Set<AnyHashable>:
                let converted = set.map(\.base).compactMap(convert)
                return converted.count == set.count ? converted : nil
            case let dictionary as [String: Any]:
                var converted: [String: Any] = [:]
                for (key, element) in dictionary {
                    guard let element = convert(element) else { return nil }
                    converted[key] = element
                }
                return converted
            default:
                return nil
            }
        }
        var result: [String: Any] = [:]
        for (key, value) in metadata {
            guard let converted = convert(value) else {
                throw coreDataError(
                    NSPersistentStoreSaveError,
                    """
                    The metadata value for key '\(key)' is not a property list value (string, number, date, data, \
                    array or dictionary) and cannot be stored
                    """)
            }
            result[key] = converted
        }
        return result
    }

    // MARK: Metadata without a coordinator

    override class func metadataForPersistentStore(with url: URL) throws -> [String: Any] {
        guard let file = try readFile(at: url) else {
            throw coreDataError(
                NSPersistentStoreOpenError, "There is no binary store at \(url.path) to read the metadata of",
                userInfo: [NSURLErrorKey: url])
        }
        return file.metadata
    }

    override class func setMetadata(_ metadata: [String: Any]?, forPersistentStoreAt url: URL) throws {
        guard let file = try readFile(at: url) else {
            throw coreDataError(
                NSPersistentStoreOpenError, "There is no binary store at \(url.path) to write the metadata of",
                userInfo: [NSURLErrorKey: url])
        }
        var updated = metadata ?? [:]
        updated[NSStoreUUIDKey] = updated[NSStoreUUIDKey] ?? file.metadata[NSStoreUUIDKey]
        updated[NSStoreTypeKey] = updated[NSStoreTypeKey] ?? NSBinaryStoreType
        var root = file.root
        root["metadata"] = try propertyListMetadata(updated)
        try write(root, to: url)
    }
}
