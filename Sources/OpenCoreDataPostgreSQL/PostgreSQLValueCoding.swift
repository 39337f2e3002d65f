import Foundation
import OpenCoreData
import OpenCoreDataCore

/// Attribute values as the text libpq sends and receives (`PostgreSQLSchema` names the column types): numbers in
/// their shortest exact form, dates as seconds since 2001-01-01, data as `\x` hexadecimal, transformable values as
/// the data their value transformer makes.
enum PostgreSQLValueCoding {
    /// Why a value cannot be stored as it is.
    struct UnstorableValue: Error {
        let reason: String
    }

    /// The text of `value` for a column of an attribute of `type`; `nil` for SQL NULL.
    static func text(_ value: StoredValue, type: NSAttributeType, attribute: NSAttributeDescription) throws
        -> String?
    {
        switch value {
        case .null, .toManyFault, .toMany, .object, .objectID:
            return nil
        case .int(let number):
            switch type {
            case .booleanAttributeType: return number != 0 ? "true" : "false"
            case .doubleAttributeType, .floatAttributeType, .dateAttributeType: return text(Double(number))
            default: return String(number)
            }
        case .bool(let flag):
            switch type {
            case .booleanAttributeType: return flag ? "true" : "false"
            default: return flag ? "1" : "0"
            }
        case .double(let number):
            switch type {
            case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType:
                return String(Int64(exactly: number.rounded(.towardZero)) ?? 0)
            case .booleanAttributeType:
                return number != 0 ? "true" : "false"
            default:
                return text(number)
            }
        case .float(let number):
            return number.isFinite ? "\(number)" : text(Double(number))
        case .string(let string):
            // libpq sends C strings: a NUL would cut the value short without a word.
            guard !string.utf8.contains(0) else {
                throw UnstorableValue(reason: "it contains a NUL character, which PostgreSQL text cannot hold")
            }
            return string
        case .date(let date):
            return text(date.timeIntervalSinceReferenceDate)
        case .data(let data):
            return hex(data)
        case .uuid(let uuid):
            return uuid.uuidString
        case .url(let url):
            return url.absoluteString
        case .boxed:
            let public_ = value.publicValue
            switch type {
            case .decimalAttributeType:
                if let number = public_ as? NSDecimalNumber {
                    return number.decimalValue.isNaN ? "NaN" : number.stringValue
                }
                if let decimal = public_ as? Decimal {
                    return decimal.isNaN ? "NaN" : NSDecimalNumber(decimal: decimal).stringValue
                }
                if let number = public_ as? NSNumber {
                    return NSDecimalNumber(decimal: number.decimalValue).stringValue
                }
                return nil
            case .objectIDAttributeType:
                if let objectID = public_ as? NSManagedObjectID { return objectID.uriRepresentation().absoluteString }
                return (public_ as? URL)?.absoluteString
            default:
                return hex(try encodeTransformable(public_ as Any, attribute: attribute))
            }
        }
    }

    /// A double as PostgreSQL reads it back to the same bits.
    static func text(_ number: Double) -> String {
        if number.isNaN { return "NaN" }
        if number.isInfinite { return number < 0 ? "-Infinity" : "Infinity" }
        return "\(number)"
    }

