/// Computes version hashes exactly as Apple's Core Data does, so that stores written on Apple platforms match models
/// loaded here and the reverse.
///
/// Every hash is a SHA-256 digest; strings enter as their UTF-8 bytes with no terminator or length, numbers as
/// little-endian integers:
///
/// - property: name, then a 16-bit flags word (optional 1, transient 2, read-only 4), then the version hash modifier;
/// - attribute: the property hash, the 32-bit attribute type, then one byte `1` if it allows external binary storage
///   and one byte `1` if it preserves its value in history on deletion;
/// - derived attribute: the `predicateFormat` of its derivation expression and of its filtering predicate — Core
///   Data computes the attribute hash too but leaves it out of the digest;
/// - composite attribute: the hashes of its non-transient elements, nested composites flattened, in name order —
///   here too the attribute's own hash is computed and left out;
/// - relationship: the property hash, the destination entity's name, the inverse relationship's name (unless the
///   relationship is its own inverse), the 32-bit maximum and minimum counts, then a 16-bit `1` if ordered;
/// - entity: name, a byte for abstract, the superentity's hash, the hashes of all its non-transient attributes and
///   relationships (inherited ones included, fetched properties left out) in name order, the version hash
///   modifier, then each uniqueness constraint with its property names joined by `.`, in sorted order.
///
/// A model's `versionChecksum` is the Base64 SHA-256 of its entity hashes in entity-name order, and the store
/// metadata's `NSStoreModelVersionHashesDigest` the Base64 SHA-512 of each entity's name followed by its hash.
///
/// These rules reproduce all 18 entity hashes of the corpus's compiled models (`VersionInfo.plist`), the 14
/// property hashes of its optimized model (`.omo`), and all 33 entity hashes recorded in the corpus stores'
/// metadata (see `VersionHashTests.swift`).
enum ModelVersionHasher {
    /// The entity's version hash: the one computed when its model became immutable, or else computed now.
    static func versionHash(of entity: NSEntityDescription) -> Data {
        if let frozen = entity._frozenVersionHash { return frozen }
        var superentityHash: Data?
        if let parent = entity._superentity { superentityHash = versionHash(of: parent) }
        let properties = entity._caches.allProperties.filter(affectsEntityHash).sorted {
            ordered($0._name, before: $1._name)
        }
        return entityHash(entity, superentityHash: superentityHash, propertyHashes: properties.map(propertyHash))
    }

    /// The hash of `entity` from its superentity's hash and the hashes of its persistent properties in name order.
    private static func entityHash(
        _ entity: NSEntityDescription, superentityHash: Data?, propertyHashes: [[UInt8]]
    ) -> Data {
        var bytes: [UInt8] = Array((entity._name ?? "").utf8)
        bytes.reserveCapacity(bytes.count + 33 + 32 * propertyHashes.count)
        bytes.append(entity._isAbstract ? 1 : 0)
        if let superentityHash { bytes += superentityHash }
        for hash in propertyHashes { bytes += hash }
        bytes += Array((entity._versionHashModifier ?? "").utf8)
        let constraints = entity._uniquenessConstraints.map { constraint in
            constraint.map { element in
                (element as? NSPropertyDescription)?._name ?? (element as? String) ?? String(describing: element)
            }.joined(separator: ".")
        }
        for constraint in constraints.sorted(by: { ordered($0, before: $1) }) where !constraint.isEmpty {
            bytes += Array(constraint.utf8)
        }
        return Data(SHA256.hash(bytes))
    }

