import CSQLite
import Foundation

/// Core Data's encodings of attribute values in SQLite columns: integers and booleans (0/1) as INTEGER, dates as
/// seconds since 2001-01-01 (REAL), decimals as NUMERIC, UUIDs as 16-byte blobs, URIs as text, transformable values
/// as the data their value transformer makes.
///
/// A value that a column would give back as something else is refused (`UnstorableValue`): NaN, which SQLite stores
/// as NULL, and a decimal that neither a 64-bit integer nor a double holds exactly (a DECIMAL column keeps nothing
/// else, on Apple's platforms too). Infinities are kept, as SQLite REAL values.
enum SQLiteValueCoding {
    /// Why a value cannot be stored as it is; the store reports it as a validation error of the object.
    struct UnstorableValue: Error {
        let reason: String

        static let notANumber = UnstorableValue(
            reason: "it is NaN (not a number), which SQLite stores as NULL, so that it would read back as nil")
        static let decimalPrecision = UnstorableValue(
            reason: """
                a SQLite store keeps a decimal number as a 64-bit integer or a double (as Core Data does on Apple \
                platforms), and neither holds this one exactly; round it, for example with NSDecimalRound, to at \
                most 15 significant digits
                """)
    }

    /// Reads column `column` of the current row as a value of `type`, straight from `sqlite3_column_*`.
    static func read(
        _ statement: SQLiteStatement, column: Int32, type: NSAttributeType, attribute: NSAttributeDescription
    ) -> StoredValue {
        let storage = statement.columnType(column)
        if storage == SQLITE_NULL { return .null }
        switch type {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType:
            if storage == SQLITE_FLOAT {
                return .int(Int64(exactly: statement.double(column).rounded(.towardZero)) ?? 0)
            }
            return .int(statement.int64(column))
        case .booleanAttributeType:
            return .bool(statement.int64(column) != 0)
        case .doubleAttributeType:
            return .double(statement.double(column))
        case .floatAttributeType:
            return .float(Float(statement.double(column)))
        case .dateAttributeType:
            return .date(Date(timeIntervalSinceReferenceDate: statement.double(column)))
        case .decimalAttributeType:
            let decimal: Decimal?
            switch storage {
            case SQLITE_INTEGER: decimal = Decimal(statement.int64(column))
            case SQLITE_FLOAT: decimal = Self.decimal(statement.double(column))
            default: decimal = Decimal(string: statement.text(column), locale: posix)
            }
            return decimal.map { .boxed(AnyBox($0)) } ?? .null
        case .stringAttributeType:
            return .string(statement.text(column))
        case .binaryDataAttributeType:
            return .data(statement.blob(column))
        case .UUIDAttributeType:
            if storage == SQLITE_BLOB, let uuid = uuid(from: statement, column: column) { return .uuid(uuid) }
            return UUID(uuidString: statement.text(column)).map { .uuid($0) } ?? .null
        case .URIAttributeType:
            if storage == SQLITE_BLOB {
                let data = statement.blob(column)
                if let url = try? NSKeyedUnarchiver.unarchivedObject(ofClass: NSURL.self, from: data) {
                    return .url(url as URL)
                }
                return .null
            }
            return URL(string: statement.text(column)).map { .url($0) } ?? .null
        case .transformableAttributeType, .compositeAttributeType:
            let data = storage == SQLITE_BLOB ? statement.blob(column) : Data(statement.text(column).utf8)
            return decodeTransformable(data, attribute: attribute).map { .boxed(AnyBox($0)) } ?? .null
        case .objectIDAttributeType:
            return URL(string: statement.text(column)).map { .boxed(AnyBox($0)) } ?? .null
        case .undefinedAttributeType:
            return .null
        }
    }

    private static let posix = Locale(identifier: "en_US_POSIX")