    static func hex(_ data: Data) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var bytes: [UInt8] = [UInt8(ascii: "\\"), UInt8(ascii: "x")]
        bytes.reserveCapacity(2 + data.count * 2)
        for byte in data {
            bytes.append(digits[Int(byte >> 4)])
            bytes.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The bytes of `bytea` text in hexadecimal output (`\x…`, which the connection asks for).
    static func data(_ text: String) -> Data? {
        var text = text
        return text.withUTF8 { data($0) }
    }

    /// The bytes of `bytea` text in hexadecimal output, read in place; `nil` for anything else.
    static func data(_ text: UnsafeBufferPointer<UInt8>) -> Data? {
        guard text.count >= 2, text[0] == UInt8(ascii: "\\"), text[1] == UInt8(ascii: "x"), text.count % 2 == 0 else {
            return nil
        }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        var data = Data(count: (text.count - 2) / 2)
        let valid = data.withUnsafeMutableBytes { bytes in
            for index in bytes.indices {
                guard let high = nibble(text[2 + 2 * index]), let low = nibble(text[3 + 2 * index]) else {
                    return false
                }
                bytes[index] = high << 4 | low
            }
            return true
        }
        return valid ? data : nil
    }

    /// An integer in decimal text — an optional sign, then digits — as `Int64(_:)` reads it; `nil` for anything else
    /// and for numbers out of range.
    static func int64(_ text: UnsafeBufferPointer<UInt8>) -> Int64? {
        var index = 0
        let negative = text.first == UInt8(ascii: "-")
        if negative || text.first == UInt8(ascii: "+") { index = 1 }
        guard index < text.count else { return nil }
        var value: Int64 = 0
        while index < text.count {
            let digit = text[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (shifted, overflowed) = value.multipliedReportingOverflow(by: 10)
            let (next, overflowedAgain) =
                negative
                ? shifted.subtractingReportingOverflow(Int64(digit)) : shifted.addingReportingOverflow(Int64(digit))
            guard !overflowed, !overflowedAgain else { return nil }
            value = next
            index += 1
        }
        return value
    }

    private static let posix = Locale(identifier: "en_US_POSIX")

    /// The value of column text of an attribute of `type`, read in place: integers, strings and data without a
    /// `String` of the text in between; `.null` for text that is not one (never a crash).
    static func value(_ text: UnsafeBufferPointer<UInt8>, type: NSAttributeType, attribute: NSAttributeDescription)
        -> StoredValue
    {
        switch type {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType:
            return int64(text).map { .int($0) } ?? .null
        case .stringAttributeType:
            return .string(String(decoding: text, as: UTF8.self))
        case .binaryDataAttributeType:
            return data(text).map { .data($0) } ?? .null
        default:
            return value(String(decoding: text, as: UTF8.self), type: type, attribute: attribute)
        }
    }

    /// The value of column text of an attribute of `type`; `.null` for text that is not one (never a crash).
    static func value(_ text: String, type: NSAttributeType, attribute: NSAttributeDescription) -> StoredValue {
        switch type {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType:
            return Int64(text).map { .int($0) } ?? .null
        case .booleanAttributeType:
            return .bool(text == "t" || text == "true")
        case .doubleAttributeType:
            return Double(text).map { .double($0) } ?? .null
        case .floatAttributeType:
            return Float(text).map { .float($0) } ?? .null
        case .dateAttributeType:
            return Double(text).map { .date(Date(timeIntervalSinceReferenceDate: $0)) } ?? .null
        case .decimalAttributeType:
            let decimal = text == "NaN" ? Decimal.nan : Decimal(string: text, locale: posix)
            return StoredValue.attributeValue(decimal.map { NSDecimalNumber(decimal: $0) }, type: type) ?? .null
        case .stringAttributeType:
            return .string(text)
        case .binaryDataAttributeType:
            return data(text).map { .data($0) } ?? .null
        case .UUIDAttributeType:
            return UUID(uuidString: text).map { .uuid($0) } ?? .null
        case .URIAttributeType:
            return URL(string: text).map { .url($0) } ?? .null
        case .objectIDAttributeType:
            return .null
        default:
            guard let bytes = data(text) else { return .null }
            return StoredValue.attributeValue(decodeTransformable(bytes, attribute: attribute), type: type) ?? .null
        }
    }

    // MARK: Transformable values

    /// Core Data runs the unarchive-from-data transformers backwards for storage (archiving with
    /// `reverseTransformedValue(_:)`); any other transformer stores `transformedValue(_:)`.
    private static func transformer(for attribute: NSAttributeDescription) -> (ValueTransformer, unarchives: Bool)? {
        let name =
            attribute.valueTransformerName.flatMap { $0.isEmpty ? nil : $0 }
            ?? NSValueTransformerName.secureUnarchiveFromDataTransformerName.rawValue
        guard let transformer = ValueTransformer(forName: NSValueTransformerName(name)) else { return nil }
        let unarchiving: Set<String> = [
            NSValueTransformerName.unarchiveFromDataTransformerName.rawValue,
            NSValueTransformerName.keyedUnarchiveFromDataTransformerName.rawValue,
            NSValueTransformerName.secureUnarchiveFromDataTransformerName.rawValue,
        ]
        return (transformer, unarchiving.contains(name) || transformer is NSSecureUnarchiveFromDataTransformer)
    }

    static func encodeTransformable(_ value: Any, attribute: NSAttributeDescription) throws -> Data {
        guard let (transformer, unarchives) = transformer(for: attribute) else {
            throw UnstorableValue(
                reason: """
                    no value transformer named '\(attribute.valueTransformerName ?? "")' is registered; register it \
                    with ValueTransformer.setValueTransformer(_:forName:) before saving
                    """)
        }
        let transformed = unarchives ? transformer.reverseTransformedValue(value) : transformer.transformedValue(value)
        if let data = transformed as? Data { return data }
        if let data = transformed as? NSData { return Data(referencing: data) }
        throw UnstorableValue(reason: "its value transformer did not make data of it")
    }

    /// The value of stored bytes; bytes the transformer cannot decode read as the bytes themselves.
    static func decodeTransformable(_ data: Data, attribute: NSAttributeDescription) -> Any {
        guard let (transformer, unarchives) = transformer(for: attribute) else { return data }
        let value = unarchives ? transformer.transformedValue(data) : transformer.reverseTransformedValue(data)
        return value ?? data
    }
}
