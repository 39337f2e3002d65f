/// The object graph of an `NSKeyedArchiver` archive, read from its property list without instantiating any
/// class: objects are dictionaries with a `$class`, references are UIDs into `$objects`.
struct KeyedArchive {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// One archived object: its class name and its encoded keys.
    struct Object {
        let index: Int
        let className: String
        let fields: [String: PropertyListValue]

        subscript(key: String) -> PropertyListValue? { fields[key] }
    }

    private let objects: [PropertyListValue]
    private let top: [String: PropertyListValue]

    init(data: Data) throws {
        let plist: PropertyListValue
        do {
            // Compiled models are binary; an archive in XML form (`plutil -convert xml1`) reads the same.
            plist =
                try XMLPropertyListReader.looksLikeXML(data)
                ? XMLPropertyListReader(data).read() : BinaryPropertyListReader(data).read()
        } catch {
            throw Failure(description: "\(error)")
        }
        guard case .dictionary(let root) = plist, root["$archiver"]?.string == "NSKeyedArchiver",
            case .array(let objects)? = root["$objects"], case .dictionary(let top)? = root["$top"]
        else {
            throw Failure(description: "not a keyed archive (no $archiver, $objects and $top)")
        }
        self.objects = objects
        self.top = top
    }

    /// The object the archive's `root` key refers to.
    func rootObject() throws -> Object {
        guard let root = top["root"], let object = try object(root) else {
            throw Failure(description: "the archive has no root object")
        }
        return object
    }

    /// Follows a reference: `nil` for `$null`; a plain value stays as it is.
    func resolve(_ value: PropertyListValue?) -> PropertyListValue? {
        guard let value else { return nil }
        guard case .uid(let index) = value else { return value }
        guard index > 0, index < objects.count else { return nil }
        if case .string("$null") = objects[index] { return nil }
        return objects[index]
    }

    /// The archived object a reference leads to; `nil` for `$null` or a plain value.
    func object(_ value: PropertyListValue?) throws -> Object? {
        guard case .uid(let index)? = value else { return nil }
        guard index >= 0, index < objects.count else {
            throw Failure(description: "a reference (\(index)) names no object")
        }
        guard case .dictionary(let fields) = objects[index] else { return nil }
        guard let classReference = fields["$class"] else { return nil }
        guard case .dictionary(let classInfo)? = resolve(classReference),
            let name = classInfo["$classname"]?.string
        else {
            throw Failure(description: "object \(index) has no class name")
        }
        return Object(index: index, className: name, fields: fields)
    }

    /// A string: a plain one, or an archived `NSString`/`NSMutableString`.
    func string(_ value: PropertyListValue?) throws -> String? {
        switch resolve(value) {
        case .string(let string)?: return string
        case .dictionary?:
            // An NSString holds its characters directly; one that refers to another object is damaged.
            guard let object = try object(value), case .string(let string)? = resolve(object["NS.string"]) else {
                return nil
            }
            return string
        default: return nil
        }
    }

    /// The elements of an archived array or set.
    func elements(_ value: PropertyListValue?) throws -> [PropertyListValue] {
        guard let object = try object(value) else { return [] }
        guard case .array(let elements)? = object["NS.objects"] else {
            throw Failure(description: "\(object.className) \(object.index) is not an array or set")
        }
        return elements
    }

    /// The entries of an archived dictionary (`NSDictionary`, or Core Data's `NSKnownKeysDictionary1`), in
    /// archive order.
    func entries(_ value: PropertyListValue?) throws -> [(key: PropertyListValue, value: PropertyListValue)] {
        guard let object = try object(value) else { return [] }
        if case .array(let keys)? = object["NS.keys"], case .array(let values)? = object["NS.objects"] {
            guard keys.count == values.count else {
                throw Failure(
                    description: "dictionary \(object.index) has \(keys.count) keys for \(values.count) values")
            }
            return Array(zip(keys, values)).map { (key: $0.0, value: $0.1) }
        }
        if let mapping = try self.object(object["searchMapping"]) {
            let keys = try elements(mapping["keys"])
            let values = try elements(object["values"])
            guard keys.count == values.count else {
                throw Failure(
                    description: "dictionary \(object.index) has \(keys.count) keys for \(values.count) values")
            }
            return Array(zip(keys, values)).map { (key: $0.0, value: $0.1) }
        }
        throw Failure(description: "\(object.className) \(object.index) is not a dictionary")
    }

