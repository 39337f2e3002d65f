import Foundation
import OpenCoreData
import Testing

extension StoreConformanceCase {
    static let attributes: [StoreConformanceCase] = [
        StoreConformanceCase("Values of every attribute type come back as they were saved") { fixture in
            let stack = try ConformanceStack(fixture)
            let samples: [[String: Any]] = [
                [
                    "int16": Int16.max, "int32": Int32.min, "int64": Int64.max,
                    "decimal": NSDecimalNumber(string: "1234.5"), "double": Double.pi, "float": Float(1.5),
                    "string": "Zoë 🚀 — \"quoted\"\n'line'", "bool": true,
                    "date": Date(timeIntervalSinceReferenceDate: 123_456.789), "data": Data([0, 1, 2, 254, 255]),
                    "uuid": ConformanceData.uuids[4], "uri": URL(string: "https://example.com/a%20b?c=d#e")!,
                    "transformable": ["one", "two"], "counter": Int16(-3),
                ],
                [
                    "int16": Int16.min, "int32": Int32.max, "int64": Int64.min, "decimal": NSDecimalNumber(value: -7),
                    "double": -1e300, "float": Float(-0.25), "string": "", "bool": false,
                    "date": Date(timeIntervalSinceReferenceDate: -1_000_000.5), "data": Data(repeating: 7, count: 4096),
                    "uuid": UUID(uuidString: "FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF")!,
                    "uri": URL(fileURLWithPath: "/tmp/some file"), "transformable": [String](),
                ],
            ]
            var ids: [NSManagedObjectID] = []
            let writer = stack.newContext()
            try writer.run {
                for sample in samples {
                    let item = writer.make("Item", sample)
                    item.setValue("not saved", forKey: "scratch")
                }
                let empty = writer.make("Item")
                #expect((empty.value(forKey: "counter") as? NSNumber)?.intValue == 7)
                try writer.save()
                ids = try writer.objects("Item", sortedBy: ["int16"]).map(\.objectID)
            }
            func check(_ context: NSManagedObjectContext) throws {
                try context.run {
                    // Sorted by int16: Int16.min, Int16.max, then the empty item (nil sorts first).
                    let items = try context.objects("Item", "int16 != nil", sortedBy: ["int16"])
                    try #require(items.count == 2)
                    for (item, sample) in zip(items, [samples[1], samples[0]]) {
                        for (key, expected) in sample {
                            let actual = item.value(forKey: key)
                            #expect(
                                ConformanceValues.same(actual, expected),
                                "\(key): \(String(describing: actual)) is not \(expected)")
                        }
                        #expect(item.value(forKey: "scratch") == nil)
                    }
                    let empty = try context.objects("Item", "int16 == nil")
                    try #require(empty.count == 1)
                    for (name, _) in ConformanceModel.itemAttributes {
                        #expect(empty[0].value(forKey: name) == nil, "\(name) of an item saved without it")
                    }
                    #expect((empty[0].value(forKey: "counter") as? NSNumber)?.intValue == 7)
                    for id in ids {
                        let object = try context.existingObject(with: id)
                        #expect(object.entity.name == "Item")
                    }
                }
            }
            try check(stack.newContext())
            if fixture.persists { try check(.conformance(try stack.reopen())) }
        },
        StoreConformanceCase("Changed values replace the saved ones, and nil clears them") { fixture in
            let stack = try ConformanceStack(fixture)
            let context = stack.newContext()
            try context.run {
                let item = context.make("Item", ["string": "before", "int64": 1, "date": ConformanceData.epoch])
                try context.save()
                item.setValue("after", forKey: "string")
                item.setValue(nil, forKey: "date")
                item.setValue(2, forKey: "int64")
                try context.save()
            }
            let reader = stack.newContext()
            try reader.run {
                let item = try #require(try reader.objects("Item").first)
                #expect(item.value(forKey: "string") as? String == "after")
                #expect(item.value(forKey: "date") == nil)
                #expect((item.value(forKey: "int64") as? NSNumber)?.int64Value == 2)
            }
        },
    ]
}

/// Comparing the values key-value coding returns with the values that were set.
public enum ConformanceValues {
    /// Whether `actual` is `expected`: numbers by value (as `NSNumber`), decimals as decimals, the rest by equality.
    public static func same(_ actual: Any?, _ expected: Any?) -> Bool {
        switch (actual, expected) {
        case (nil, nil): return true
        case (nil, _), (_, nil): return false
        case (let a as NSDecimalNumber, let b as NSDecimalNumber): return a.compare(b) == .orderedSame
        case (let a as NSNumber, let b as Float): return a.floatValue == b
        case (let a as NSNumber, let b as Double): return a.doubleValue == b
        case (let a as NSNumber, let b as Bool): return a.boolValue == b
        case (let a as NSNumber, let b as Int16): return a.int64Value == Int64(b)
        case (let a as NSNumber, let b as Int32): return a.int64Value == Int64(b)
        case (let a as NSNumber, let b as Int64): return a.int64Value == b
        case (let a as NSNumber, let b as Int): return a.int64Value == Int64(b)
        case (let a as String, let b as String): return a == b
        case (let a as Date, let b as Date): return a == b
        case (let a as Data, let b as Data): return a == b
        case (let a as UUID, let b as UUID): return a == b
        case (let a as URL, let b as URL): return a == b
        case (let a as [String], let b as [String]): return a == b
        case (let a as NSObject, let b as NSObject): return a.isEqual(b)
        default: return false
        }
    }
}
