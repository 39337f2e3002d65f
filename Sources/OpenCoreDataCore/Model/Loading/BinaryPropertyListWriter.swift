/// Writes Apple's binary property list format (`bplist00`), with the UID type that keyed archives use for object
/// references, as `BinaryPropertyListReader` reads it. Equal strings, numbers, data and references are written once
/// and shared, as Core Foundation's writer does; dictionary keys are written in sorted order, so that the same value
/// always gives the same bytes.
enum BinaryPropertyListWriter {
    /// The property list `root` in the binary format.
    static func data(_ root: PropertyListValue) -> Data {
        var objects = ObjectTable()
        let top = objects.add(root)
        let count = objects.encoded.count
        let referenceSize = byteCount(UInt64(max(count - 1, 0)))
        var bytes: [UInt8] = Array("bplist00".utf8)
        var offsets: [Int] = []
        offsets.reserveCapacity(count)
        for object in objects.encoded {
            offsets.append(bytes.count)
            write(object, referenceSize: referenceSize, to: &bytes)
        }
        let tableOffset = bytes.count
        let offsetSize = byteCount(UInt64(max(offsets.last ?? 0, 8)))
        for offset in offsets {
            appendBigEndian(UInt64(offset), size: offsetSize, to: &bytes)
        }
        // Trailer: five unused bytes, the sort version, the two integer sizes, then three 64-bit numbers.
        bytes += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(referenceSize)]
        appendBigEndian(UInt64(count), size: 8, to: &bytes)
        appendBigEndian(UInt64(top), size: 8, to: &bytes)
        appendBigEndian(UInt64(tableOffset), size: 8, to: &bytes)
        return Data(bytes)
    }

    /// An object as written: a scalar, or a collection whose members are object numbers.
    private enum Encoded {
        case scalar(PropertyListValue)
        case array([Int])
        case dictionary(keys: [Int], values: [Int])
    }

    /// The values that are shared when equal.
    private enum ScalarKey: Hashable {
        case bool(Bool)
        case integer(Int64)
        case real(UInt64)
        case date(UInt64)
        case data(Data)
        case string(String)
        case uid(Int)
    }

    /// The flattened object graph: every value gets an object number, in the order first met.
    private struct ObjectTable {
        var encoded: [Encoded] = []
        var scalars: [ScalarKey: Int] = [:]

        mutating func add(_ value: PropertyListValue) -> Int {
            switch value {
            case .array(let elements):
                let index = reserve()
                encoded[index] = .array(elements.map { add($0) })
                return index
            case .dictionary(let dictionary):
                let index = reserve()
                let keys = dictionary.keys.sorted()
                let keyNumbers = keys.map { add(.string($0)) }
                let valueNumbers = keys.map { add(dictionary[$0] ?? .null) }
                encoded[index] = .dictionary(keys: keyNumbers, values: valueNumbers)
                return index
            default:
                guard let key = Self.key(value) else {
                    encoded.append(.scalar(value))
                    return encoded.count - 1
                }
                if let existing = scalars[key] { return existing }
                encoded.append(.scalar(value))
                scalars[key] = encoded.count - 1
                return encoded.count - 1
            }
        }

        private mutating func reserve() -> Int {
            encoded.append(.array([]))
            return encoded.count - 1
        }

        private static func key(_ value: PropertyListValue) -> ScalarKey? {
            switch value {
            case .bool(let bool): return .bool(bool)
            case .integer(let integer): return .integer(integer)
            case .real(let real): return .real(real.bitPattern)
            case .date(let date): return .date(date.timeIntervalSinceReferenceDate.bitPattern)
            case .data(let data): return .data(data)
            case .string(let string): return .string(string)
            case .uid(let uid): return .uid(uid)
            case .null, .array, .dictionary: return nil
            }
        }
    }

    /// The fewest bytes (1, 2, 4 or 8) that hold `value`.
    private static func byteCount(_ value: UInt64) -> Int {
        if value <= 0xFF { return 1 }
        if value <= 0xFFFF { return 2 }
        if value <= 0xFFFF_FFFF { return 4 }
        return 8
    }

    private static func appendBigEndian(_ value: UInt64, size: Int, to bytes: inout [UInt8]) {
        for shift in stride(from: (size - 1) * 8, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }

    /// A marker with a count: in its low nibble when it is below 15, else in an integer object that follows.
    private static func appendMarker(_ type: UInt8, count: Int, to bytes: inout [UInt8]) {
        if count < 15 {
            bytes.append(type << 4 | UInt8(count))
        } else {
            bytes.append(type << 4 | 0x0F)
            appendInteger(Int64(count), to: &bytes)
        }
    }

    /// An integer object: the smallest unsigned size that holds it; negative numbers take eight bytes.
    private static func appendInteger(_ value: Int64, to bytes: inout [UInt8]) {
        let size = value < 0 ? 8 : byteCount(UInt64(value))
        bytes.append(0x10 | UInt8(size.trailingZeroBitCount))
        appendBigEndian(UInt64(bitPattern: value), size: size, to: &bytes)
    }

    private static func write(_ object: Encoded, referenceSize: Int, to bytes: inout [UInt8]) {
        switch object {
        case .array(let elements):
            appendMarker(0xA, count: elements.count, to: &bytes)
            for element in elements { appendBigEndian(UInt64(element), size: referenceSize, to: &bytes) }
        case .dictionary(let keys, let values):
            appendMarker(0xD, count: keys.count, to: &bytes)
            for key in keys { appendBigEndian(UInt64(key), size: referenceSize, to: &bytes) }
            for value in values { appendBigEndian(UInt64(value), size: referenceSize, to: &bytes) }
        case .scalar(let value):
            writeScalar(value, to: &bytes)
        }
    }

    private static func writeScalar(_ value: PropertyListValue, to bytes: inout [UInt8]) {
        switch value {
        case .null:
            bytes.append(0x00)
        case .bool(let bool):
            bytes.append(bool ? 0x09 : 0x08)
        case .integer(let integer):
            appendInteger(integer, to: &bytes)
        case .real(let real):
            bytes.append(0x23)
            appendBigEndian(real.bitPattern, size: 8, to: &bytes)
        case .date(let date):
            bytes.append(0x33)
            appendBigEndian(date.timeIntervalSinceReferenceDate.bitPattern, size: 8, to: &bytes)
        case .data(let data):
            appendMarker(0x4, count: data.count, to: &bytes)
            bytes += data
        case .string(let string):
            if string.utf8.allSatisfy({ $0 < 0x80 }) {
                appendMarker(0x5, count: string.utf8.count, to: &bytes)
                bytes += string.utf8
            } else {
                let units = Array(string.utf16)
                appendMarker(0x6, count: units.count, to: &bytes)
                for unit in units { appendBigEndian(UInt64(unit), size: 2, to: &bytes) }
            }
        case .uid(let uid):
            let size = byteCount(UInt64(max(uid, 0)))
            bytes.append(0x80 | UInt8(size - 1))
            appendBigEndian(UInt64(max(uid, 0)), size: size, to: &bytes)
        case .array, .dictionary:
            preconditionFailure("collections are written by write(_:referenceSize:to:)")
        }
    }
}
