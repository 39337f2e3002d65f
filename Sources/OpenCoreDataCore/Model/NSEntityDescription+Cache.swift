import Synchronization

/// Everything derived from an entity's definition that reading and writing objects needs fast: the properties in
/// slot order (inherited first, so a subentity's slots extend its superentity's), lookups by name, and what kind of
/// value each slot holds.
package final class EntityCache: @unchecked Sendable {
    // @unchecked: every stored property is a constant (the one atomic aside); its default values (`initialValues`,
    // `transientDefaults`) are attribute values, never objects, the only cases of `StoredValue` that are not
    // `Sendable`.
    package enum SlotKind: Equatable {
        case attribute(NSAttributeType)
        case toOne
        case toMany(ordered: Bool)
        case fetched
        case derived(NSAttributeType)
    }

    package struct Slot {
        package let property: NSPropertyDescription
        package let name: String
        package let kind: SlotKind
        /// Saved to the store: not transient, not fetched, not derived (derived values are computed by the store).
        package let isPersistent: Bool
    }

    private static let nextID = Atomic<Int>(1)

    /// Unique for this cache instance: an edit to the entity makes a new cache and so a new id.
    let id: Int
    let allProperties: [NSPropertyDescription]
    let propertiesByName: [String: NSPropertyDescription]
    let attributesByName: [String: NSAttributeDescription]
    let relationshipsByName: [String: NSRelationshipDescription]
    package let slots: [Slot]
    /// `slots[i].kind`, on its own: reading a kind from here copies no references.
    package let kinds: [SlotKind]
    let slotByName: SlotNameTable
    /// The slots saved to the store.
    let persistentSlots: [Int]
    let relationshipSlots: [Int]
    /// A relationship's slot and its description, read where objects are deleted.
    struct RelationshipSlot {
        let slot: Int
        /// Held by `slots`. Its delete rule is read when used: an editable model's may still change.
        unowned(unsafe) let relationship: NSRelationshipDescription
    }
    /// `relationshipSlots` with their descriptions, in memory the cache owns: the delete rules of every deleted
    /// object are walked without retaining an array or a description (each retain and release is atomic).
    let relationships: UnsafeBufferPointer<RelationshipSlot>
    /// The values a newly inserted object starts with: attribute defaults, and to-many relationships that load
    /// (as empty, for a new object) when first touched.
    let initialValues: StoredValues
    /// The transient attributes with default values, and those values: a stored object loaded from its store
    /// starts with them, as its persistent attributes start with the stored values.
    let transientDefaults: [(slot: Int, value: StoredValue)]
    /// Whether `transientDefaults` has any: asked for every object loaded, without retaining the array.
    let hasTransientDefaults: Bool
    /// The hash of the entity's name, which object IDs mix into theirs (IDs of equal names are equal).
    let nameHash: Int
    /// The class of the entity's objects once `ManagedObjectClassRegistry` has found it, as the bits of its
    /// metadata's address (0 until then): a class found for a name stays found, and a new class name makes a new
    /// cache. Read for every fetch, which would otherwise look the name up under the registry's lock.
    private let foundObjectClass = Atomic<UInt>(0)

    /// The class `ManagedObjectClassRegistry` found for the entity's objects, if it has found one.
    var objectClass: NSManagedObject.Type? {
        let bits = foundObjectClass.load(ordering: .acquiring)
        return bits == 0 ? nil : unsafeBitCast(bits, to: NSManagedObject.Type.self)
    }

    /// Remembers the class found for the entity's objects.
    func noteObjectClass(_ objectClass: NSManagedObject.Type) {
        foundObjectClass.store(unsafeBitCast(objectClass, to: UInt.self), ordering: .releasing)
    }

    init(entity: NSEntityDescription) {
        id = EntityCache.nextID.add(1, ordering: .relaxed).oldValue
        nameHash = (entity._name ?? "").hashValue
        var chain: [NSEntityDescription] = []
        var current: NSEntityDescription? = entity
        var visited = Set<ObjectIdentifier>()
        while let candidate = current {
            guard visited.insert(ObjectIdentifier(candidate)).inserted else {
                preconditionFailure("The entity '\(entity._name ?? "")' inherits from itself")
            }
            chain.append(candidate)
            current = candidate._superentity
        }
        var properties: [NSPropertyDescription] = []
        var byName: [String: NSPropertyDescription] = [:]
        // Where each name's slot is: a search of the list for every property made a deep hierarchy cubic.
        var slotOfName: [String: Int] = [:]
        for ancestor in chain.reversed() {
            for property in ancestor._ownProperties {
                if let index = slotOfName[property._name] {
                    // A subentity may redeclare an inherited property; its own definition wins, in the same slot.
                    properties[index] = property
                } else {
                    slotOfName[property._name] = properties.count
                    properties.append(property)
                }
                byName[property._name] = property
            }
        }
        allProperties = properties
        propertiesByName = byName
        attributesByName = byName.compactMapValues { $0 as? NSAttributeDescription }
        relationshipsByName = byName.compactMapValues { $0 as? NSRelationshipDescription }
        var slots: [Slot] = []
        for property in properties {
            let kind: SlotKind
            var persistent = !property._isTransient
            switch property {
            case let derived as NSDerivedAttributeDescription:
                kind = .derived(derived._attributeType)
                persistent = false
            case let attribute as NSAttributeDescription:
                kind = .attribute(attribute._attributeType)
            case let relationship as NSRelationshipDescription:
                kind = relationship.isToMany ? .toMany(ordered: relationship._isOrdered) : .toOne
            default:
                kind = .fetched
                persistent = false
            }
            slots.append(Slot(property: property, name: property._name, kind: kind, isPersistent: persistent))
        }
        self.slots = slots
        kinds = slots.map(\.kind)
        slotByName = SlotNameTable(properties.map(\._name))
        persistentSlots = slots.indices.filter { slots[$0].isPersistent }
        relationshipSlots = slots.indices.filter {
            switch slots[$0].kind {
            case .toOne, .toMany: return true
            default: return false
            }
        }
        var initial = StoredValues(repeating: .null, count: slots.count)
        for (index, slot) in slots.enumerated() {
            switch slot.kind {
            case .attribute(let type), .derived(let type):
                if let attribute = slot.property as? NSAttributeDescription, let value = attribute._defaultValue {
                    initial[index] = StoredValue.attributeValue(value, type: type) ?? .null
                }
            case .toMany:
                initial[index] = .toManyFault
            case .toOne, .fetched:
                break
            }
        }
        initialValues = initial
        transientDefaults = slots.indices.compactMap { index in
            guard !slots[index].isPersistent, case .attribute = slots[index].kind, case let value = initial[index],
                !value.isNull
            else { return nil }
            return (index, value)
        }
        hasTransientDefaults = !transientDefaults.isEmpty
        let rules = relationshipSlots.compactMap { slot in
            (slots[slot].property as? NSRelationshipDescription).map { RelationshipSlot(slot: slot, relationship: $0) }
        }
        let relationships = UnsafeMutableBufferPointer<RelationshipSlot>.allocate(capacity: rules.count)
        _ = relationships.initialize(from: rules)
        self.relationships = UnsafeBufferPointer(relationships)
    }

    deinit {
        relationships.deallocate()
    }
}
