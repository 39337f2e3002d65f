import Foundation
import OpenCoreDataShim
import Testing

/// Saving to a SQLite store, closing it, and reading everything back through a new coordinator.
@Suite struct SQLiteRoundTripTests {
    /// The rows of one save get their keys in the order the objects were inserted, so that objects made together
    /// lie together in the file (a hash-ordered save scatters them, and a later pass over them touches every page).
    /// Apple documents no key order; this pins OpenCoreData's layout, which the benchmarks' update and walk rely on.
    @Test func rowsOfOneSaveAreKeyedInInsertionOrder() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let coordinator = try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: url)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            for number in 0..<500 {
                let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
                item.setValue(Int64(number), forKey: "int64")
            }
            try context.save()
        }
        try SQLiteStack.close(coordinator)
        let numbers = try RawSQLite.query(url, "SELECT ZINT64 FROM ZITEM ORDER BY Z_PK")
        #expect(numbers == (0..<500).map { [RawSQLite.Value.integer(Int64($0))] })
    }

    /// Insertion order holds when other contexts insert objects in between, whether a few (the numbers that order
    /// the save stay close) or many (they spread far apart).
    @Test(arguments: [3, 400])
    func rowsOfOneSaveAreKeyedInInsertionOrderAmidOtherContextsInserts(between: Int) throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let coordinator = try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: url)
        let context = SQLiteStack.context(coordinator)
        let other = SQLiteStack.context(coordinator)
        for number in 0..<60 {
            context.performAndWait {
                let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
                item.setValue(Int64(number), forKey: "int64")
            }
            if number % 20 == 19 {
                other.performAndWait {
                    for _ in 0..<between { _ = NSEntityDescription.insertNewObject(forEntityName: "Item", into: other) }
                }
            }
        }
        try context.performAndWait { try context.save() }
        try SQLiteStack.close(coordinator)
        let numbers = try RawSQLite.query(url, "SELECT ZINT64 FROM ZITEM ORDER BY Z_PK")
        #expect(numbers == (0..<60).map { [RawSQLite.Value.integer(Int64($0))] })
    }

    @Test func everyAttributeTypeSurvivesReopening() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let uuid = UUID()
        let date = Date(timeIntervalSinceReferenceDate: 123_456.789)
        let data = Data([0, 1, 2, 255])
        do {
            let coordinator = try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: url)
            let context = SQLiteStack.context(coordinator)
            try context.performAndWait {
                let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
                item.setValue(true, forKey: "bool")
                item.setValue(data, forKey: "data")
                item.setValue(date, forKey: "date")
                item.setValue(Decimal(string: "12.345"), forKey: "decimal")
                item.setValue(3.25, forKey: "double")
                item.setValue(Float(1.5), forKey: "float")
                item.setValue(Int16(-7), forKey: "int16")
                item.setValue(Int32(70_000), forKey: "int32")
                item.setValue(Int64.max, forKey: "int64")
                item.setValue("Zoë ☃", forKey: "name")
                item.setValue(["a", "b"] as NSArray, forKey: "plist")
                item.setValue("not saved", forKey: "transient")
                item.setValue(URL(string: "https://example.com/a?b=c")!, forKey: "uri")
                item.setValue(uuid, forKey: "uuid")
                try context.save()
            }
            try SQLiteStack.close(coordinator)
        }
        let coordinator = try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: url)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            let items = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item"))
            #expect(items.count == 1)
            let item = try #require(items.first)
            #expect(item.value(forKey: "bool") as? Bool == true)
            #expect(item.value(forKey: "data") as? Data == data)
            #expect(item.value(forKey: "date") as? Date == date)
            #expect((item.value(forKey: "decimal") as? NSDecimalNumber)?.decimalValue == Decimal(string: "12.345"))
            #expect(item.value(forKey: "double") as? Double == 3.25)
            #expect(item.value(forKey: "float") as? Float == 1.5)
            #expect(item.value(forKey: "int16") as? Int16 == -7)
            #expect(item.value(forKey: "int32") as? Int32 == 70_000)
            #expect(item.value(forKey: "int64") as? Int64 == Int64.max)
            #expect(item.value(forKey: "name") as? String == "Zoë ☃")
            #expect((item.value(forKey: "plist") as? NSArray)?.map { $0 as? String } == ["a", "b"])
            #expect(item.value(forKey: "transient") == nil)
            #expect(item.value(forKey: "uri") as? URL == URL(string: "https://example.com/a?b=c"))
            #expect(item.value(forKey: "uuid") as? UUID == uuid)
        }
        let rows = try RawSQLite.query(
            url, "SELECT ZBOOL, ZDATE, ZINT64, ZNAME, typeof(ZUUID), length(ZUUID), ZURI, Z_OPT, Z_ENT FROM ZITEM")
        #expect(
            rows == [
                [
                    .integer(1), .real(123_456.789), .integer(Int64.max), .text("Zoë ☃"), .text("blob"), .integer(16),
                    .text("https://example.com/a?b=c"), .integer(1), .integer(4),
                ]
            ])
    }

    @Test func everyRelationshipKindSurvivesReopening() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        do {
            let coordinator = try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: url)
            let context = SQLiteStack.context(coordinator)
            try context.performAndWait {
                func insert(_ entity: String, _ values: [String: Any]) -> NSManagedObject {
                    let object = NSEntityDescription.insertNewObject(forEntityName: entity, into: context)
                    for (key, value) in values { object.setValue(value, forKey: key) }
                    return object
                }
                let ada = insert("Owner", ["name": "Ada"])
                _ = insert("Profile", ["bio": "counts", "owner": ada])
                let rex = insert("Dog", ["name": "Rex", "breed": "collie"])
                let red = insert("Tag", ["label": "red"])
                let blue = insert("Tag", ["label": "blue"])
                let list = insert("List", ["title": "chores"])
                let items = (1...4).map { insert("Item", ["name": "item \($0)", "owner": ada]) }
                items[0].setValue(rex, forKey: "pet")
                items[0].setValue(Set([red, blue]), forKey: "tags")
                items[1].setValue(Set([red]), forKey: "tags")
                // Ordered, and not in insertion order.
                list.setValue(NSOrderedSet(array: [items[2], items[0], items[3]]), forKey: "entries")
                list.setValue(NSOrderedSet(array: [items[3], items[1]]), forKey: "favorites")
                try context.save()
            }
            try SQLiteStack.close(coordinator)
        }
        let coordinator = try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: url)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            func one(_ entity: String, _ format: String, _ arguments: Any...) throws -> NSManagedObject {
                let request = NSFetchRequest<NSManagedObject>(entityName: entity)
                request.predicate = NSPredicate(format: format, argumentArray: arguments)
                let found = try context.fetch(request)
                try #require(found.count == 1)
                return found[0]
            }
            let ada = try one("Owner", "name == %@", "Ada")
            #expect((ada.value(forKey: "profile") as? NSManagedObject)?.value(forKey: "bio") as? String == "counts")
            let adaItems = try #require(ada.value(forKey: "items") as? Set<NSManagedObject>)
            #expect(
                Set(adaItems.compactMap { $0.value(forKey: "name") as? String }) == [
                    "item 1", "item 2", "item 3", "item 4",
                ])
            let first = try one("Item", "name == %@", "item 1")
            let pet = try #require(first.value(forKey: "pet") as? NSManagedObject)
            #expect(pet.entity.name == "Dog")
            #expect(pet.value(forKey: "breed") as? String == "collie")
            let tags = try #require(first.value(forKey: "tags") as? Set<NSManagedObject>)
            #expect(Set(tags.compactMap { $0.value(forKey: "label") as? String }) == ["red", "blue"])
            let red = try one("Tag", "label == %@", "red")
            let tagged = try #require(red.value(forKey: "items") as? Set<NSManagedObject>)
            #expect(Set(tagged.compactMap { $0.value(forKey: "name") as? String }) == ["item 1", "item 2"])
            let list = try one("List", "title == %@", "chores")
            let entries = try #require(list.value(forKey: "entries") as? NSOrderedSet)
            #expect(
                entries.array.compactMap { ($0 as? NSManagedObject)?.value(forKey: "name") as? String } == [
                    "item 3", "item 1", "item 4",
                ])
            let favorites = try #require(list.value(forKey: "favorites") as? NSOrderedSet)
            #expect(
                favorites.array.compactMap { ($0 as? NSManagedObject)?.value(forKey: "name") as? String } == [
                    "item 4", "item 2",
                ])
            let fourth = try one("Item", "name == %@", "item 4")
            #expect((fourth.value(forKey: "list") as? NSManagedObject)?.value(forKey: "title") as? String == "chores")
            let favoritedBy = try #require(fourth.value(forKey: "favoritedBy") as? Set<NSManagedObject>)
            #expect(favoritedBy.count == 1)
        }
        // Apple's layout: many-to-many rows in Z_<n><REL> tables, ordered positions in Z_FOK_ columns, the
        // destination entity of a to-one into a hierarchy in Z<n>_<REL>.
        let tables = Set(
            try RawSQLite.query(url, "SELECT name FROM sqlite_master WHERE type = 'table'").compactMap {
                $0[0].text
            })
        #expect(tables.isSuperset(of: ["Z_4TAGS", "Z_5FAVORITES", "ZITEM", "ZANIMAL", "Z_PRIMARYKEY", "Z_METADATA"]))
        let itemColumns = try RawSQLite.query(url, "PRAGMA table_info(ZITEM)").compactMap { $0[1].text }
        #expect(itemColumns.contains("Z1_PET"))
        #expect(itemColumns.contains("Z_FOK_LIST"))
        let favorites = try RawSQLite.query(
            url, "SELECT Z_FOK_4FAVORITES FROM Z_5FAVORITES ORDER BY Z_FOK_4FAVORITES")
        #expect(favorites == [[.integer(1)], [.integer(2)]])
    }

    /// Many rows of text and blobs of every size in one save, then changed to other sizes: each row's values are
    /// written as they were (the insert and update statements are reused from row to row, so nothing of an earlier
    /// row may leak into a later one), and a fetch whose predicate binds text finds each row.
    @Test func textAndBlobsOfEverySizeSurviveReuseFromRowToRow() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let lengths = [0, 1, 5, 31, 32, 33, 200, 4_095, 4_096, 4_097, 10_000, 3, 0, 64]
        func name(_ row: Int, _ length: Int) -> String {
            // Multi-byte characters too: their UTF-8 bytes, not their count, are what is written.
            String(
                (0..<length).map { index in index % 7 == 6 ? "é" : Character(UnicodeScalar(97 + (row + index) % 26)!) })
        }
        func data(_ row: Int, _ length: Int) -> Data {
            Data((0..<length).map { UInt8(truncatingIfNeeded: row * 31 + $0) })
        }
        let coordinator = try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: url)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            for (row, length) in lengths.enumerated() {
                let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
                item.setValue(Int64(row), forKey: "int64")
                item.setValue(name(row, length), forKey: "name")
                item.setValue(data(row, length), forKey: "data")
            }
            try context.save()
            let items = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item"))
            for item in items {
                let row = Int(item.value(forKey: "int64") as! Int64)
                let length = lengths[lengths.count - 1 - row]
                item.setValue(name(row + 100, length), forKey: "name")
                item.setValue(data(row + 100, length), forKey: "data")
            }
            try context.save()
        }
        try SQLiteStack.close(coordinator)

        let rows = try RawSQLite.query(url, "SELECT ZNAME, ZDATA FROM ZITEM ORDER BY ZINT64")
        #expect(rows.count == lengths.count)
        for (row, values) in rows.enumerated() {
            let length = lengths[lengths.count - 1 - row]
            #expect(values.first == .text(name(row + 100, length)), "name of row \(row)")
            // An empty blob may be stored as an empty blob or as NULL; a non-empty one byte for byte.
            if length > 0 { #expect(values.last == .blob(Array(data(row + 100, length))), "data of row \(row)") }
        }
        let reopened = try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: url)
        let reader = SQLiteStack.context(reopened)
        try reader.performAndWait {
            for (row, length) in lengths.reversed().enumerated() where length > 0 {
                let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
                request.predicate = NSPredicate(format: "name == %@", name(row + 100, length))
                let found = try reader.fetch(request)
                #expect(found.map { $0.value(forKey: "int64") as? Int64 } == [Int64(row)], "row \(row)")
                #expect(found.first?.value(forKey: "data") as? Data == data(row + 100, length))
            }
        }
    }

    @Test func updatesAndDeletesAreSavedAndVersioned() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let coordinator = try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: url)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            let owner = NSEntityDescription.insertNewObject(forEntityName: "Owner", into: context)
            owner.setValue("Ada", forKey: "name")
            let doomed = NSEntityDescription.insertNewObject(forEntityName: "Owner", into: context)
            doomed.setValue("Bob", forKey: "name")
            try context.save()
            owner.setValue("Ada Lovelace", forKey: "name")
            context.delete(doomed)
            try context.save()
        }
        #expect(try RawSQLite.query(url, "SELECT ZNAME, Z_OPT FROM ZOWNER") == [[.text("Ada Lovelace"), .integer(2)]])
        #expect(try RawSQLite.query(url, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Owner'") == [[.integer(2)]])
    }
}
