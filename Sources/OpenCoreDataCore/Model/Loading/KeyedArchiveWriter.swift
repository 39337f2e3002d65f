/// Builds the object graph of an `NSKeyedArchiver` archive, as `KeyedArchive` reads it: `$objects` starts with
/// `$null`, every object is a dictionary whose `$class` refers to a class description (`$classname` and the
/// `$classes` chain), and references are UIDs into `$objects`. Objects get their number when their encoding starts,
/// so that an object graph with cycles (an entity and its properties) refers back to numbers already given.
struct KeyedArchiveWriter {
    /// The encoded keys of an object, with references to other objects as values.
    typealias Fields = [String: PropertyListValue]

    /// The reference that stands for `nil`.
    static var null: PropertyListValue { .uid(0) }

    private var objects: [PropertyListValue] = [.string("$null")]
    private var classes: [String: Int] = [:]
    private var strings: [String: Int] = [:]

    /// Appends an object of class `className`; `fields` gives its encoded keys once its number is known, and may
    /// encode further objects, which refer to this one by `reference`.
    mutating func encodeObject<Failure: Error>(
        className: String,
        _ fields: (inout KeyedArchiveWriter, _ reference: PropertyListValue) throws(Failure) -> Fields
    ) throws(Failure) -> PropertyListValue {
        objects.append(.null)
        let index = objects.count - 1
        var encoded = try fields(&self, .uid(index))
        encoded["$class"] = classReference(className)
        objects[index] = .dictionary(encoded)
        return .uid(index)
    }

    /// A string object; equal strings share one object, as the strings of a model do in Apple's archives.
    mutating func string(_ string: String) -> PropertyListValue {
        if let index = strings[string] { return .uid(index) }
        objects.append(.string(string))
        strings[string] = objects.count - 1
        return .uid(objects.count - 1)
    }

    /// A string object, or `$null` for `nil`.
    mutating func string(_ string: String?) -> PropertyListValue {
        string.map { self.string($0) } ?? Self.null
    }

    /// A plain value held in `$objects` itself: a number, a Boolean or data, as `NSKeyedArchiver` stores `NSNumber`
    /// and `NSData`.
    mutating func plain(_ value: PropertyListValue) -> PropertyListValue {
        objects.append(value)
        return .uid(objects.count - 1)
    }

    /// An `NSArray`-like collection (`NSArray`, `NSMutableArray`, `NSSet`, `NSOrderedSet`…) of references.
    mutating func collection(_ className: String, _ elements: [PropertyListValue]) -> PropertyListValue {
        encodeObject(className: className) { _, _ in ["NS.objects": .array(elements)] }
    }

    /// An `NSDictionary`-like collection of references, in the order given.
    mutating func dictionary(_ className: String, keys: [PropertyListValue], values: [PropertyListValue])
        -> PropertyListValue
    {
        encodeObject(className: className) { _, _ in ["NS.keys": .array(keys), "NS.objects": .array(values)] }
    }

    /// A Foundation value as `NSKeyedArchiver` encodes it: strings, numbers, Booleans and data in `$objects`
    /// itself; dates, UUIDs, URLs, decimal numbers, `NSNull`, arrays, sets and dictionaries (of such values) as
    /// objects of their Foundation class. `nil` is `$null`; any other value cannot be archived here.
    mutating func value(_ value: Any?) throws(KeyedArchive.Failure) -> PropertyListValue {
        guard let value else { return Self.null }
        switch value {
        case let string as String:
            return self.string(string)
        case let bool as Bool where type(of: value) == Bool.self:
            return plain(.bool(bool))
        case let decimal as NSDecimalNumber:
            return decimalNumber(decimal.decimalValue)
        case let decimal as Decimal:
            return decimalNumber(decimal)
        case let number as NSNumber:
            if Self.isBoolean(number) { return plain(.bool(number.boolValue)) }
            switch PredicateNumber(number: number) {
            case .double(let double): return plain(.real(double))
            case .uint(let unsigned): return plain(.integer(Int64(bitPattern: unsigned)))
            case .int(let integer): return plain(.integer(integer))
            case .decimal(let decimal): return decimalNumber(decimal)
            }
        case let data as Data:
            return plain(.data(data))
        case let date as Date:
            return encodeObject(className: "NSDate") { _, _ in ["NS.time": .real(date.timeIntervalSinceReferenceDate)] }
        case let uuid as UUID:
            let bytes = withUnsafeBytes(of: uuid.uuid) { Data($0) }
            return encodeObject(className: "NSUUID") { _, _ in ["NS.uuidbytes": .data(bytes)] }
        case let url as URL:
            return encodeObject(className: "NSURL") { writer, _ in
                [
                    "NS.base": writer.string(url.baseURL?.absoluteString),
                    "NS.relative": writer.string(url.relativeString),
                ]
            }
        case is NSNull:
            return encodeObject(className: "NSNull") { _, _ in [:] }
        case let array as [Any]:
            var elements: [PropertyListValue] = []
            for element in array { elements.append(try self.value(element)) }
            return collection("NSArray", elements)
        case let set as Set<AnyHashable>:
            var elements: [PropertyListValue] = []
            for element in set { elements.append(try self.value(element.base)) }
            return collection("NSSet", elements)
        case let dictionary as [AnyHashable: Any]:
            var keys: [PropertyListValue] = []
            var values: [PropertyListValue] = []
            for (key, element) in dictionary.sorted(by: { "\($0.key)" < "\($1.key)" }) {
                keys.append(try self.value(key.base))
                values.append(try self.value(element))
            }
            return self.dictionary("NSDictionary", keys: keys, values: values)
        default:
            switch PredicateNumber(value) {
            case .double(let double)?: return plain(.real(double))
            case .uint(let unsigned)?: return plain(.integer(Int64(bitPattern: unsigned)))
            case .int(let integer)?: return value is Bool ? plain(.bool(integer != 0)) : plain(.integer(integer))
            case .decimal(let decimal)?: return decimalNumber(decimal)
            case nil: throw KeyedArchive.Failure(description: "a value of type \(type(of: value)) cannot be archived")
            }
        }
    }

