import Foundation

/// One version of an Xcode data model: the `contents` file of an `.xcdatamodel` folder, read into plain values.
///
/// The values keep Xcode's own spelling (`attributeType="Integer 16"`, `deletionRule="Cascade"`,
/// `elementID`…), so that every consumer — OpenCoreData's model loader, the code generator, the model tools —
/// reads the file the same way and decides for itself what the settings mean.
///
/// ```swift
/// let model = try XCDataModel(contentsOf: URL(fileURLWithPath: "Model.xcdatamodeld/Model.xcdatamodel"))
/// print(model.entities.map(\.name))
/// ```
public struct XCDataModel: Sendable, Equatable {
    /// The version's name: the folder name without `.xcdatamodel` (`"Model 2"`).
    public var name: String
    /// The `.xcdatamodel` folder (or the `contents` file when read alone).
    public var url: URL
    /// Xcode's "Model Version Identifier", if set.
    public var versionIdentifier: String?
    /// `sourceLanguage`: `Swift` or `Objective-C`.
    public var sourceLanguage: String?
    public var entities: [Entity]
    /// Composite attribute types (`<composite>`), which attributes name with `composite="…"`.
    public var composites: [Composite]
    /// The model's fetch request templates.
    public var fetchRequests: [FetchRequest]
    public var configurations: [Configuration]
    /// Where Xcode's graph view placed each entity (`<elements>`), by entity name.
    public var layout: [String: Layout]

    /// An entity (`<entity>`).
    public struct Entity: Sendable, Equatable {
        public var name: String
        /// The class of the entity's objects; `nil` means `NSManagedObject`.
        public var representedClassName: String?
        public var parentEntity: String?
        public var isAbstract: Bool
        public var versionHashModifier: String?
        /// Xcode's "Renaming ID" (`elementID`).
        public var renamingIdentifier: String?
        /// `class`, `category`, or `nil` for manual code generation.
        public var codeGenerationType: String?
        public var userInfo: [UserInfoEntry]
        /// The entity's own properties, in file order.
        public var properties: [Property]
        /// Each constraint lists property names (Xcode writes key paths of composites with dots).
        public var uniquenessConstraints: [[String]]
        /// The deprecated compound indexes: lists of property names.
        public var compoundIndexes: [[String]]
        public var fetchIndexes: [FetchIndex]
        /// The line of the `<entity>` element, for messages.
        public var line: Int

        public var attributes: [Attribute] { properties.compactMap(\.attribute) }
        public var relationships: [Relationship] { properties.compactMap(\.relationship) }
        public var fetchedProperties: [FetchedProperty] { properties.compactMap(\.fetchedProperty) }
    }

    /// An attribute, relationship or fetched property.
    public enum Property: Sendable, Equatable {
        case attribute(Attribute)
        case relationship(Relationship)
        case fetchedProperty(FetchedProperty)

        public var name: String {
            switch self {
            case .attribute(let attribute): return attribute.name
            case .relationship(let relationship): return relationship.name
            case .fetchedProperty(let property): return property.name
            }
        }

        public var attribute: Attribute? {
            if case .attribute(let attribute) = self { return attribute }
            return nil
        }

        public var relationship: Relationship? {
            if case .relationship(let relationship) = self { return relationship }
            return nil
        }

        public var fetchedProperty: FetchedProperty? {
            if case .fetchedProperty(let property) = self { return property }
            return nil
        }
    }

    /// Settings every kind of property has.
    public struct PropertyCommon: Sendable, Equatable {
        public var isOptional: Bool
        public var isTransient: Bool
        public var isIndexed: Bool
        public var versionHashModifier: String?
        public var renamingIdentifier: String?
        public var isIndexedBySpotlight: Bool
        /// `storedInTruthFile`: Apple's `isStoredInExternalRecord`.
        public var isStoredInExternalRecord: Bool
        public var userInfo: [UserInfoEntry]
        public var line: Int
    }

    /// An attribute (`<attribute>`), also an element of a composite.
    public struct Attribute: Sendable, Equatable {
        public var name: String
        public var type: AttributeType
        public var common: PropertyCommon
        public var defaultValueString: String?
        /// A date attribute's default, in seconds since 2001-01-01.
        public var defaultDateTimeInterval: Double?
        public var minValueString: String?
        public var maxValueString: String?
        /// A date attribute's bounds, in seconds since 2001-01-01.
        public var minDateTimeInterval: Double?
        public var maxDateTimeInterval: Double?
        public var regularExpressionString: String?
        /// `nil` when the file does not say (Xcode's default depends on the type).
        public var usesScalarValueType: Bool?
        public var valueTransformerName: String?
        public var customClassName: String?
        public var allowsExternalBinaryDataStorage: Bool
        /// `preserveAfterDeletion`: Apple's `preservesValueInHistoryOnDeletion`.
        public var preservesValueInHistoryOnDeletion: Bool
        public var allowsCloudEncryption: Bool
        /// The expression of a derived attribute (`derived="YES"`).
        public var derivationExpression: String?
        /// The composite type a composite attribute uses.
        public var compositeName: String?

