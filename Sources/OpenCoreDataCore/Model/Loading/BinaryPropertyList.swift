/// A value of a binary property list, with the UID type that keyed archives use for object references.
enum PropertyListValue: Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case real(Double)
    case date(Date)
    case data(Data)
    case string(String)
    case uid(Int)
    case array([PropertyListValue])
    case dictionary([String: PropertyListValue])

    var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    var integer: Int64? {
        switch self {
        case .integer(let value): return value
        case .real(let value) where value.isFinite && value.rounded() == value && abs(value) < 9e18:
            return Int64(value)
        case .bool(let value): return value ? 1 : 0
        default: return nil
        }
    }

    var bool: Bool? {
        switch self {
        case .bool(let value): return value
        case .integer(let value): return value != 0
        default: return nil
        }
    }

    var array: [PropertyListValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    var dictionary: [String: PropertyListValue]? {
        if case .dictionary(let value) = self { return value }
        return nil
    }
}

/// Reads Apple's binary property list format (`bplist00`), the container of keyed archives such as compiled
/// models (`.mom`). Foundation's `PropertyListSerialization` reads the format too, but on Linux it gives archive
/// references (UIDs) as an opaque internal type; this reader exposes them and checks every offset, so that a
/// damaged file fails with a message instead of a crash.
struct BinaryPropertyListReader {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let bytes: [UInt8]
    private let offsetSize: Int
    private let referenceSize: Int
    private let offsets: [Int]
    private let topObject: Int

    /// Keyed archives refer to objects by UID, so their arrays and dictionaries nest a few levels; a list nesting
    /// deeper is refused, since reading it, like releasing the values read, recurses once per level.
    static let maximumDepth = 512

