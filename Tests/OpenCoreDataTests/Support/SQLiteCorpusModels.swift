import Foundation
import OpenCoreDataShim
import Testing

/// The models of the corpus stores (shared/corpus/stores), built in code from their `.xcdatamodel` sources (or, for
/// CoreDataPlus's SampleModel2, from the Swift that defines it). Properties are listed in the order of the compiled
/// model the store was made with: alphabetical for Xcode's XML models; for the binary Recipes model, the order its
/// columns show.
///
/// Transformable attributes use `SQLiteIdentityTransformer`, so that tests read back exactly the bytes Apple stored.
enum SQLiteCorpusModels {
    /// A property in a model description.
    enum Property {
        case attribute(String, NSAttributeType, optional: Bool = true)
        case transformable(String)
        case transient(String, NSAttributeType)
        case derived(String, NSAttributeType, String)
        case toOne(String, String, inverse: String?)
        case toMany(String, String, inverse: String?, ordered: Bool = false)
    }

    /// An entity in a model description.
    struct Entity {
        var name: String
        var parent: String? = nil
        var isAbstract = false
        var renamingIdentifier: String? = nil
        var properties: [Property]
        var uniquenessConstraints: [[String]] = []
        var fetchIndexes: [(name: String, properties: [String])] = []
    }

    /// One corpus store and its model.
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        /// The store, relative to the corpus root.
        let store: String
        let schema: String
        /// Schema objects Apple writes that this release does not (persistent history).
        let excluded: Set<String>
        let makeModel: @Sendable () -> NSManagedObjectModel

        var testDescription: String { name }