        public var isOptional: Bool { common.isOptional }
        public var isTransient: Bool { common.isTransient }
        public var isDerived: Bool { derivationExpression != nil }
    }

    /// The type names Xcode writes in `attributeType`, with Core Data's `NSAttributeType` numbers.
    public enum AttributeType: String, Sendable, CaseIterable {
        case undefined = "Undefined"
        case integer16 = "Integer 16"
        case integer32 = "Integer 32"
        case integer64 = "Integer 64"
        case decimal = "Decimal"
        case double = "Double"
        case float = "Float"
        case string = "String"
        case boolean = "Boolean"
        case date = "Date"
        case binary = "Binary"
        case uuid = "UUID"
        case uri = "URI"
        case transformable = "Transformable"
        case objectID = "ObjectID"
        case composite = "Composite"

        /// Core Data's number for the type (`NSAttributeType.rawValue`).
        public var coreDataValue: UInt {
            switch self {
            case .undefined: return 0
            case .integer16: return 100
            case .integer32: return 200
            case .integer64: return 300
            case .decimal: return 400
            case .double: return 500
            case .float: return 600
            case .string: return 700
            case .boolean: return 800
            case .date: return 900
            case .binary: return 1000
            case .uuid: return 1100
            case .uri: return 1200
            case .transformable: return 1800
            case .objectID: return 2000
            case .composite: return 2100
            }
        }
    }

    /// A relationship (`<relationship>`).
    public struct Relationship: Sendable, Equatable {
        public var name: String
        public var common: PropertyCommon
        public var destinationEntity: String
        public var inverseName: String?
        public var inverseEntity: String?
        public var isToMany: Bool
        public var isOrdered: Bool
        public var minCount: Int
        /// As written; `nil` when absent (a to-many relationship without a limit, or a to-one).
        public var maxCount: Int?
        /// `Nullify`, `Cascade`, `Deny` or `No Action`.
        public var deletionRule: String

        public var isOptional: Bool { common.isOptional }
        public var isTransient: Bool { common.isTransient }
        /// Core Data's `maxCount`: 1 for to-one, the written limit or 0 (none) for to-many.
        public var effectiveMaxCount: Int { isToMany ? (maxCount ?? 0) : 1 }
    }

    /// A fetched property (`<fetchedProperty>`).
    public struct FetchedProperty: Sendable, Equatable {
        public var name: String
        public var common: PropertyCommon
        public var fetchRequest: FetchRequest
    }

    /// A fetch request: a model template (`<fetchRequest>` under `<model>`) or a fetched property's request.
    public struct FetchRequest: Sendable, Equatable {
        public var name: String
        public var entity: String
        public var predicateString: String?
        public var fetchLimit: Int?
        public var fetchBatchSize: Int?
        /// `resultType`: 0 objects, 1 object IDs, 2 dictionaries, 4 count.
        public var resultType: UInt?
        public var includesSubentities: Bool?
        public var includesPropertyValues: Bool?
        public var includesPendingChanges: Bool?
        public var returnsObjectsAsFaults: Bool?
        public var returnsDistinctResults: Bool?
        public var line: Int
    }

    /// A composite attribute type (`<composite>`).
    public struct Composite: Sendable, Equatable {
        public var name: String
        public var attributes: [Attribute]
        public var line: Int
    }

    /// A configuration (`<configuration>`) and the entities it holds.
    public struct Configuration: Sendable, Equatable {
        public var name: String
        public var usedWithCloudKit: Bool
        public var memberEntities: [String]
        public var line: Int
    }

    /// A fetch index (`<fetchIndex>`).
    public struct FetchIndex: Sendable, Equatable {
        public var name: String
        public var elements: [FetchIndexElement]
        public var partialIndexPredicate: String?
    }

    /// One property of a fetch index: `type` is `Binary` or `RTree`, `order` `ascending` or `descending`.
    public struct FetchIndexElement: Sendable, Equatable {
        public var property: String
        public var type: String
        public var isAscending: Bool
    }

    /// A `key`/`value` pair of a user info dictionary.
    public struct UserInfoEntry: Sendable, Equatable {
        public var key: String
        public var value: String
    }

    /// An entity's box in Xcode's graph view.
    public struct Layout: Sendable, Equatable {
        public var x: Double
        public var y: Double
        public var width: Double
        public var height: Double
    }

    /// The entity named `name`.
    public func entity(named name: String) -> Entity? {
        entities.first { $0.name == name }
    }

    /// The entity's properties with the inherited ones first, as Core Data lists an entity's properties.
    public func allProperties(of entity: Entity) -> [Property] {
        var chain: [Entity] = [entity]
        var seen: Set<String> = [entity.name]
        while let parentName = chain[0].parentEntity, let parent = self.entity(named: parentName),
            seen.insert(parent.name).inserted
        {
            chain.insert(parent, at: 0)
        }
        var result: [Property] = []
        for member in chain {
            for property in member.properties {
                result.removeAll { $0.name == property.name }
                result.append(property)
            }
        }
        return result
    }
}