    /// The version hash of every entity of a model. Each property is hashed once, and each entity's properties in
    /// name order are its superentity's merged with its own: computed entity by entity, a chain of n entities with
    /// a property each hashed n³/6 properties and sorted as many names.
    static func versionHashes(of entities: [NSEntityDescription]) -> [ObjectIdentifier: Data] {
        // The names in hash order, once, so that entities merge their lists by comparing integers.
        var rank: [String: Int] = [:]
        for entity in entities {
            for property in entity._ownProperties { rank[property._name] = 0 }
        }
        for (index, name) in rank.keys.sorted(by: { ordered($0, before: $1) }).enumerated() { rank[name] = index }
        struct Entry {
            let rank: Int
            let hash: [UInt8]?
        }
        let members = Set(entities.map(ObjectIdentifier.init))
        // Superentities first, depth first; a superentity's list lives until its last subentity took it.
        var lists: [ObjectIdentifier: [Entry]] = [:]
        var pendingSubentities: [ObjectIdentifier: Int] = [:]
        var hashes: [ObjectIdentifier: Data] = [:]
        hashes.reserveCapacity(entities.count)
        var stack = entities.filter { $0._superentity.map { !members.contains(ObjectIdentifier($0)) } ?? true }
        while let entity = stack.popLast() {
            var inherited: [Entry] = []
            if let parent = entity._superentity, members.contains(ObjectIdentifier(parent)) {
                let key = ObjectIdentifier(parent)
                pendingSubentities[key, default: 1] -= 1
                inherited = (pendingSubentities[key] == 0 ? lists.removeValue(forKey: key) : lists[key]) ?? []
            }
            // Its own properties replace inherited ones of the same name, and leave the hash if transient.
            let own = entity._ownProperties.map { property in
                Entry(rank: rank[property._name] ?? 0, hash: affectsEntityHash(property) ? propertyHash(property) : nil)
            }.sorted { $0.rank < $1.rank }
            var merged: [Entry] = []
            merged.reserveCapacity(inherited.count + own.count)
            var next = 0
            for entry in inherited {
                while next < own.count, own[next].rank < entry.rank {
                    if own[next].hash != nil { merged.append(own[next]) }
                    next += 1
                }
                if next < own.count, own[next].rank == entry.rank { continue }
                merged.append(entry)
            }
            for entry in own[next...] where entry.hash != nil { merged.append(entry) }
            let superentityHash = entity._superentity.map { hashes[ObjectIdentifier($0)] ?? versionHash(of: $0) }
            hashes[ObjectIdentifier(entity)] = entityHash(
                entity, superentityHash: superentityHash, propertyHashes: merged.compactMap(\.hash))
            let subentities = entity._subentities.filter { members.contains(ObjectIdentifier($0)) }
            if !subentities.isEmpty {
                lists[ObjectIdentifier(entity)] = merged
                pendingSubentities[ObjectIdentifier(entity)] = subentities.count
                stack.append(contentsOf: subentities)
            }
        }
        // Entities never reached (an inheritance cycle, which loading refuses) are hashed one by one.
        for entity in entities where hashes[ObjectIdentifier(entity)] == nil {
            hashes[ObjectIdentifier(entity)] = versionHash(of: entity)
        }
        return hashes
    }

    static func versionHash(of property: NSPropertyDescription) -> Data {
        Data(propertyHash(property))
    }

    /// Whether a property's hash enters its entity's: persistent attributes and relationships only.
    static func affectsEntityHash(_ property: NSPropertyDescription) -> Bool {
        guard property is NSAttributeDescription || property is NSRelationshipDescription else { return false }
        return !isTransient(property)
    }

    private static func isTransient(_ property: NSPropertyDescription) -> Bool {
        property is NSDerivedAttributeDescription ? false : property._isTransient
    }

    /// Derived attributes and fetched properties are read-only; no other property can be.
    private static func isReadOnly(_ property: NSPropertyDescription) -> Bool {
        property is NSDerivedAttributeDescription || property is NSFetchedPropertyDescription
    }

    private static func propertyHash(_ property: NSPropertyDescription) -> [UInt8] {
        switch property {
        case let derived as NSDerivedAttributeDescription:
            var bytes: [UInt8] = []
            if let expression = derived._derivationExpression {
                bytes += Array(expression.description.utf8)
            }
            return SHA256.hash(bytes)
        case let composite as NSCompositeAttributeDescription:
            var bytes: [UInt8] = []
            let elements = flattened(composite._elements).sorted { ordered($0._name, before: $1._name) }
            for element in elements where !isTransient(element) {
                bytes += propertyHash(element)
            }
            return SHA256.hash(bytes)
        case let attribute as NSAttributeDescription:
            return attributeHash(attribute)
        case let relationship as NSRelationshipDescription:
            return relationshipHash(relationship)
        default:
            return baseHash(property)
        }
    }

    /// A composite's elements with nested composites replaced by their own elements, at any depth.
    private static func flattened(_ elements: [NSAttributeDescription]) -> [NSAttributeDescription] {
        elements.flatMap { element in
            (element as? NSCompositeAttributeDescription).map { flattened($0._elements) } ?? [element]
        }
    }

    private static func baseHash(_ property: NSPropertyDescription) -> [UInt8] {
        var flags: UInt16 = 0
        if property._isOptional { flags |= 1 }
        if isTransient(property) { flags |= 2 }
        if isReadOnly(property) { flags |= 4 }
        var bytes = Array(property._name.utf8)
        append(flags, to: &bytes)
        bytes += Array((property._versionHashModifier ?? "").utf8)
        return SHA256.hash(bytes)
    }