    /// A property-list-like value: strings, numbers, dates, data, UUIDs, URLs, decimal numbers, arrays and
    /// dictionaries of them. Objects of other classes give `nil`.
    func plainValue(_ value: PropertyListValue?) throws -> Any? {
        try plainValue(value, depth: 0)
    }

    /// How deeply plain values may nest: an archive from a file may be damaged, or refer to itself.
    static let maximumDepth = 64

    private func plainValue(_ value: PropertyListValue?, depth: Int) throws -> Any? {
        guard depth < Self.maximumDepth else {
            throw Failure(description: "values nest more than \(Self.maximumDepth) deep")
        }
        guard let resolved = resolve(value) else { return nil }
        switch resolved {
        case .null: return nil
        case .bool(let bool): return NSNumber(value: bool)
        case .integer(let integer): return NSNumber(value: integer)
        case .real(let real): return NSNumber(value: real)
        case .date(let date): return date
        case .data(let data): return data
        case .string(let string): return string
        case .uid: return nil
        case .array(let array): return try array.map { try plainValue($0, depth: depth + 1) ?? NSNull() }
        case .dictionary:
            guard let object = try object(value) else { return nil }
            switch object.className {
            case "NSString", "NSMutableString": return try string(value)
            case "NSDate":
                guard case .real(let time)? = object["NS.time"] else { return nil }
                return Date(timeIntervalSinceReferenceDate: time)
            case "NSUUID":
                guard case .data(let bytes)? = object["NS.uuidbytes"], bytes.count == 16 else { return nil }
                let b = Array(bytes)
                return UUID(
                    uuid: (
                        b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
                        b[13], b[14], b[15]
                    ))
            case "NSURL":
                guard let relative = try string(object["NS.relative"]) else { return nil }
                if let base = try string(object["NS.base"]) {
                    return URL(string: relative, relativeTo: URL(string: base))
                }
                return URL(string: relative)
            case "NSDecimalNumber":
                return decimal(object)
            case "NSArray", "NSMutableArray", "NSSet", "NSMutableSet", "NSOrderedSet", "NSMutableOrderedSet":
                return try elements(value).map { try plainValue($0, depth: depth + 1) ?? NSNull() }
            case "NSDictionary", "NSMutableDictionary":
                var dictionary: [String: Any] = [:]
                for entry in try entries(value) {
                    guard let key = try string(entry.key) else { continue }
                    dictionary[key] = try plainValue(entry.value, depth: depth + 1) ?? NSNull()
                }
                return dictionary
            case "NSData", "NSMutableData":
                if case .data(let data)? = object["NS.data"] { return data }
                return nil
            default:
                return nil
            }
        }
    }

    /// An archived `NSDecimalNumber`: a little-endian mantissa of up to 128 bits, a power of ten and a sign.
    private func decimal(_ object: Object) -> NSDecimalNumber? {
        // Foundation's Decimal holds at most 128 bits of mantissa and an 8-bit exponent; anything larger in a
        // damaged file would trap when converted, so it is refused.
        guard case .data(let mantissa)? = object["NS.mantissa"], mantissa.count <= 16,
            let exponent = object["NS.exponent"]?.integer, (-128...127).contains(exponent)
        else { return nil }
        let negative = object["NS.negative"]?.bool ?? false
        var significand = Decimal(0)
        for byte in mantissa.reversed() {
            significand = significand * 256 + Decimal(Int(byte))
        }
        let value = Decimal(sign: negative ? .minus : .plus, exponent: Int(exponent), significand: significand)
        return NSDecimalNumber(decimal: value)
    }
}
