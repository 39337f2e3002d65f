#if !canImport(CoreData)
import Foundation
import OpenCoreData
import Testing
import XCDataModelFormat

/// The class Xcode's "Category/Extension" code generation leaves to the developer: the plugin generates only its
/// properties and accessors (see Resources/Inventory.xcdatamodeld, entity Warehouse).
public final class Warehouse: NSManagedObject {
    var summary: String { "\(city): \(items?.count ?? 0) items" }
}

/// Code generation: the classes the CoreDataModelCodeGenerator plugin generated for this target from
/// Resources/Inventory.xcdatamodeld (Item and Dock: "Class Definition"; Warehouse: "Category/Extension"), used
/// with an in-memory store; and the generator's output for the settings Xcode honours.
@Suite struct CodeGenerationTests {
    @Test func generatedClassesInsertRelateAndFetch() throws {
        let context = try ModelLoadingBundleTests.inventoryContext()
        try context.performAndWait {
            let warehouse = Warehouse(context: context)
            warehouse.city = "Oslo"
            let bolt = Item(context: context)
            bolt.name = "bolt"
            bolt.quantity = 12
            bolt.price = NSDecimalNumber(string: "0.25")
            let nut = Item(context: context)
            nut.name = "nut"
            warehouse.addToItems(bolt)
            warehouse.addToItems(NSSet(array: [nut]))
            #expect(bolt.warehouse === warehouse, "the inverse follows")
            #expect(warehouse.summary == "Oslo: 2 items")

            let north = Dock(context: context)
            north.number = 1
            let south = Dock(context: context)
            south.number = NSNumber(value: 2)
            warehouse.addToDocks(north)
            warehouse.insertIntoDocks(south, at: 0)
            #expect((warehouse.docks?.array as? [Dock])?.compactMap(\.number?.intValue) == [2, 1])
            warehouse.removeFromDocks(at: 1)
            #expect(warehouse.docks?.count == 1)
            try context.save()

            let request: NSFetchRequest<Item> = Item.fetchRequest()
            request.predicate = NSPredicate(format: "warehouse.city == %@ AND quantity > %d", "Oslo", 10)
            let found = try context.fetch(request)
            #expect(found.map(\.name) == ["bolt"])
            #expect(found.first?.price == NSDecimalNumber(string: "0.25"))
            let warehouses = try context.fetch(Warehouse.fetchRequest() as NSFetchRequest<Warehouse>)
            #expect(warehouses.count == 1)
            #expect(type(of: warehouses[0]) == Warehouse.self)
            #expect(Item.entity().name == "Item")
            #expect(nut.quantity == 0, "the model's default, as a Swift scalar")
        }
    }

