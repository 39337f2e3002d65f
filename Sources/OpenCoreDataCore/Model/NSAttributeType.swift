/// The type of an attribute, as Core Data's `NSAttributeType` numbers it (the numbers are part of stored models).
public enum NSAttributeType: UInt, Sendable {
    case undefinedAttributeType = 0
    case integer16AttributeType = 100
    case integer32AttributeType = 200
    case integer64AttributeType = 300
    case decimalAttributeType = 400
    case doubleAttributeType = 500
    case floatAttributeType = 600
    case stringAttributeType = 700
    case booleanAttributeType = 800
    case dateAttributeType = 900
    case binaryDataAttributeType = 1000
    case UUIDAttributeType = 1100
    case URIAttributeType = 1200
    case transformableAttributeType = 1800
    case objectIDAttributeType = 2000
    case compositeAttributeType = 2100

    /// The class name Core Data reports for values of this type (`attributeValueClassName`).
    var defaultValueClassName: String? {
        switch self {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .doubleAttributeType,
            .floatAttributeType, .booleanAttributeType:
            return "NSNumber"
        case .decimalAttributeType: return "NSDecimalNumber"
        case .stringAttributeType: return "NSString"
        case .dateAttributeType: return "NSDate"
        case .binaryDataAttributeType: return "NSData"
        case .UUIDAttributeType: return "NSUUID"
        case .URIAttributeType: return "NSURL"
        case .objectIDAttributeType: return "NSManagedObjectID"
        case .compositeAttributeType: return "NSDictionary"
        case .undefinedAttributeType, .transformableAttributeType: return nil
        }
    }

    /// The name Xcode's model editor gives this type (`attributeType="Integer 16"`).
    var modelEditorName: String {
        switch self {
        case .undefinedAttributeType: return "Undefined"
        case .integer16AttributeType: return "Integer 16"
        case .integer32AttributeType: return "Integer 32"
        case .integer64AttributeType: return "Integer 64"
        case .decimalAttributeType: return "Decimal"
        case .doubleAttributeType: return "Double"
        case .floatAttributeType: return "Float"
        case .stringAttributeType: return "String"
        case .booleanAttributeType: return "Boolean"
        case .dateAttributeType: return "Date"
        case .binaryDataAttributeType: return "Binary"
        case .UUIDAttributeType: return "UUID"
        case .URIAttributeType: return "URI"
        case .transformableAttributeType: return "Transformable"
        case .objectIDAttributeType: return "ObjectID"
        case .compositeAttributeType: return "Composite"
        }
    }
}

extension NSAttributeDescription {
    /// The Swift-style attribute type of `NSAttributeDescription.type` (iOS 15 and later on Apple platforms).
    public struct AttributeType: RawRepresentable, Hashable, Sendable {
        public let rawValue: NSAttributeType

        public init(rawValue: NSAttributeType) { self.rawValue = rawValue }

        public static let undefined = AttributeType(rawValue: .undefinedAttributeType)
        public static let integer16 = AttributeType(rawValue: .integer16AttributeType)
        public static let integer32 = AttributeType(rawValue: .integer32AttributeType)
        public static let integer64 = AttributeType(rawValue: .integer64AttributeType)
        public static let decimal = AttributeType(rawValue: .decimalAttributeType)
        public static let double = AttributeType(rawValue: .doubleAttributeType)
        public static let float = AttributeType(rawValue: .floatAttributeType)
        public static let string = AttributeType(rawValue: .stringAttributeType)
        public static let boolean = AttributeType(rawValue: .booleanAttributeType)
        public static let date = AttributeType(rawValue: .dateAttributeType)
        public static let binaryData = AttributeType(rawValue: .binaryDataAttributeType)
        public static let uuid = AttributeType(rawValue: .UUIDAttributeType)
        public static let uri = AttributeType(rawValue: .URIAttributeType)
        public static let transformable = AttributeType(rawValue: .transformableAttributeType)
        public static let objectID = AttributeType(rawValue: .objectIDAttributeType)
        public static let composite = AttributeType(rawValue: .compositeAttributeType)
    }
}
