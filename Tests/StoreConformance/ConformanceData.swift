import Foundation
import OpenCoreData
import Testing

/// The objects most cases start from: a small company (departments, people, employees, projects) and a few items
/// with values of every attribute type, some of them nil.
public enum ConformanceData {
    /// A date the items' dates are counted from.
    public static let epoch = Date(timeIntervalSinceReferenceDate: 700_000_000.25)
    public static let uuids = (0..<5).map { UUID(uuidString: "00000000-0000-4000-8000-00000000000\($0)")! }

    /// Inserts the company and the items into `context` (and saves them).
    public static func populate(_ context: NSManagedObjectContext) throws {
        try context.run {
            let research = context.make("Department", ["name": "R&D", "budget": NSDecimalNumber(string: "5000.5")])
            let sales = context.make("Department", ["name": "Sales", "budget": NSDecimalNumber(value: 800)])
            context.make("Department", ["name": "Empty"])
            let paula = context.make("Person", ["name": "Paula", "age": 51, "nickname": "P"])
            let quinn = context.make("Person", ["name": "Quinn", "age": 19])
            func employee(_ name: String, _ age: Int, _ salary: Double, _ department: NSManagedObject?)
                -> NSManagedObject
            {
                context.make("Employee", ["name": name, "age": age, "salary": salary, "department": department])
            }
            let ann = employee("Ann", 34, 120.5, research)
            let bob = employee("Bob", 28, 80, research)
            let cid = employee("Cid", 45, 95.25, sales)
            _ = employee("Dee", 23, 40, nil)
            _ = employee("Émile", 38, 60, sales)
            ann.setValue("Annie", forKey: "nickname")
            research.setValue(ann, forKey: "head")
            sales.setValue(cid, forKey: "head")
            let apollo = context.make("Project", ["title": "Apollo"])
            let artemis = context.make("Project", ["title": "Artemis"])
            let borealis = context.make("Project", ["title": "Borealis"])
            context.make("Project", ["title": "Zephyr"])
            research.setValue(NSOrderedSet(array: [artemis, apollo]), forKey: "projects")
            sales.setValue(NSOrderedSet(array: [borealis]), forKey: "projects")
            apollo.setValue(Set([ann, bob, paula]), forKey: "members")
            artemis.setValue(Set([ann]), forKey: "members")
            borealis.setValue(Set([cid, quinn]), forKey: "members")

            context.make(
                "Item",
                [
                    "int16": 3, "int32": -5, "int64": 42, "decimal": NSDecimalNumber(string: "10.5"), "double": 1.25,
                    "float": 0.5, "string": "alpha", "bool": true, "date": epoch, "data": Data([1, 2]),
                    "uuid": uuids[1], "uri": URL(string: "https://a.example/x")!, "transformable": ["x"],
                ])
            context.make(
                "Item",
                [
                    "int16": 9, "int32": 0, "int64": 7, "decimal": NSDecimalNumber(value: 250), "double": 3.5,
                    "float": 2.5, "string": "Beta", "bool": false, "date": epoch.addingTimeInterval(86_400),
                    "data": Data([3]), "uuid": uuids[2], "uri": URL(string: "https://b.example/")!,
                    "transformable": ["y", "z"],
                ])
            context.make(
                "Item",
                [
                    "int16": 6, "int32": 100, "int64": 42, "decimal": NSDecimalNumber(string: "100.25"), "double": 2,
                    "float": 1.5, "string": "zoë", "bool": true, "date": epoch.addingTimeInterval(-3_600),
                    "data": Data([1, 2, 3]), "uuid": uuids[3], "uri": URL(string: "https://a.example/y")!,
                ])
            context.make("Item", [:])
            context.make(
                "Item", ["int16": -2, "int64": -9, "string": "Ålpha", "double": -0.5, "bool": false, "counter": 3])
            try context.save()
        }
    }

    /// The one object of `entityName` whose `key` is `value`.
    public static func one(
        _ context: NSManagedObjectContext, _ entityName: String, _ key: String = "name", _ value: Any
    ) throws -> NSManagedObject {
        let found = try context.objects(entityName, "%K == %@", [key, value])
        try #require(found.count == 1, "expected one \(entityName) whose \(key) is \(value), found \(found.count)")
        return found[0]
    }

    /// The names of `objects` (or another key's values), sorted.
    public static func names(_ objects: Any?, key: String = "name") -> [String] {
        let elements: [Any]
        switch objects {
        case let set as Set<NSManagedObject>: elements = Array(set)
        case let ordered as NSOrderedSet: return ordered.array.map { "\(($0 as! NSManagedObject).value(forKey: key)!)" }
        case let array as [NSManagedObject]: elements = array
        default: elements = []
        }
        return elements.map { "\(($0 as! NSManagedObject).value(forKey: key) ?? "nil")" }.sorted()
    }
}