    static func model(_ body: String) throws -> XCDataModel {
        let xml = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" sourceLanguage="Swift">
            \(body)
            </model>
            """
        return try XCDataModel(data: Data(xml.utf8), name: "Test", url: URL(fileURLWithPath: "/Test.xcdatamodel"))
    }

    @Test func typesFollowOptionalityAndScalarSettings() throws {
        let model = try Self.model(
            """
            <entity name="Sample" representedClassName="Sample" codeGenerationType="class">
                <attribute name="count" attributeType="Integer 64" usesScalarValueType="YES"/>
                <attribute name="legacyCount" optional="YES" attributeType="Integer 64" usesScalarValueType="NO"/>
                <attribute name="ratio" optional="YES" attributeType="Double"/>
                <attribute name="flag" attributeType="Boolean" usesScalarValueType="YES"/>
                <attribute name="title" attributeType="String"/>
                <attribute name="subtitle" optional="YES" attributeType="String"/>
                <attribute name="price" optional="YES" attributeType="Decimal"/>
                <attribute name="photo" optional="YES" attributeType="Transformable" customClassName="UIKit.UIImage"/>
                <attribute name="blob" optional="YES" attributeType="Transformable"/>
                <attribute name="default" optional="YES" attributeType="URI"/>
                <relationship name="owner" maxCount="1" deletionRule="Nullify" destinationEntity="Owner"/>
                <relationship name="pages" optional="YES" toMany="YES" ordered="YES" deletionRule="Cascade" \
            destinationEntity="Owner"/>
            </entity>
            <entity name="Owner" representedClassName=".OwnerClass" codeGenerationType="category"/>
            <entity name="Hidden" representedClassName="Hidden"/>
            """)
        let source = model.swiftSource()
        for line in [
            "@Managed public var count: Int64", "@Managed public var legacyCount: NSNumber?",
            "@Managed public var ratio: Double", "@Managed public var flag: Bool",
            "@Managed public var title: String", "@Managed public var subtitle: String?",
            "@Managed public var price: NSDecimalNumber?", "@Managed public var photo: UIKit.UIImage?",
            "@Managed public var blob: NSObject?", "@Managed public var `default`: URL?",
            "@Managed public var owner: OwnerClass", "@Managed public var pages: NSOrderedSet?",
            "public class Sample: NSManagedObject {", "extension OwnerClass {",
            "@nonobjc public class func fetchRequest() -> NSFetchRequest<Sample> {",
            "return NSFetchRequest<Sample>(entityName: \"Sample\")",
            "@ManagedAccessor public func insertIntoPages(_ value: OwnerClass, at idx: Int)",
            "@ManagedAccessor public func removeFromPages(at indexes: NSIndexSet)",
            "@ManagedAccessor public func replacePages(at idx: Int, with value: OwnerClass)",
            "@ManagedAccessor public func addToPages(_ values: NSOrderedSet)",
            "extension Sample: Identifiable {",
        ] {
            #expect(source.contains(line), "\(line)")
        }
        #expect(!source.contains("class OwnerClass"), "a category's class is the developer's")
        #expect(!source.contains("Hidden"), "manual/none generates nothing")
        #expect(!source.contains("extension OwnerClass: Identifiable"))
    }

    @Test(arguments: ModelCorpus.modelVersions.map(ModelCorpus.relativePath))
    func everyCorpusModelGenerates(_ relativePath: String) throws {
        let model = try XCDataModel(contentsOf: ModelCorpus.root.appendingPathComponent(relativePath))
        let source = model.swiftSource()
        for entity in model.entities {
            let className = (entity.representedClassName ?? entity.name).trimmingCharacters(in: ["."])
            switch entity.codeGenerationType {
            case "class": #expect(source.contains("class \(className): "), "\(entity.name)")
            case "category": #expect(source.contains("extension \(className) {"), "\(entity.name)")
            default: #expect(!source.contains("NSFetchRequest<\(className)>"), "\(entity.name)")
            }
        }
    }

    @Test func subclassesInheritFromTheirParentsClass() throws {
        let model = try Self.model(
            """
            <entity name="Vehicle" representedClassName="Vehicle" isAbstract="YES" codeGenerationType="class">
                <attribute name="wheels" attributeType="Integer 16" defaultValueString="4" usesScalarValueType="YES"/>
            </entity>
            <entity name="Car" representedClassName="Car" parentEntity="Vehicle" codeGenerationType="class">
                <attribute name="plate" optional="YES" attributeType="String"/>
            </entity>
            """)
        let source = model.swiftSource(options: .init(importedModule: "OpenCoreDataShim", accessLevel: "internal"))
        #expect(source.contains("import OpenCoreDataShim"))
        #expect(source.contains("class Car: Vehicle {"))
        #expect(source.contains("class Vehicle: NSManagedObject {"))
        #expect(!source.contains("public "))
        #expect(source.contains("extension Vehicle: Identifiable"))
        #expect(!source.contains("extension Car: Identifiable"), "inherited from Vehicle")
        #expect(source.contains("@Managed var plate: String?"))
        #expect(!source.contains("@Managed var wheels: Int16\n    @Managed var plate"), "each class declares its own")
    }
}
#endif