    private static func attributeHash(_ attribute: NSAttributeDescription) -> [UInt8] {
        var bytes = baseHash(attribute)
        append(UInt32(truncatingIfNeeded: attribute._attributeType.rawValue), to: &bytes)
        if attribute._allowsExternalBinaryDataStorage { bytes.append(1) }
        if attribute._preservesValueInHistoryOnDeletion { bytes.append(1) }
        return SHA256.hash(bytes)
    }

    private static func relationshipHash(_ relationship: NSRelationshipDescription) -> [UInt8] {
        var bytes = baseHash(relationship)
        if let destination = relationship._destinationEntity?._name ?? relationship._destinationEntityName {
            bytes += Array(destination.utf8)
        }
        if let inverseName = inverseNameInHash(of: relationship) {
            bytes += Array(inverseName.utf8)
        }
        append(UInt32(truncatingIfNeeded: relationship._maxCount), to: &bytes)
        append(UInt32(truncatingIfNeeded: relationship._minCount), to: &bytes)
        if relationship._isOrdered { append(UInt16(1), to: &bytes) }
        return SHA256.hash(bytes)
    }

    /// The inverse's name, left out when the relationship is its own inverse, or when an ancestor of its entity
    /// has a relationship of the same name that is its own inverse (as Core Data does).
    private static func inverseNameInHash(of relationship: NSRelationshipDescription) -> String? {
        let inverse = relationship._inverseRelationship
        guard let inverseName = inverse?._name ?? relationship._inverseName else { return nil }
        if let inverse, inverse === relationship { return nil }
        // The topmost declaration of the name among the ancestors (their own properties: an entity's cache would
        // be made for each ancestor).
        var ancestor = relationship._entity?._superentity
        var topmost: NSRelationshipDescription?
        while let entity = ancestor {
            for case let found as NSRelationshipDescription in entity._ownProperties
            where found._name == relationship._name {
                topmost = found
            }
            ancestor = entity._superentity
        }
        if let topmost, topmost._inverseRelationship === topmost { return nil }
        return inverseName
    }

    /// `versionChecksum`: the Base64 SHA-256 of the entity hashes in entity-name order.
    static func versionChecksum(of hashes: [String: Data]) -> String {
        var bytes: [UInt8] = []
        for name in hashes.keys.sorted(by: { ordered($0, before: $1) }) {
            bytes += hashes[name] ?? Data()
        }
        return Data(SHA256.hash(bytes)).base64EncodedString()
    }

    /// The store metadata's `NSStoreModelVersionHashesDigest`: the Base64 SHA-512 of each entity's name followed
    /// by its hash, in entity-name order.
    static func versionHashesDigest(of hashes: [String: Data]) -> String {
        var bytes: [UInt8] = []
        for name in hashes.keys.sorted(by: { ordered($0, before: $1) }) {
            bytes += Array(name.utf8)
            bytes += hashes[name] ?? Data()
        }
        return Data(SHA512.hash(bytes)).base64EncodedString()
    }

    /// Core Data's derivation rewrite: a key path ending in `.@count` becomes `count:(path)`, one ending in `.@sum`
    /// or `.@total` becomes `sum:(path)`; the stored expression, and so the hash, uses the rewritten form.
    static func canonicalDerivation(_ expression: NSExpression) -> NSExpression {
        guard expression.expressionType == .keyPath else { return expression }
        let path = expression.keyPath
        for (suffix, function) in [(".@count", "count:"), (".@sum", "sum:"), (".@total", "sum:")]
        where path.hasSuffix(suffix) && path.count > suffix.count {
            let prefix = String(path.dropLast(suffix.count))
            return NSExpression(forFunction: function, arguments: [NSExpression(forKeyPath: prefix)])
        }
        return expression
    }

    /// A hash as store metadata holds it (`Data` or `NSData`).
    static func storedHash(_ value: Any?) -> Data? {
        switch value {
        case let data as Data: return data
        case let data as NSData: return Data(referencing: data)
        default: return nil
        }
    }

    /// The order of `-[NSString compare:]` for the names Core Data sorts: by UTF-16 code unit.
    static func ordered(_ lhs: String, before rhs: String) -> Bool {
        lhs.utf16.lexicographicallyPrecedes(rhs.utf16)
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    }
}