    /// Whether an `NSNumber` holds a Boolean (`NSNumber(value: true)`, what property lists give for `<true/>`).
    static func isBoolean(_ number: NSNumber) -> Bool {
        String(describing: type(of: number)) == "__NSCFBoolean" || String(cString: number.objCType) == "B"
    }

    /// An `NSDecimalNumber`: a little-endian 128-bit mantissa, a power of ten and a sign, as Foundation archives
    /// it and `KeyedArchive` reads it.
    mutating func decimalNumber(_ decimal: Decimal) -> PropertyListValue {
        // The significand's decimal digits, accumulated into little-endian bytes.
        var mantissa = [UInt8](repeating: 0, count: 16)
        let digits = decimal.isNaN ? "0" : "\(decimal.significand.magnitude)"
        for digit in digits.compactMap(\.wholeNumberValue) {
            var carry = digit
            for index in mantissa.indices {
                let value = Int(mantissa[index]) * 10 + carry
                mantissa[index] = UInt8(value & 0xFF)
                carry = value >> 8
            }
        }
        var words = 8
        while words > 0, mantissa[2 * words - 1] == 0, mantissa[2 * words - 2] == 0 { words -= 1 }
        let exponent = decimal.isNaN ? 0 : decimal.exponent
        return encodeObject(className: "NSDecimalNumber") { _, _ in
            [
                "NS.exponent": .integer(Int64(exponent)),
                "NS.length": .integer(Int64(words)),
                "NS.negative": .bool(decimal.sign == .minus && !decimal.isZero),
                "NS.compact": .bool(true),
                "NS.mantissa.bo": .integer(1),
                "NS.mantissa": .data(Data(mantissa)),
            ]
        }
    }

    /// The archive: `NSKeyedArchiver`'s top-level dictionary with `root` as the root object, in the binary property
    /// list format.
    func data(root: PropertyListValue) -> Data {
        BinaryPropertyListWriter.data(
            .dictionary([
                "$version": .integer(100_000),
                "$archiver": .string("NSKeyedArchiver"),
                "$top": .dictionary(["root": root]),
                "$objects": .array(objects),
            ]))
    }

    private mutating func classReference(_ className: String) -> PropertyListValue {
        if let index = classes[className] { return .uid(index) }
        let chain = Self.superclasses[className] ?? ["NSObject"]
        objects.append(
            .dictionary([
                "$classname": .string(className),
                "$classes": .array(([className] + chain).map { .string($0) }),
            ]))
        classes[className] = objects.count - 1
        return .uid(objects.count - 1)
    }

    /// The superclasses Apple's archives list for each class (`$classes`), below the class itself.
    private static let superclasses: [String: [String]] = {
        var chains: [String: [String]] = [:]
        let property = ["NSPropertyDescription", "NSObject"]
        let attribute = ["NSAttributeDescription"] + property
        for name in ["NSAttributeDescription", "NSRelationshipDescription", "NSFetchedPropertyDescription"] {
            chains[name] = property
        }
        chains["NSDerivedAttributeDescription"] = attribute
        chains["NSCompositeAttributeDescription"] = attribute
        chains["NSFetchRequest"] = ["NSPersistentStoreRequest", "NSObject"]
        chains["NSKnownKeysDictionary1"] = ["NSKnownKeysDictionary", "NSMutableDictionary", "NSDictionary", "NSObject"]
        chains["NSKnownKeysMappingStrategy1"] = ["NSKnownKeysMappingStrategy", "NSObject"]
        chains["NSMutableArray"] = ["NSArray", "NSObject"]
        chains["NSMutableSet"] = ["NSSet", "NSObject"]
        chains["NSMutableOrderedSet"] = ["NSOrderedSet", "NSObject"]
        chains["NSMutableDictionary"] = ["NSDictionary", "NSObject"]
        chains["NSMutableString"] = ["NSString", "NSObject"]
        chains["NSMutableData"] = ["NSData", "NSObject"]
        chains["NSDecimalNumber"] = ["NSNumber", "NSValue", "NSObject"]
        for name in ["NSComparisonPredicate", "NSCompoundPredicate", "NSTruePredicate", "NSFalsePredicate"] {
            chains[name] = ["NSPredicate", "NSObject"]
        }
        let predicateOperator = ["NSPredicateOperator", "NSObject"]
        let stringOperator = ["NSStringPredicateOperator"] + predicateOperator
        for name in [
            "NSComparisonPredicateOperator", "NSEqualityPredicateOperator", "NSInPredicateOperator",
            "NSBetweenPredicateOperator",
        ] {
            chains[name] = predicateOperator
        }
        for name in ["NSLikePredicateOperator", "NSSubstringPredicateOperator", "NSMatchingPredicateOperator"] {
            chains[name] = stringOperator
        }
        for name in [
            "NSConstantValueExpression", "NSSelfExpression", "NSVariableExpression", "NSKeyPathSpecifierExpression",
            "NSFunctionExpression", "NSAggregateExpression", "NSSubqueryExpression", "NSFetchRequestExpression",
        ] {
            chains[name] = ["NSExpression", "NSObject"]
        }
        chains["NSKeyPathExpression"] = ["NSFunctionExpression", "NSExpression", "NSObject"]
        return chains
    }()
}
