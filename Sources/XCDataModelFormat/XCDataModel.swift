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
    /// The entities, in file order.
    public var entities: [Entity]
    /// Composite attribute types (`<composite>`), which attributes name with `composite="…"`.
    public var composites: [Composite]
    /// The model's fetch request templates.
    public var fetchRequests: [FetchRequest]
    /// The configurations (`<configuration>`), in file order.
    public var configurations: [Configuration]
    /// Where Xcode's graph view placed each entity (`<elements>`), by entity name.
    public var layout: [String: Layout]

    /// An entity (`<entity>`).
    public struct Entity: Sendable, Equatable {
        /// The name, as written in the file.
        public var name: String
        /// The class of the entity's objects; `nil` means `NSManagedObject`.
        public var representedClassName: String?
        /// The name of the entity this one inherits from (`parentEntity`).
        public var parentEntity: String?
        /// Whether the entity is abstract (`isAbstract="YES"`).
        public var isAbstract: Bool
        /// The version hash modifier (`versionHashModifier`).
        public var versionHashModifier: String?
        /// Xcode's "Renaming ID" (`elementID`).
        public var renamingIdentifier: String?
        /// `class`, `category`, or `nil` for manual code generation.
        public var codeGenerationType: String?
        /// The user info entries (`<userInfo><entry key= value=/>`), in file order.
        public var userInfo: [UserInfoEntry]
        /// The entity's own properties, in file order.
        public var properties: [Property]
        /// Each constraint lists property names (Xcode writes key paths of composites with dots).
        public var uniquenessConstraints: [[String]]
        /// The deprecated compound indexes: lists of property names.
        public var compoundIndexes: [[String]]
        /// The fetch indexes (`<fetchIndex>`).
        public var fetchIndexes: [FetchIndex]
        /// The line of the `<entity>` element, for messages.
        public var line: Int

        /// The entity's own attributes.
        public var attributes: [Attribute] { properties.compactMap(\.attribute) }
        /// The entity's own relationships.
        public var relationships: [Relationship] { properties.compactMap(\.relationship) }
        /// The entity's own fetched properties.
        public var fetchedProperties: [FetchedProperty] { properties.compactMap(\.fetchedProperty) }
    }

    /// An attribute, relationship or fetched property.
    public enum Property: Sendable, Equatable {
        case attribute(Attribute)
        case relationship(Relationship)
        case fetchedProperty(FetchedProperty)

        /// The name, as written in the file.
        public var name: String {
            switch self {
            case .attribute(let attribute): return attribute.name
            case .relationship(let relationship): return relationship.name
            case .fetchedProperty(let property): return property.name
            }
        }

        /// The attribute, if this is one.
        public var attribute: Attribute? {
            if case .attribute(let attribute) = self { return attribute }
            return nil
        }

        /// The relationship, if this is one.
        public var relationship: Relationship? {
            if case .relationship(let relationship) = self { return relationship }
            return nil
        }

        /// The fetched property, if this is one.
        public var fetchedProperty: FetchedProperty? {
            if case .fetchedProperty(let property) = self { return property }
            return nil
        }
    }

    /// Settings every kind of property has.
    public struct PropertyCommon: Sendable, Equatable {
        /// Whether the property may be nil (`optional="YES"`).
        public var isOptional: Bool
        /// Whether the property is transient (`transient="YES"`).
        public var isTransient: Bool
        /// Whether the property is indexed (`indexed="YES"`).
        public var isIndexed: Bool
        /// The version hash modifier (`versionHashModifier`).
        public var versionHashModifier: String?
        /// Xcode's "Renaming ID" (`elementID`).
        public var renamingIdentifier: String?
        /// Whether Spotlight indexes the property (`spotlightIndexingEnabled="YES"`).
        public var isIndexedBySpotlight: Bool
        /// `storedInTruthFile`: Apple's `isStoredInExternalRecord`.
        public var isStoredInExternalRecord: Bool
        /// The user info entries (`<userInfo><entry key= value=/>`), in file order.
        public var userInfo: [UserInfoEntry]
        /// The line of the element in the file, for messages.
        public var line: Int
    }

    /// An attribute (`<attribute>`), also an element of a composite.
    public struct Attribute: Sendable, Equatable {
        /// The name, as written in the file.
        public var name: String
        /// The attribute's type (`attributeType`).
        public var type: AttributeType
        /// The settings every kind of property has.
        public var common: PropertyCommon
        /// The default value as Xcode writes it (`defaultValueString`).
        public var defaultValueString: String?
        /// A date attribute's default, in seconds since 2001-01-01.
        public var defaultDateTimeInterval: Double?
        /// The minimum (a number, or a string's length) as written (`minValueString`).
        public var minValueString: String?
        /// The maximum (a number, or a string's length) as written (`maxValueString`).
        public var maxValueString: String?
        /// A date attribute's bounds, in seconds since 2001-01-01.
        public var minDateTimeInterval: Double?
        /// A date attribute's maximum, in seconds since 2001-01-01.
        public var maxDateTimeInterval: Double?
        /// The pattern a string must match (`regularExpressionString`).
        public var regularExpressionString: String?
        /// `nil` when the file does not say (Xcode's default depends on the type).
        public var usesScalarValueType: Bool?
        /// A transformable attribute's value transformer (`valueTransformerName`).
        public var valueTransformerName: String?
        /// A transformable attribute's value class (`customClassName`).
        public var customClassName: String?
        /// Whether binary values may be stored outside the store (`allowsExternalBinaryDataStorage`).
        public var allowsExternalBinaryDataStorage: Bool
        /// `preserveAfterDeletion`: Apple's `preservesValueInHistoryOnDeletion`.
        public var preservesValueInHistoryOnDeletion: Bool
        /// Whether CloudKit encrypts the value (`allowsCloudEncryption`).
        public var allowsCloudEncryption: Bool
        /// The expression of a derived attribute (`derived="YES"`).
        public var derivationExpression: String?
        /// The composite type a composite attribute uses.
        public var compositeName: String?

        /// Whether the property may be nil (`optional="YES"`).
        public var isOptional: Bool { common.isOptional }
        /// Whether the property is transient (`transient="YES"`).
        public var isTransient: Bool { common.isTransient }
        /// Whether the attribute is derived (`derived="YES"`).
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
        /// The name, as written in the file.
        public var name: String
        /// The settings every kind of property has.
        public var common: PropertyCommon
        /// The name of the destination entity (`destinationEntity`).
        public var destinationEntity: String
        /// The name of the inverse relationship (`inverseName`).
        public var inverseName: String?
        /// The entity of the inverse relationship (`inverseEntity`).
        public var inverseEntity: String?
        /// Whether the relationship is to-many (`toMany="YES"`).
        public var isToMany: Bool
        /// Whether a to-many relationship is ordered (`ordered="YES"`).
        public var isOrdered: Bool
        /// The least number of destination objects (`minCount`, 0 when absent).
        public var minCount: Int
        /// As written; `nil` when absent (a to-many relationship without a limit, or a to-one).
        public var maxCount: Int?
        /// `Nullify`, `Cascade`, `Deny` or `No Action`.
        public var deletionRule: String

        /// Whether the property may be nil (`optional="YES"`).
        public var isOptional: Bool { common.isOptional }
        /// Whether the property is transient (`transient="YES"`).
        public var isTransient: Bool { common.isTransient }
        /// Core Data's `maxCount`: 1 for to-one, the written limit or 0 (none) for to-many.
        public var effectiveMaxCount: Int { isToMany ? (maxCount ?? 0) : 1 }
    }

    /// A fetched property (`<fetchedProperty>`).
    public struct FetchedProperty: Sendable, Equatable {
        /// The name, as written in the file.
        public var name: String
        /// The settings every kind of property has.
        public var common: PropertyCommon
        /// The request that finds the property's objects.
        public var fetchRequest: FetchRequest
    }

    /// A fetch request: a model template (`<fetchRequest>` under `<model>`) or a fetched property's request.
    public struct FetchRequest: Sendable, Equatable {
        /// The name, as written in the file.
        public var name: String
        /// The name of the entity fetched (`entity`).
        public var entity: String
        /// The predicate's format (`predicateString`).
        public var predicateString: String?
        /// The fetch limit (`fetchLimit`).
        public var fetchLimit: Int?
        /// The batch size (`fetchBatchSize`).
        public var fetchBatchSize: Int?
        /// `resultType`: 0 objects, 1 object IDs, 2 dictionaries, 4 count.
        public var resultType: UInt?
        /// `includeSubentities`, when written.
        public var includesSubentities: Bool?
        /// `includePropertyValues`, when written.
        public var includesPropertyValues: Bool?
        /// `includesPendingChanges`, when written.
        public var includesPendingChanges: Bool?
        /// `returnObjectsAsFaults`, when written.
        public var returnsObjectsAsFaults: Bool?
        /// `returnDistinctResults`, when written.
        public var returnsDistinctResults: Bool?
        /// The line of the element in the file, for messages.
        public var line: Int
    }

    /// A composite attribute type (`<composite>`).
    public struct Composite: Sendable, Equatable {
        /// The name, as written in the file.
        public var name: String
        /// The entity's own attributes.
        public var attributes: [Attribute]
        /// The line of the element in the file, for messages.
        public var line: Int
    }

    /// A configuration (`<configuration>`) and the entities it holds.
    public struct Configuration: Sendable, Equatable {
        /// The name, as written in the file.
        public var name: String
        /// Whether the configuration is used with CloudKit (`usedWithCloudKit`).
        public var usedWithCloudKit: Bool
        /// The names of the configuration's entities.
        public var memberEntities: [String]
        /// The line of the element in the file, for messages.
        public var line: Int
    }

    /// A fetch index (`<fetchIndex>`).
    public struct FetchIndex: Sendable, Equatable {
        /// The name, as written in the file.
        public var name: String
        /// The indexed properties, in index order.
        public var elements: [FetchIndexElement]
        /// The predicate restricting the index, if any.
        public var partialIndexPredicate: String?
    }

    /// One property of a fetch index: `type` is `Binary` or `RTree`, `order` `ascending` or `descending`.
    public struct FetchIndexElement: Sendable, Equatable {
        /// The name of the indexed property.
        public var property: String
        /// The attribute's type (`attributeType`).
        public var type: String
        /// Whether the property is indexed in ascending order.
        public var isAscending: Bool
    }

    /// A `key`/`value` pair of a user info dictionary.
    public struct UserInfoEntry: Sendable, Equatable {
        /// The entry's key.
        public var key: String
        /// The entry's value, as a string.
        public var value: String
    }

    /// An entity's box in Xcode's graph view.
    public struct Layout: Sendable, Equatable {
        /// The box's left edge.
        public var x: Double
        /// The box's top edge.
        public var y: Double
        /// The box's width.
        public var width: Double
        /// The box's height.
        public var height: Double
    }

    /// The entity named `name`.
    public func entity(named name: String) -> Entity? {
        entities.first { $0.name == name }
    }

    /// The entity's properties with the inherited ones first, as Core Data lists an entity's properties.
    public func allProperties(of entity: Entity) -> [Property] {
        allProperties(of: entity, entitiesByName: nil)
    }

    /// `allProperties(of:)`, with the model's entities by name when the caller has them.
    func allProperties(of entity: Entity, entitiesByName: [String: Entity]?) -> [Property] {
        let byName =
            entitiesByName ?? Dictionary(entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var chain: [Entity] = [entity]
        var seen: Set<String> = [entity.name]
        while let parentName = chain[chain.count - 1].parentEntity, let parent = byName[parentName],
            seen.insert(parent.name).inserted
        {
            chain.append(parent)
        }
        // A redeclared property leaves the inherited one's place and comes after it, as its own definition.
        var result: [Property?] = []
        var indexOfName: [String: Int] = [:]
        for member in chain.reversed() {
            for property in member.properties {
                if let index = indexOfName[property.name] { result[index] = nil }
                indexOfName[property.name] = result.count
                result.append(property)
            }
        }
        return result.compactMap { $0 }
    }
}
