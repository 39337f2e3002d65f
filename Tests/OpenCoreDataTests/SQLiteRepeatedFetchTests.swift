import Foundation
import OpenCoreDataShim
import Testing

/// Fetches that differ only in their values, one after another on one store — what an app does all day — each find
/// the rows of their own values: a request never answers with what an earlier request of the same form asked for.
@Suite struct SQLiteRepeatedFetchTests {
    /// A store of twenty items: `int64` 0…19, `name` "item 0"…, `double` int64 / 4, `date` int64 × 1000 seconds after
    /// 2001, `bool` for even numbers; item 7 has no int64 and no name.
    static func store(_ directory: SQLiteTestDirectory) throws -> NSManagedObjectContext {
        let coordinator = try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: directory.store())
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            for number in 0..<20 {
                let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
                if number != 7 {
                    item.setValue(Int64(number), forKey: "int64")
                    item.setValue("item \(number)", forKey: "name")
                }
                item.setValue(Double(number) / 4, forKey: "double")
                item.setValue(Date(timeIntervalSinceReferenceDate: Double(number) * 1000), forKey: "date")
                item.setValue(number % 2 == 0, forKey: "bool")
            }
            try context.save()
            context.reset()
        }
        return context
    }

    /// The `double` values (× 4, so the item numbers) of the items `format` selects, in the order fetched.
    static func numbers(
        _ context: NSManagedObjectContext, _ format: String, _ arguments: [Any], limit: Int = 0, offset: Int = 0,
        ascending: Bool = true
    ) throws -> [Int] {
        try context.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
            request.predicate = NSPredicate(format: format, argumentArray: arguments)
            request.sortDescriptors = [NSSortDescriptor(key: "double", ascending: ascending)]
            request.fetchLimit = limit
            request.fetchOffset = offset
            return try context.fetch(request).map { Int((($0.value(forKey: "double") as? Double) ?? -1) * 4) }
        }
    }

    @Test func eachValueFindsItsOwnRows() throws {
        let directory = SQLiteTestDirectory()
        let context = try Self.store(directory)
        for number in [3, 11, 3, 19, 0] {
            #expect(try Self.numbers(context, "int64 == %lld", [Int64(number)]) == [number])
        }
        #expect(try Self.numbers(context, "int64 == %lld", [Int64(42)]) == [])
        for name in ["item 4", "item 12", "item 4"] {
            #expect(try Self.numbers(context, "name == %@", [name]) == [Int(name.dropFirst(5))!])
        }
        #expect(try Self.numbers(context, "int64 >= %lld AND int64 < %lld", [Int64(5), Int64(9)]) == [5, 6, 8])
        #expect(try Self.numbers(context, "int64 >= %lld AND int64 < %lld", [Int64(17), Int64(30)]) == [17, 18, 19])
        #expect(try Self.numbers(context, "int64 < %lld OR name == %@", [Int64(2), "item 9"]) == [0, 1, 9])
        #expect(try Self.numbers(context, "int64 < %lld OR name == %@", [Int64(1), "item 15"]) == [0, 15])
        #expect(try Self.numbers(context, "NOT (double > %@)", [NSNumber(value: 0.5)]) == [0, 1, 2])
        #expect(try Self.numbers(context, "NOT (double > %@)", [NSNumber(value: 0)]) == [0])
    }

    @Test func valuesOfOtherKindsInTheSameFormMatchAsTheyWouldAlone() throws {
        let directory = SQLiteTestDirectory()
        let context = try Self.store(directory)
        #expect(try Self.numbers(context, "int64 == %@", [NSNumber(value: 4)]) == [4])
        // nil matches the item without a value.
        #expect(try Self.numbers(context, "int64 == %@", [NSNull()]) == [7])
        #expect(try Self.numbers(context, "int64 != %@", [NSNull()]).count == 19)
        #expect(try Self.numbers(context, "int64 == %@", [NSNumber(value: 5)]) == [5])
        // A double against integers, then an integer against doubles.
        #expect(try Self.numbers(context, "int64 < %@", [NSNumber(value: 2.5)]) == [0, 1, 2])
        #expect(try Self.numbers(context, "int64 < %@", [NSNumber(value: 2)]) == [0, 1])
        #expect(try Self.numbers(context, "double > %@", [NSNumber(value: 4)]) == [17, 18, 19])
        #expect(try Self.numbers(context, "double > %@", [NSNumber(value: 4.5)]) == [19])
        #expect(try Self.numbers(context, "bool == %@", [NSNumber(value: true)]).count == 10)
        #expect(try Self.numbers(context, "bool == %@", [NSNumber(value: false)]).first == 1)
        let date = Date(timeIntervalSinceReferenceDate: 16500)
        #expect(try Self.numbers(context, "date > %@", [date]) == [17, 18, 19])
        #expect(try Self.numbers(context, "date > %@", [date.addingTimeInterval(2000)]) == [19])
    }

    @Test func limitsOffsetsAndOrderOfOneFormApplyTheirOwn() throws {
        let directory = SQLiteTestDirectory()
        let context = try Self.store(directory)
        let format = "int64 >= %lld"
        #expect(try Self.numbers(context, format, [Int64(10)], limit: 2) == [10, 11])
        #expect(try Self.numbers(context, format, [Int64(10)], limit: 3, offset: 4) == [14, 15, 16])
        #expect(try Self.numbers(context, format, [Int64(12)], offset: 5) == [17, 18, 19])
        #expect(try Self.numbers(context, format, [Int64(12)]) == Array(12...19))
        #expect(try Self.numbers(context, format, [Int64(12)], limit: 2, ascending: false) == [19, 18])
        #expect(try Self.numbers(context, format, [Int64(15)], ascending: false) == [19, 18, 17, 16, 15])
    }

    /// A limited fetch that stops before its rows run out leaves nothing open behind it: the context's next fetch
    /// sees what another coordinator saved to the file since.
    @Test func aLimitedFetchLeavesTheStoreFreeForTheNextFetchToSeeNewRows() throws {
        let directory = SQLiteTestDirectory()
        let context = try Self.store(directory)
        #expect(try Self.numbers(context, "int64 >= %lld", [Int64(0)], limit: 1) == [0])
        #expect(try Self.numbers(context, "name BEGINSWITH %@", ["item"], limit: 2) == [0, 1])
        let other = SQLiteStack.context(try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: directory.store()))
        try other.performAndWait {
            let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: other)
            item.setValue(Int64(20), forKey: "int64")
            item.setValue("item 20", forKey: "name")
            item.setValue(5.0, forKey: "double")
            try other.save()
        }
        let count = try context.performAndWait {
            try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Item"))
        }
        #expect(count == 21)
        #expect(try Self.numbers(context, "int64 >= %lld", [Int64(19)]) == [19, 20])
    }

    @Test func countsOfOneFormCountTheirOwnRows() throws {
        let directory = SQLiteTestDirectory()
        let context = try Self.store(directory)
        for (limit, expected) in [(Int64(5), 5), (Int64(12), 11), (Int64(1), 1), (Int64(0), 0)] {
            let count = try context.performAndWait {
                let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
                request.predicate = NSPredicate(format: "int64 < %lld", limit)
                return try context.count(for: request)
            }
            #expect(count == expected)
        }
    }

    /// The item numbers of an unsorted fetch of `entityName` (items' `double` × 4, owners' names after "owner "),
    /// sorted here.
    static func unsorted(
        _ context: NSManagedObjectContext, _ entityName: String, _ format: String, _ arguments: [Any], limit: Int = 0
    ) throws -> [Int] {
        try context.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: entityName)
            request.predicate = NSPredicate(format: format, argumentArray: arguments)
            request.fetchLimit = limit
            return try context.fetch(request).map { object -> Int in
                guard entityName == "Owner" else { return Int(((object.value(forKey: "double") as? Double) ?? -1) * 4) }
                return Int((object.value(forKey: "name") as? String)?.dropFirst(6) ?? "") ?? -1
            }.sorted()
        }
    }

    /// Unsorted fetches whose predicates come from one format string, one after another, as lookups by an attribute
    /// are written: each binds its own values, whatever kind of value, entity, limit or result type came before.
    @Test func unsortedFetchesOfOneFormatFindTheirOwnRows() throws {
        let directory = SQLiteTestDirectory()
        let context = try Self.store(directory)
        try context.performAndWait {
            for number in 0..<3 {
                let owner = NSEntityDescription.insertNewObject(forEntityName: "Owner", into: context)
                owner.setValue("owner \(number)", forKey: "name")
            }
            try context.save()
        }
        for number in [3, 11, 3, 19, 0, 12] {
            #expect(try Self.unsorted(context, "Item", "int64 == %lld", [Int64(number)]) == [number])
        }
        #expect(try Self.unsorted(context, "Item", "int64 == %lld", [Int64(42)]) == [])
        for number in [4, 12, 4, 18] {
            #expect(try Self.unsorted(context, "Item", "name == %@", ["item \(number)"]) == [number])
        }
        // No value: the item without a name, then a name again.
        #expect(try Self.unsorted(context, "Item", "name == %@", [NSNull()]) == [7])
        #expect(try Self.unsorted(context, "Item", "name == %@", ["item 9"]) == [9])
        // The same format on another entity, then on the first again.
        #expect(try Self.unsorted(context, "Owner", "name == %@", ["owner 1"]) == [1])
        #expect(try Self.unsorted(context, "Owner", "name == %@", ["owner 2"]) == [2])
        #expect(try Self.unsorted(context, "Item", "name == %@", ["item 5"]) == [5])
        // A double where integers were compared, and an integer again.
        #expect(try Self.unsorted(context, "Item", "int64 < %@", [NSNumber(value: 2)]) == [0, 1])
        #expect(try Self.unsorted(context, "Item", "int64 < %@", [NSNumber(value: 3)]) == [0, 1, 2])
        #expect(try Self.unsorted(context, "Item", "int64 < %@", [NSNumber(value: 2.5)]) == [0, 1, 2])
        #expect(try Self.unsorted(context, "Item", "int64 < %@", [NSNumber(value: 1)]) == [0])
        // A compound of one format, limited and not.
        let range = "int64 >= %lld AND int64 < %lld OR name == %@"
        for (low, high, name, expected) in [(5, 9, "item 1", [1, 5, 6, 8]), (17, 30, "item 2", [2, 17, 18, 19])] {
            #expect(try Self.unsorted(context, "Item", range, [Int64(low), Int64(high), name]) == expected)
        }
        #expect(try Self.unsorted(context, "Item", range, [Int64(10), Int64(20), "none"], limit: 3).count == 3)
        #expect(try Self.unsorted(context, "Item", range, [Int64(0), Int64(2), "item 3"]) == [0, 1, 3])
        // Counts and IDs of the same format.
        for (limit, expected) in [(Int64(5), 5), (Int64(12), 11), (Int64(1), 1)] {
            let (count, ids) = try context.performAndWait {
                let counted = NSFetchRequest<NSManagedObject>(entityName: "Item")
                counted.predicate = NSPredicate(format: "int64 < %lld", limit)
                let identified = NSFetchRequest<NSManagedObjectID>(entityName: "Item")
                identified.resultType = .managedObjectIDResultType
                identified.predicate = NSPredicate(format: "int64 < %lld", limit)
                return (try context.count(for: counted), try context.fetch(identified))
            }
            #expect(count == expected)
            #expect(ids.count == expected)
        }
    }
}
