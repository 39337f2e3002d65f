import Foundation

/// What a history change row records of its entity, the same in every store that keeps Apple's tables (the SQLite
/// store, and the PostgreSQL store of its own product): which property each bit of ZCOLUMNS stands for, and which
/// attributes a deletion keeps in its ZTOMBSTONE<n> columns. And who a transaction of this process is recorded as.
package final class PersistentHistoryLayout {
    /// The bundle identifier and process name recorded with every transaction of this process (its process name when
    /// it has no bundle identifier, as a command-line program on Linux has not).
    package static let processName = ProcessInfo.processInfo.processName
    package static let bundleID = Bundle.main.bundleIdentifier ?? processName

    /// Per entity: its recorded properties in bit order, and each one's bit by name.
    private var layouts: [ObjectIdentifier: (properties: [NSPropertyDescription], bits: [String: Int])] = [:]

    package init() {}

    /// The properties whose changes ZCOLUMNS records, in bit order: stored attributes and relationships, inherited
    /// ones included, sorted by name.
    package static func recordedProperties(of entity: NSEntityDescription) -> [NSPropertyDescription] {
        entity.properties.filter { property in
            !property._isTransient && (property is NSAttributeDescription || property is NSRelationshipDescription)
        }.sorted { $0._name < $1._name }
    }

    /// The attributes whose values a deletion keeps, in tombstone-column order.
    package static func preservedAttributes(of entity: NSEntityDescription) -> [NSAttributeDescription] {
        entity.properties.compactMap { $0 as? NSAttributeDescription }
            .filter {
                $0._preservesValueInHistoryOnDeletion && !$0._isTransient && !($0 is NSDerivedAttributeDescription)
            }
            .sorted { $0._name < $1._name }
    }

    private func layout(of entity: NSEntityDescription) -> (properties: [NSPropertyDescription], bits: [String: Int]) {
        if let known = layouts[ObjectIdentifier(entity)] { return known }
        let properties = Self.recordedProperties(of: entity)
        let made = (properties, Dictionary(uniqueKeysWithValues: properties.enumerated().map { ($1._name, $0) }))
        layouts[ObjectIdentifier(entity)] = made
        return made
    }

    /// The ZCOLUMNS bitmap of the properties named `names` of `entity`: bit n, from the most significant bit of the
    /// first byte, is the n-th recorded property.
    package func columnsBitmap(of names: some Sequence<String>, entity: NSEntityDescription) -> Data {
        let layout = layout(of: entity)
        var bytes = [UInt8](repeating: 0, count: max(1, (layout.properties.count + 7) / 8))
        for name in names {
            guard let bit = layout.bits[name] else { continue }
            bytes[bit / 8] |= 0x80 >> UInt8(bit % 8)
        }
        return Data(bytes)
    }

    /// The properties a ZCOLUMNS bitmap names; `nil` when it names a property the entity does not have (a bitmap of
    /// another version of the model), since a partial answer would mislead.
    package func updatedProperties(_ bitmap: Data, entity: NSEntityDescription) -> Set<NSPropertyDescription>? {
        let properties = layout(of: entity).properties
        var result = Set<NSPropertyDescription>()
        for (index, byte) in bitmap.enumerated() where byte != 0 {
            for bit in 0..<8 where byte & (0x80 >> UInt8(bit)) != 0 {
                let position = index * 8 + bit
                guard position < properties.count else { return nil }
                result.insert(properties[position])
            }
        }
        return result
    }
}