    init(_ data: Data) throws {
        bytes = Array(data)
        guard bytes.count >= 40, bytes[0..<6].elementsEqual(Array("bplist".utf8)) else {
            throw Failure(description: "not a binary property list (no 'bplist' header)")
        }
        let trailer = bytes.count - 32
        offsetSize = Int(bytes[trailer + 6])
        referenceSize = Int(bytes[trailer + 7])
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize) else {
            throw Failure(description: "the trailer gives invalid integer sizes")
        }
        let count = Self.bigEndian(bytes[(trailer + 8)..<(trailer + 16)])
        let top = Self.bigEndian(bytes[(trailer + 16)..<(trailer + 24)])
        let tableOffset = Self.bigEndian(bytes[(trailer + 24)..<(trailer + 32)])
        guard count > 0, count < UInt64(bytes.count), top < count, tableOffset >= 8,
            tableOffset + count * UInt64(offsetSize) <= UInt64(trailer)
        else {
            throw Failure(description: "the trailer's object count or offset table lies outside the file")
        }
        var offsets: [Int] = []
        offsets.reserveCapacity(Int(count))
        for index in 0..<Int(count) {
            let start = Int(tableOffset) + index * offsetSize
            let offset = Self.bigEndian(bytes[start..<(start + offsetSize)])
            guard offset >= 8, offset < UInt64(trailer) else {
                throw Failure(description: "object \(index) lies outside the file")
            }
            offsets.append(Int(offset))
        }
        self.offsets = offsets
        topObject = Int(top)
    }

    /// The whole property list.
    func read() throws -> PropertyListValue {
        var cache: [Int: PropertyListValue] = [:]
        var inProgress = Set<Int>()
        return try object(topObject, cache: &cache, inProgress: &inProgress)
    }

    private static func bigEndian(_ slice: ArraySlice<UInt8>) -> UInt64 {
        slice.reduce(0) { $0 << 8 | UInt64($1) }
    }

    private func byte(at index: Int) throws -> UInt8 {
        guard index >= 0, index < bytes.count - 32 else {
            throw Failure(description: "an object runs past the end of the data")
        }
        return bytes[index]
    }

    private func slice(_ start: Int, _ length: Int) throws -> ArraySlice<UInt8> {
        guard start >= 0, length >= 0, length <= bytes.count - 32 - start else {
            throw Failure(description: "an object runs past the end of the data")
        }
        return bytes[start..<(start + length)]
    }

    /// The length that follows a marker: the low nibble, or an integer object when the nibble is 15.
    private func length(marker: UInt8, at offset: Int) throws -> (length: Int, start: Int) {
        let nibble = Int(marker & 0x0F)
        guard nibble == 0x0F else { return (nibble, offset + 1) }
        let intMarker = try byte(at: offset + 1)
        guard intMarker >> 4 == 0x1 else { throw Failure(description: "a length is not an integer") }
        let size = 1 << Int(intMarker & 0x0F)
        guard size <= 8 else { throw Failure(description: "a length is too large") }
        let value = Self.bigEndian(try slice(offset + 2, size))
        guard value < UInt64(bytes.count) else { throw Failure(description: "a length exceeds the data") }
        return (Int(value), offset + 2 + size)
    }

    private func reference(at position: Int) throws -> Int {
        let value = Self.bigEndian(try slice(position, referenceSize))
        guard value < UInt64(offsets.count) else { throw Failure(description: "a reference names no object") }
        return Int(value)
    }

    private func object(_ index: Int, cache: inout [Int: PropertyListValue], inProgress: inout Set<Int>) throws
        -> PropertyListValue
    {
        if let cached = cache[index] { return cached }
        guard inProgress.insert(index).inserted else {
            throw Failure(description: "object \(index) contains itself")
        }
        guard inProgress.count <= Self.maximumDepth else {
            throw Failure(description: "arrays and dictionaries nest more than \(Self.maximumDepth) deep")
        }
        defer { inProgress.remove(index) }
        let offset = offsets[index]
        let marker = try byte(at: offset)
        let value: PropertyListValue
        switch marker >> 4 {
        case 0x0:
            switch marker {
            case 0x08: value = .bool(false)
            case 0x09: value = .bool(true)
            default: value = .null
            }
        case 0x1:
            let size = 1 << Int(marker & 0x0F)
            let raw = try slice(offset + 1, size)
            switch size {
            case 1, 2, 4: value = .integer(Int64(Self.bigEndian(raw)))
            case 8: value = .integer(Int64(bitPattern: Self.bigEndian(raw)))
            case 16: value = .integer(Int64(bitPattern: Self.bigEndian(raw.suffix(8))))
            default: throw Failure(description: "an integer has an invalid size")
            }
        case 0x2:
            let size = 1 << Int(marker & 0x0F)
            let raw = Self.bigEndian(try slice(offset + 1, size))
            switch size {
            case 4: value = .real(Double(Float(bitPattern: UInt32(truncatingIfNeeded: raw))))
            case 8: value = .real(Double(bitPattern: raw))
            default: throw Failure(description: "a real number has an invalid size")
            }
        case 0x3:
            let raw = Self.bigEndian(try slice(offset + 1, 8))
            value = .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: raw)))
        case 0x4:
            let (count, start) = try length(marker: marker, at: offset)
            value = .data(Data(try slice(start, count)))
        case 0x5:
            let (count, start) = try length(marker: marker, at: offset)
            let raw = try slice(start, count)
            value = .string(String(decoding: raw, as: UTF8.self))
        case 0x6:
            let (count, start) = try length(marker: marker, at: offset)
            let raw = try slice(start, count * 2)
            var units: [UInt16] = []
            units.reserveCapacity(count)
            var position = raw.startIndex
            while position < raw.endIndex {
                units.append(UInt16(raw[position]) << 8 | UInt16(raw[position + 1]))
                position += 2
            }
            value = .string(String(decoding: units, as: UTF16.self))
        case 0x8:
            let size = Int(marker & 0x0F) + 1
            let reference = Self.bigEndian(try slice(offset + 1, size))
            guard size <= 8, reference <= UInt64(Int32.max) else {
                throw Failure(description: "object \(index) is a reference out of range")
            }
            value = .uid(Int(reference))
        case 0xA, 0xC:
            let (count, start) = try length(marker: marker, at: offset)
            _ = try slice(start, count * referenceSize)
            var elements: [PropertyListValue] = []
            elements.reserveCapacity(count)
            for element in 0..<count {
                let reference = try reference(at: start + element * referenceSize)
                elements.append(try object(reference, cache: &cache, inProgress: &inProgress))
            }
            value = .array(elements)
        case 0xD:
            let (count, start) = try length(marker: marker, at: offset)
            _ = try slice(start, count * referenceSize * 2)
            var dictionary: [String: PropertyListValue] = [:]
            for entry in 0..<count {
                let key = try object(
                    try reference(at: start + entry * referenceSize), cache: &cache, inProgress: &inProgress)
                guard case .string(let name) = key else {
                    throw Failure(description: "a dictionary key is not a string")
                }
                dictionary[name] = try object(
                    try reference(at: start + (count + entry) * referenceSize), cache: &cache,
                    inProgress: &inProgress)
            }
            value = .dictionary(dictionary)
        default:
            throw Failure(description: "object \(index) has an unknown type (marker 0x\(String(marker, radix: 16)))")
        }
        cache[index] = value
        return value
    }
}