    /// The decimal a REAL column value reads as: the shortest decimal that names the double.
    static func decimal(_ number: Double) -> Decimal? {
        guard number.isFinite else { return nil }
        return Decimal(string: "\(number)", locale: posix)
    }

    /// The column value for a decimal: an integer if it is a whole number a 64-bit integer holds, else a double; a
    /// decimal that would read back as another number is refused.
    static func storedDecimal(_ decimal: Decimal) throws(UnstorableValue) -> SQLiteValue {
        guard !decimal.isNaN else { throw .notANumber }
        let text = NSDecimalNumber(decimal: decimal).stringValue
        if let integer = Int64(text) { return .integer(integer) }
        guard let number = Double(text), Self.decimal(number) == decimal else { throw .decimalPrecision }
        return .real(number)
    }

    private static func uuid(from statement: SQLiteStatement, column: Int32) -> UUID? {
        guard sqlite3_column_bytes(statement.handle, column) == 16,
            let pointer = sqlite3_column_blob(statement.handle, column)
        else { return nil }
        let bytes = pointer.assumingMemoryBound(to: UInt8.self)
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
                bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }

    /// Binds `value` of an attribute of `type` straight to the statement, for the storage types that need no
    /// conversion beyond `sqliteValue`'s; `false` (and nothing bound) for the others.
    @inline(__always)
    static func bindDirectly(
        _ value: StoredValue, type: NSAttributeType, to statement: SQLiteStatement, at index: Int32
    )
        -> Bool
    {
        // A switch over the value alone: matching a `(value, type)` tuple copied the value into the tuple, a
        // retain and release of every string and data bound.
        switch value {
        case .null:
            statement.bindNull(at: index)
        case .int(let number)
        where type == .integer16AttributeType || type == .integer32AttributeType || type == .integer64AttributeType:
            statement.bind(number, at: index)
        case .double(let number) where type == .doubleAttributeType && !number.isNaN:
            statement.bind(number, at: index)
        case .string(let string):
            statement.bind(string, at: index)
        case .data(let data):
            statement.bind(data, at: index)
        case .date(let date) where !date.timeIntervalSinceReferenceDate.isNaN:
            statement.bind(date.timeIntervalSinceReferenceDate, at: index)
        case .bool(let flag):
            statement.bind(Int64(flag ? 1 : 0), at: index)
        default:
            return false
        }
        return true
    }

    /// The column value for `value` of an attribute of `type`; throws `UnstorableValue` for a value the column would
    /// give back as something else.
    static func sqliteValue(_ value: StoredValue, type: NSAttributeType, attribute: NSAttributeDescription) throws
        -> SQLiteValue
    {
        switch value {
        case .null, .toManyFault, .toMany, .object, .objectID:
            return .null
        case .int(let number):
            switch type {
            case .doubleAttributeType, .floatAttributeType, .dateAttributeType: return .real(Double(number))
            case .booleanAttributeType: return .integer(number != 0 ? 1 : 0)
            default: return .integer(number)
            }
        case .bool(let flag):
            return .integer(flag ? 1 : 0)
        case .double(let number):
            guard !number.isNaN else { throw UnstorableValue.notANumber }
            switch type {
            case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .booleanAttributeType:
                return .integer(Int64(exactly: number.rounded(.towardZero)) ?? 0)
            default: return .real(number)
            }
        case .float(let number):
            guard !number.isNaN else { throw UnstorableValue.notANumber }
            return .real(Double(number))
        case .string(let string):
            return .text(string)
        case .date(let date):
            guard !date.timeIntervalSinceReferenceDate.isNaN else { throw UnstorableValue.notANumber }
            return .real(date.timeIntervalSinceReferenceDate)
        case .data(let data):
            return .blob(data)
        case .uuid(let uuid):
            return .blob(withUnsafeBytes(of: uuid.uuid) { Data($0) })
        case .url(let url):
            return .text(url.absoluteString)
        case .boxed(let box):
            switch type {
            case .decimalAttributeType:
                if let decimal = box.value as? Decimal { return try storedDecimal(decimal) }
                if let number = box.value as? NSDecimalNumber { return try storedDecimal(number.decimalValue) }
                if let number = box.value as? NSNumber {
                    if number.doubleValue.isNaN { throw UnstorableValue.notANumber }
                    guard let decimal = Decimal(string: number.stringValue, locale: posix) else {
                        throw UnstorableValue.decimalPrecision
                    }
                    return try storedDecimal(decimal)
                }
                return .null
            case .objectIDAttributeType:
                if let objectID = box.value as? NSManagedObjectID {
                    return .text(objectID.uriRepresentation().absoluteString)
                }
                if let url = box.value as? URL { return .text(url.absoluteString) }
                return .null
            default:
                return .blob(try encodeTransformable(box.value, attribute: attribute))
            }
        }
    }