        /// The model the store was written with, as Apple's framework would find it: the model the store caches
        /// (`Z_MODELCACHE`), or else the version of the Xcode model beside it whose version hashes the store records.
        func storeModel() throws -> NSManagedObjectModel {
            try SQLiteCorpusModels.storeModel(for: store)
        }
    }

    static func storeModel(for store: String) throws -> NSManagedObjectModel {
        let storeURL = SQLiteCorpus.root.appendingPathComponent(store)
        let cache = storeURL.deletingPathExtension().appendingPathExtension("modelcache.bplist")
        if FileManager.default.fileExists(atPath: cache.path) {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("corpus-model-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let mom = directory.appendingPathComponent("Cached.mom")
            try FileManager.default.copyItem(at: cache, to: mom)
            return try NSManagedObjectModel(validatingContentsOf: mom)
        }
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            ofType: NSSQLiteStoreType, at: storeURL, options: [NSReadOnlyPersistentStoreOption: true])
        var folder = storeURL.deletingLastPathComponent()
        while folder.path.count > SQLiteCorpus.root.path.count {
            let bundles = try FileManager.default.subpathsOfDirectory(atPath: folder.path)
                .filter { $0.hasSuffix(".xcdatamodeld") }
            for bundle in bundles {
                for version in try NSManagedObjectModel.versionsOfModel(at: folder.appendingPathComponent(bundle))
                where version.model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) {
                    return version.model
                }
            }
            folder.deleteLastPathComponent()
        }
        throw NSError(
            domain: "SQLiteCorpusModels", code: 1, userInfo: [NSLocalizedDescriptionKey: "no model for \(store)"])
    }

    static let historyTables: Set<String> = [
        "ACHANGE", "ATRANSACTION", "ATRANSACTIONSTRING", "ACHANGE_ZTRANSACTIONID_INDEX",
        "ATRANSACTION_ZAUTHORTS_INDEX", "ATRANSACTION_ZBUNDLEIDTS_INDEX", "ATRANSACTION_ZCONTEXTNAMETS_INDEX",
        "ATRANSACTION_ZPROCESSIDTS_INDEX", "Z_TRANSACTION_TransactionAuthorIndex",
        "Z_TRANSACTION_TransactionTimestampIndex", "Z_TRANSACTIONSTRING_UNIQUE_NAME",
    ]

    /// The schema Apple's framework creates today for the model of a corpus store: the store's own schema, plus the
    /// model cache for the stores written before Apple's framework kept one (Recipes and BookMigration, framework
    /// versions 241 and 419; the cache appears in every store of version 847 and later).
    static func appleSchema(_ corpus: Case) throws -> Set<String> {
        var schema = try RawSQLite.corpusSchema(
            SQLiteCorpus.root.appendingPathComponent(corpus.schema), excluding: corpus.excluded)
        if !schema.contains(where: { $0.hasPrefix("CREATE TABLE Z_MODELCACHE ") }) {
            schema.insert("CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)")
        }
        return schema
    }

    static let cases: [Case] = [
        Case(
            name: "MagicalRecord Recipes",
            store: "stores/magicalpanda__MagicalRecord/Samples/iOS/Resources/RecipeData/Recipes.sqlite",
            schema: "stores/magicalpanda__MagicalRecord/Samples/iOS/Resources/RecipeData/Recipes.schema.txt",
            excluded: historyTables, makeModel: recipes),
        Case(
            name: "BookMigration Model1", store: "stores/hwaxxer__BookMigration/Model1.sqlite",
            schema: "stores/hwaxxer__BookMigration/Model1.schema.txt", excluded: historyTables, makeModel: bookMigration
        ),
        Case(
            name: "CoreDataMigration-Example 1", store: migrationExample("CoreDataMigration_Example_1.sqlite"),
            schema: migrationExample("CoreDataMigration_Example_1.schema.txt"), excluded: historyTables,
            makeModel: { migrationPosts(["color", "date", "postID"]) }),
        Case(
            name: "CoreDataMigration-Example 2", store: migrationExample("CoreDataMigration_Example_2.sqlite"),
            schema: migrationExample("CoreDataMigration_Example_2.schema.txt"), excluded: historyTables,
            makeModel: { migrationPosts(["date", "hexColor", "postID"]) }),
        Case(
            name: "CoreDataMigration-Example 3", store: migrationExample("CoreDataMigration_Example_3.sqlite"),
            schema: migrationExample("CoreDataMigration_Example_3.schema.txt"), excluded: historyTables,
            makeModel: { migrationColors(hide: false) }),
        Case(
            name: "CoreDataMigration-Example WAL", store: migrationExample("CoreDataMigration_Example_WAL.sqlite"),
            schema: migrationExample("CoreDataMigration_Example_WAL.schema.txt"), excluded: historyTables,
            makeModel: { migrationColors(hide: true) }),
        Case(
            name: "CoreDataPlus SampleModel V1", store: coreDataPlus("SampleModel/Fixtures/SampleModel_V1.sqlite"),
            schema: coreDataPlus("SampleModel/Fixtures/SampleModel_V1.schema.txt"), excluded: historyTables,
            makeModel: { sampleModel(version: 1) }),
        Case(
            name: "CoreDataPlus SampleModel V2", store: coreDataPlus("SampleModel/Fixtures/SampleModel_V2.sqlite"),
            schema: coreDataPlus("SampleModel/Fixtures/SampleModel_V2.schema.txt"), excluded: historyTables,
            makeModel: { sampleModel(version: 2) }),
        Case(
            name: "CoreDataPlus SampleModel2 V1", store: coreDataPlus("SampleModel2/Fixtures/SampleModel2_V1.sqlite"),
            schema: coreDataPlus("SampleModel2/Fixtures/SampleModel2_V1.schema.txt"), excluded: historyTables,
            makeModel: { sampleModel2(version: 1) }),
        Case(
            name: "CoreDataPlus SampleModel2 V2", store: coreDataPlus("SampleModel2/Fixtures/SampleModel2_V2.sqlite"),
            schema: coreDataPlus("SampleModel2/Fixtures/SampleModel2_V2.schema.txt"), excluded: historyTables,
            makeModel: { sampleModel2(version: 2) }),
        Case(
            name: "CoreDataPlus SampleModel3 V1", store: coreDataPlus("SampleModel3/Fixtures/SampleModel3_V1.sqlite"),
            schema: coreDataPlus("SampleModel3/Fixtures/SampleModel3_V1.schema.txt"), excluded: historyTables,
            makeModel: {
                model([
                    Entity(
                        name: "User",
                        properties: [
                            .attribute("name", .stringAttributeType, optional: false),
                            .attribute("petName", .stringAttributeType),
                        ])
                ])
            }),
    ]

    private static func migrationExample(_ file: String) -> String {
        "stores/wibosco__CoreDataMigration-Example/CoreDataMigration-ExampleTests/Resources/SQLite/" + file
    }

    private static func coreDataPlus(_ file: String) -> String {
        "stores/alemar11__CoreDataPlus/" + file
    }

    // MARK: The models

    /// MagicalRecord's Recipes sample (a binary Xcode model; property order as its columns show).
    static func recipes() -> NSManagedObjectModel {
        model([
            Entity(name: "Image", properties: [.transformable("image"), .toOne("recipe", "Recipe", inverse: "image")]),
            Entity(
                name: "Ingredient",
                properties: [
                    .attribute("displayOrder", .integer16AttributeType), .attribute("amount", .stringAttributeType),
                    .attribute("name", .stringAttributeType), .toOne("recipe", "Recipe", inverse: "ingredients"),
                ]),
            Entity(
                name: "Recipe",
                properties: [
                    .attribute("prepTime", .stringAttributeType), .attribute("name", .stringAttributeType),
                    .attribute("instructions", .stringAttributeType), .attribute("overview", .stringAttributeType),
                    .transformable("thumbnailImage"), .toOne("image", "Image", inverse: "recipe"),
                    .toOne("type", "RecipeType", inverse: "recipes"),
                    .toMany("ingredients", "Ingredient", inverse: "recipe"),
                ]),
            Entity(
                name: "RecipeType",
                properties: [.attribute("name", .stringAttributeType), .toMany("recipes", "Recipe", inverse: "type")]),
        ])
    }

    /// hwaxxer/BookMigration, Model1.
    static func bookMigration() -> NSManagedObjectModel {
        model([
            Entity(
                name: "Book",
                properties: [
                    .attribute("authorName", .stringAttributeType), .transformable("fileURL"),
                    .attribute("title", .stringAttributeType), .toOne("user", "User", inverse: "books"),
                ]),
            Entity(
                name: "User",
                properties: [
                    .attribute("userId", .integer32AttributeType), .toMany("books", "Book", inverse: "user"),
                ]),
        ])
    }

    /// wibosco/CoreDataMigration-Example, versions 1 and 2: one Post entity.
    static func migrationPosts(_ attributes: [String]) -> NSManagedObjectModel {
        model([
            Entity(
                name: "Post",
                properties: attributes.map { name in
                    .attribute(name, name == "date" ? .dateAttributeType : .stringAttributeType)
                })
        ])
    }

    /// wibosco/CoreDataMigration-Example, versions 3 and 4 (4 adds Post.hide).
    static func migrationColors(hide: Bool) -> NSManagedObjectModel {
        model([
            Entity(
                name: "Color",
                properties: [
                    .attribute("colorID", .stringAttributeType), .attribute("hex", .stringAttributeType),
                    .toOne("post", "Post", inverse: "color"),
                ]),
            Entity(
                name: "Post",
                properties: [.attribute("date", .dateAttributeType)]
                    + (hide ? [.attribute("hide", .booleanAttributeType)] : [])
                    + [.attribute("postID", .stringAttributeType), .toOne("color", "Color", inverse: "post")]),
        ])
    }

    /// CoreDataPlus's SampleModel: version 1 (SampleModel.xcdatamodel) and version 2 (SampleModel2.xcdatamodel,
    /// which renames ExpensiveSportCar to LuxuryCar and drops Car.color and Person.id).
    static func sampleModel(version: Int) -> NSManagedObjectModel {
        var car: [Property] = []
        if version == 1 { car.append(.transformable("color")) }
        car += [
            .transient("currentDrivingSpeed", .integer64AttributeType), .attribute("maker", .stringAttributeType),
            .attribute("markedForDeletionAsOf", .dateAttributeType), .attribute("model", .stringAttributeType),
            .attribute("numberPlate", .stringAttributeType, optional: false),
            .toOne("owner", "Person", inverse: "cars"),
        ]
        var person: [Property] = [.attribute("firstName", .stringAttributeType)]
        if version == 1 { person.append(.attribute("id", .UUIDAttributeType, optional: false)) }
        person += [
            .transient("isDriving", .booleanAttributeType), .attribute("lastName", .stringAttributeType),
            .attribute("updatedAt", .dateAttributeType, optional: false), .toMany("cars", "Car", inverse: "owner"),
        ]
        return model([
            Entity(
                name: "Car", properties: car, uniquenessConstraints: [["numberPlate"]],
                fetchIndexes: version == 2 ? [("byMakerAndNumberPlate", ["maker", "numberPlate"])] : []),
            Entity(
                name: version == 1 ? "ExpensiveSportCar" : "LuxuryCar", parent: "SportCar",
                renamingIdentifier: version == 1 ? nil : "ExpensiveSportCar",
                properties: [.attribute("isLimitedEdition", .booleanAttributeType)]),
            Entity(
                name: "Person", properties: person, uniquenessConstraints: [["firstName", "lastName"]]),
            Entity(name: "SportCar", parent: "Car", properties: []),
        ])
    }

    /// CoreDataPlus's SampleModel2, defined in Swift (SampleModel2+V1.swift, SampleModel2+V2.swift).
    static func sampleModel2(version: Int) -> NSManagedObjectModel {
        model([
            Entity(name: "Writer", isAbstract: true, properties: [.attribute("age", .integer16AttributeType)]),
            Entity(
                name: "Author", parent: "Writer",
                properties: [.attribute("alias", .stringAttributeType)]
                    + (version == 1 ? [.attribute("siteURL", .URIAttributeType)] : [])
                    + [.toMany("books", "Book", inverse: "author")],
                uniquenessConstraints: [["alias"]]),
            Entity(
                name: "Book",
                properties: [
                    .attribute("uniqueID", .UUIDAttributeType), .attribute("title", .stringAttributeType),
                    .attribute("price", .decimalAttributeType), .transformable(version == 1 ? "cover" : "frontCover"),
                    .attribute("publishedAt", .dateAttributeType),
                    .derived("pagesCount", .integer64AttributeType, "pages.@count"),
                    .toOne("author", "Author", inverse: "books"), .toMany("pages", "Page", inverse: "book"),
                ],
                uniquenessConstraints: [["uniqueID"]]),
            Entity(
                name: "GraphicNovel", parent: "Book", properties: [.attribute("isBlackAndWhite", .booleanAttributeType)]
            ),
            Entity(
                name: "Page",
                properties: [
                    .attribute("isBookmarked", .booleanAttributeType), .attribute("number", .integer32AttributeType),
                    .transformable("content"), .toOne("book", "Book", inverse: "pages"),
                ]),
            Entity(
                name: "Feedback",
                properties: [
                    .attribute("authorAlias", .stringAttributeType), .attribute("bookID", .UUIDAttributeType),
                    .attribute("comment", .stringAttributeType), .attribute("rating", .doubleAttributeType),
                ]),
        ])
    }

    // MARK: Building

    /// Builds a model from entity descriptions; relationships are connected to their inverses by name.
    static func model(_ entities: [Entity]) -> NSManagedObjectModel {
        SQLiteIdentityTransformer.register()
        var descriptions: [String: NSEntityDescription] = [:]
        for entity in entities {
            let description = NSEntityDescription()
            description.name = entity.name
            description.managedObjectClassName = "NSManagedObject"
            description.isAbstract = entity.isAbstract
            description.renamingIdentifier = entity.renamingIdentifier
            descriptions[entity.name] = description
        }
        var relationships: [(entity: String, relationship: NSRelationshipDescription, inverse: String?, to: String)] =
            []
        for entity in entities {
            let description = descriptions[entity.name]!
            var properties: [NSPropertyDescription] = []
            for property in entity.properties {
                switch property {
                case .attribute(let name, let type, let optional):
                    let attribute = NSAttributeDescription()
                    attribute.name = name
                    attribute.attributeType = type
                    attribute.isOptional = optional
                    properties.append(attribute)
                case .transformable(let name):
                    let attribute = NSAttributeDescription()
                    attribute.name = name
                    attribute.attributeType = .transformableAttributeType
                    attribute.valueTransformerName = SQLiteIdentityTransformer.name.rawValue
                    properties.append(attribute)
                case .transient(let name, let type):
                    let attribute = NSAttributeDescription()
                    attribute.name = name
                    attribute.attributeType = type
                    attribute.isTransient = true
                    properties.append(attribute)
                case .derived(let name, let type, let expression):
                    let attribute = NSDerivedAttributeDescription()
                    attribute.name = name
                    attribute.attributeType = type
                    attribute.derivationExpression = NSExpression(format: expression)
                    properties.append(attribute)
                case .toOne(let name, let destination, let inverse), .toMany(let name, let destination, let inverse, _):
                    let relationship = NSRelationshipDescription()
                    relationship.name = name
                    relationship.destinationEntity = descriptions[destination]
                    if case .toMany(_, _, _, let ordered) = property {
                        relationship.maxCount = 0
                        relationship.isOrdered = ordered
                    } else {
                        relationship.maxCount = 1
                    }
                    relationship.deleteRule = .nullifyDeleteRule
                    relationships.append((entity.name, relationship, inverse, destination))
                    properties.append(relationship)
                }
            }
            description.properties = properties
            description.uniquenessConstraints = entity.uniquenessConstraints
            description.indexes = entity.fetchIndexes.map { index in
                NSFetchIndexDescription(
                    name: index.name,
                    elements: index.properties.map { name in
                        NSFetchIndexElementDescription(
                            property: description.propertiesByName[name]!, collationType: .binary)
                    })
            }
        }
        for (_, relationship, inverse, destination) in relationships {
            guard let inverse else { continue }
            relationship.inverseRelationship = descriptions[destination]!.relationshipsByName[inverse]
        }
        for entity in entities {
            if let parent = entity.parent {
                let parentDescription = descriptions[parent]!
                parentDescription.subentities = parentDescription.subentities + [descriptions[entity.name]!]
            }
        }
        let model = NSManagedObjectModel()
        model.entities = entities.map { descriptions[$0.name]! }
        return model
    }
}

/// Passes data through unchanged, so that transformable attributes read and write exactly the stored bytes.
final class SQLiteIdentityTransformer: ValueTransformer, @unchecked Sendable {
    static let name = NSValueTransformerName("SQLiteIdentityTransformer")

    static func register() {
        if ValueTransformer(forName: name) == nil {
            ValueTransformer.setValueTransformer(SQLiteIdentityTransformer(), forName: name)
        }
    }

    override class func transformedValueClass() -> AnyClass { NSData.self }
    override class func allowsReverseTransformation() -> Bool { true }
    override func transformedValue(_ value: Any?) -> Any? { value }
    override func reverseTransformedValue(_ value: Any?) -> Any? { value }
}
