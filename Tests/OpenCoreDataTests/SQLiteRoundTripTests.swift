import Foundation
import OpenCoreDataShim
import Testing

/// Saving to a SQLite store, closing it, and reading everything back through a new coordinator.
@Suite struct SQLiteRoundTripTests {
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
        #expect(rows == [[
            .integer(1), .real(123_456.789), .integer(Int64.max), .text("Zoë ☃"), .text("blob"), .integer(16),
            .text("https://example.com/a?b=c"), .integer(1), .integer(4),
        ]])
    }
}