    // MARK: Transformable values

    /// The unarchive-from-data transformers run "backwards" for storage: Core Data archives with
    /// `reverseTransformedValue(_:)` and unarchives with `transformedValue(_:)`. Any other transformer stores
    /// `transformedValue(_:)` of the value and reads back with `reverseTransformedValue(_:)`.
    private static let unarchivingNames: Set<String> = [
        NSValueTransformerName.unarchiveFromDataTransformerName.rawValue,
        NSValueTransformerName.keyedUnarchiveFromDataTransformerName.rawValue,
        NSValueTransformerName.secureUnarchiveFromDataTransformerName.rawValue,
    ]

    private static func transformer(for attribute: NSAttributeDescription) -> (ValueTransformer, unarchives: Bool)? {
        let name =
            attribute._valueTransformerName.flatMap { $0.isEmpty ? nil : $0 }
            ?? NSValueTransformerName.secureUnarchiveFromDataTransformerName.rawValue
        guard let transformer = ValueTransformer._transformer(named: name) else { return nil }
        return (transformer, unarchivingNames.contains(name) || transformer is NSSecureUnarchiveFromDataTransformer)
    }

    static func encodeTransformable(_ value: Any, attribute: NSAttributeDescription) throws -> Data {
        // Bytes that could not be decoded when read (see `decodeTransformable`) go back as they came.
        if let data = value as? Data, _decoded(data, attribute: attribute) == nil { return data }
        guard let (transformer, unarchives) = transformer(for: attribute) else {
            throw coreDataError(
                NSPersistentStoreSaveError,
                """
                No value transformer named '\(attribute._valueTransformerName ?? "")' is registered for attribute \
                '\(attribute._name)' of entity '\(attribute._entity?._name ?? "")': register it with \
                ValueTransformer.setValueTransformer(_:forName:) before saving
                """)
        }
        let transformed = unarchives ? transformer.reverseTransformedValue(value) : transformer.transformedValue(value)
        if let data = transformed as? Data { return data }
        if let data = transformed as? NSData { return Data(referencing: data) }
        throw coreDataError(
            NSPersistentStoreSaveError,
            """
            The value of transformable attribute '\(attribute._name)' of entity '\(attribute._entity?._name ?? "")' \
            could not be transformed to data by its value transformer
            """)
    }

    /// The value of stored bytes. Bytes that the attribute's transformer cannot decode (it is not registered, or
    /// the archive names classes this platform cannot unarchive) read as the bytes themselves, so that nothing
    /// stored is lost and saving writes them back unchanged.
    static func decodeTransformable(_ data: Data, attribute: NSAttributeDescription) -> Any? {
        _decoded(data, attribute: attribute) ?? data
    }

    private static func _decoded(_ data: Data, attribute: NSAttributeDescription) -> Any? {
        guard let (transformer, unarchives) = transformer(for: attribute) else { return nil }
        let value = unarchives ? transformer.transformedValue(data) : transformer.reverseTransformedValue(data)
        return PredicateValueComparison.unwrap(value)
    }
}
