import Foundation

/// Core Data's own tables: `Z_METADATA` (one row: `Z_VERSION` 1, the store UUID, the metadata as a binary property
/// list) and `Z_PRIMARYKEY` (one row per entity: number, name, superentity, highest primary key).
enum SQLiteStoreMetadata {
    /// The `Z_VERSION` of the store format this release reads and writes — the only one Apple has written.
    static let formatVersion: Int64 = 1
    /// The newest `NSStoreModelVersionHashesVersion` understood.
    static let hashesVersion = 3

    /// One row of `Z_PRIMARYKEY`.
    struct EntityRow {
        let number: Int64
        let name: String
        let superNumber: Int64
        let max: Int64
    }

    /// Why a file cannot be read as a store of this format.
    enum Problem: Error {
        /// A SQLite database, but not a Core Data store.
        case notAStore
        /// A Core Data store of a newer format.
        case newerFormat(String)
        /// A Core Data store whose own tables are damaged.
        case damaged(String)
    }

    /// The store's metadata: the property list of `Z_METADATA`, with `NSStoreUUID` (from `Z_UUID`) and
    /// `NSStoreType`, as `metadataForPersistentStore(with:)` returns it.
    static func read(_ connection: SQLiteConnection) throws -> (metadata: [String: Any], plist: Data) {
        let tables = try connection.tableNames()
        guard tables.contains("Z_METADATA"), tables.contains("Z_PRIMARYKEY") else { throw Problem.notAStore }
        let columns = Set(try connection.columns(of: "Z_METADATA").map { $0.name.uppercased() })
        guard columns.isSuperset(of: ["Z_VERSION", "Z_UUID", "Z_PLIST"]) else {
            throw Problem.damaged("Z_METADATA lacks Core Data's columns")
        }
        let statement = try connection.statement(
            "SELECT Z_VERSION, Z_UUID, Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION DESC LIMIT 1")
        guard try statement.step() else { throw Problem.damaged("Z_METADATA has no row") }
        let version = statement.int64(0)
        let uuid = statement.isNull(1) ? nil : statement.text(1)
        let plist = statement.blob(2)
        statement.reset()
        guard version <= formatVersion else {
            throw Problem.newerFormat(
                "its Z_METADATA version is \(version); this release reads version \(formatVersion)")
        }
        var metadata: [String: Any] = [:]
        if !plist.isEmpty {
            // Core Data writes the metadata as a binary property list. Foundation's reader recurses once per level
            // of nesting, so the list is walked first by one that refuses nesting deeper than metadata ever has.
            do {
                _ = try BinaryPropertyListReader(plist).read()
            } catch {
                throw Problem.damaged("its metadata (Z_METADATA.Z_PLIST) is not a binary property list: \(error)")
            }
            guard
                let decoded = try? PropertyListSerialization.propertyList(from: plist, options: [], format: nil)
                    as? [String: Any]
            else { throw Problem.damaged("its metadata (Z_METADATA.Z_PLIST) is not a property list") }
            metadata = decoded
        }
        if let hashes = metadata[NSStoreModelVersionHashesVersionKey] as? Int, hashes > hashesVersion {
            throw Problem.newerFormat("its model version hashes are of version \(hashes)")
        }
        if let uuid, !uuid.isEmpty { metadata[NSStoreUUIDKey] = uuid }
        metadata[NSStoreTypeKey] = metadata[NSStoreTypeKey] ?? NSSQLiteStoreType
        return (metadata, plist)
    }

    /// The property list stored for `metadata` (everything but `NSStoreUUID`, which has its own column).
    static func encode(_ metadata: [String: Any]) throws -> Data {
        var stored: [String: Any] = [:]
        for (key, value) in metadata where key != NSStoreUUIDKey {
            guard let value = propertyListValue(value) else {
                throw coreDataError(
                    NSPersistentStoreSaveError,
                    "The metadata value for key '\(key)' is not a property list value (string, number, date, data, "
                        + "array or dictionary) and cannot be stored")
            }
            stored[key] = value
        }
        do {
            return try PropertyListSerialization.data(fromPropertyList: stored, format: .binary, options: 0)
        } catch {
            throw coreDataError(
                NSPersistentStoreSaveError, "The store metadata cannot be written as a property list",
                userInfo: [NSUnderlyingErrorKey: error])
        }
    }

    /// `value` as a property-list value: sets become arrays, `AnyHashable` is unwrapped.
    private static func propertyListValue(_ value: Any) -> Any? {
        switch value {
        case let hashable as AnyHashable where !(hashable.base is String) && !(hashable.base is NSObject):
            return propertyListValue(hashable.base)
        case is String, is Data, is Date, is Bool, is Int, is Int64, is Int32, is Double, is Float, is NSNumber,
            is NSString, is NSData, is NSDate:
            return value
        case let array as [Any]:
            let converted = array.compactMap(propertyListValue)
            return converted.count == array.count ? converted : nil
        case let set as Set<AnyHashable>:
            let converted = set.map(\.base).compactMap(propertyListValue)
            return converted.count == set.count ? converted : nil
        case let dictionary as [String: Any]:
            var converted: [String: Any] = [:]
            for (key, element) in dictionary {
                guard let element = propertyListValue(element) else { return nil }
                converted[key] = element
            }
            return converted
        case let dictionary as NSDictionary:
            var converted: [String: Any] = [:]
            for (key, element) in dictionary {
                guard let key = key as? String, let element = propertyListValue(element) else { return nil }
                converted[key] = element
            }
            return converted
        case let array as NSArray:
            return propertyListValue(array.map { $0 })
        default:
            return nil
        }
    }

    /// Writes the metadata row.
    static func write(_ metadata: [String: Any], plist: Data, to connection: SQLiteConnection) throws {
        let uuid = metadata[NSStoreUUIDKey] as? String ?? UUID().uuidString
        try connection.statement(
            "INSERT OR REPLACE INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES (?, ?, ?)"
        ).run([.integer(formatVersion), .text(uuid), .blob(plist)])
    }

    /// The rows of `Z_PRIMARYKEY`.
    static func entityRows(_ connection: SQLiteConnection) throws -> [EntityRow] {
        let statement = try connection.statement(
            "SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT")
        var rows: [EntityRow] = []
        while try statement.step() {
            rows.append(
                EntityRow(
                    number: statement.int64(0), name: statement.text(1), superNumber: statement.int64(2),
                    max: statement.int64(3)))
        }
        return rows
    }
}
