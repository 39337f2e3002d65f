import Foundation
import OpenCoreDataShim
import Testing

/// Values at the edges of their types either come back from a SQLite store exactly as saved or are refused when
/// saved — never saved and read back as something else — and strings containing NUL answer every string operator in
/// SQL as the in-memory evaluator answers it.
@Suite struct SQLiteEdgeValueTests {
    /// One attribute value of an `Item`.
    struct Case: @unchecked Sendable, CustomTestStringConvertible {
        let key: String
        let value: Any
        let testDescription: String

        init(_ key: String, _ value: Any, _ description: String) {
            self.key = key
            self.value = value
            testDescription = "\(key) = \(description)"
        }
    }

    static let sixteenMegabytes = 16 << 20

    /// Every byte value, in an order that repeats only every 64 KB.
    static var sixteenMegabytesOfBytes: Data {
        var data = Data(capacity: sixteenMegabytes)
        let block = Data((0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) })
        for _ in 0..<(sixteenMegabytes / block.count) { data.append(block) }
        return data
    }

    static let exactCases: [Case] = [
        Case("int16", Int16.min, "Int16.min"), Case("int16", Int16.max, "Int16.max"),
        Case("int32", Int32.min, "Int32.min"), Case("int32", Int32.max, "Int32.max"),
        Case("int64", Int64.min, "Int64.min"), Case("int64", Int64.max, "Int64.max"),
        Case("double", Double.infinity, "+infinity"), Case("double", -Double.infinity, "-infinity"),
        Case("double", Double.greatestFiniteMagnitude, "greatest"),
        Case("double", -Double.greatestFiniteMagnitude, "least"),
        Case("double", Double.leastNonzeroMagnitude, "least nonzero"),
        Case("float", Float.infinity, "+infinity"), Case("float", -Float.infinity, "-infinity"),
        Case("float", Float.greatestFiniteMagnitude, "greatest"),
        Case("float", Float.leastNonzeroMagnitude, "least nonzero"),
        Case("decimal", Decimal(string: "0.1")!, "0.1"),
        Case("decimal", Decimal(string: "-12345678901234.5")!, "15 digits"),
        Case("decimal", Decimal(Int64.max), "Int64.max"), Case("decimal", Decimal(Int64.min), "Int64.min"),
        Case("decimal", Decimal(string: "1e100")!, "1e100"),
        Case("decimal", Decimal.leastNonzeroMagnitude, "least nonzero"),
        Case("date", Date.distantPast, "distantPast"), Case("date", Date.distantFuture, "distantFuture"),
        Case("date", Date(timeIntervalSinceReferenceDate: -1e15), "31 million years before 2001"),
        Case("date", Date(timeIntervalSinceReferenceDate: 1e15 + 0.5), "31 million years after 2001"),
        Case("date", Date(timeIntervalSinceReferenceDate: 0.000_001), "a microsecond after 2001"),
        Case("name", "a\u{0}b\u{0}", "text with NUL"),
        Case("name", String(repeating: "é\u{0}x", count: sixteenMegabytes / 4), "16 MB of text"),
        Case("data", sixteenMegabytesOfBytes, "16 MB of bytes"),
    ]

    /// Whether two attribute values are the same value (dates by their seconds: Foundation cannot print every date).
    static func same(_ read: Any?, _ saved: Any) -> Bool {
        switch saved {
        case let date as Date:
            return (read as? Date)?.timeIntervalSinceReferenceDate == date.timeIntervalSinceReferenceDate
        case let decimal as Decimal: return (read as? NSDecimalNumber)?.decimalValue == decimal
        case let number as Double: return (read as? Double) == number
        case let number as Float: return (read as? Float) == number
        case let number as Int16: return (read as? Int16) == number
        case let number as Int32: return (read as? Int32) == number
        case let number as Int64: return (read as? Int64) == number
        case let string as String: return (read as? String) == string
        case let data as Data: return (read as? Data) == data
        default: return false
        }
    }

    @Test(arguments: exactCases)
    func aValueAtTheEdgeComesBackExactly(_ edge: Case) throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        try SQLiteStack.releasingObjects {
            let coordinator = try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: url)
            let context = SQLiteStack.context(coordinator)
            try context.performAndWait {
                let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
                item.setValue(edge.value, forKey: edge.key)
                try context.save()
            }
            try SQLiteStack.close(coordinator)
        }
        let coordinator = try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: url)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            let item = try #require(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item")).first)
            #expect(Self.same(item.value(forKey: edge.key), edge.value))
            // The store finds it by the value, too.
            let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
            request.predicate = NSPredicate(format: "%K == %@", edge.key, edge.value as! NSObject)
            #expect(try context.count(for: request) == 1)
        }
    }

    // MARK: Strings containing NUL

    @Test func stringsContainingNULAnswerEveryOperatorAsTheInMemoryEvaluatorDoes() throws {
        let directory = SQLiteTestDirectory()
        let coordinator = try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: directory.store())
        let context = SQLiteStack.context(coordinator)
        let names = [
            "a\u{0}b", "b\u{0}a", "a", "b", "ab", "\u{0}", "\u{0}a", "a\u{0}", "A\u{0}B", "x\u{0}\u{0}y", "é\u{0}É", "",
        ]
        let constants = [
            "a", "b", "\u{0}", "a\u{0}", "\u{0}a", "a\u{0}b", "B\u{0}A", "e\u{0}e", "*\u{0}*", ".*\u{0}.*",
        ]
        var disagreements: [String] = []
        try context.performAndWait {
            for name in names {
                NSEntityDescription.insertNewObject(forEntityName: "Item", into: context).setValue(name, forKey: "name")
            }
            try context.save()
            context.reset()
            let all = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item"))
            for op in ["==", "!=", "<", ">=", "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE", "MATCHES", "IN"] {
                for options in ["", "[c]", "[d]", "[cd]"] {
                    for constant in constants {
                        let predicate = NSPredicate(format: "name \(op)\(options) %@", constant)
                        let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
                        request.predicate = predicate
                        let fetched = Set(try context.fetch(request).map(\.objectID))
                        let evaluated = Set(all.filter { predicate.evaluate(with: $0) }.map(\.objectID))
                        if fetched != evaluated {
                            disagreements.append("name \(op)\(options) \(constant.debugDescription)")
                        }
                    }
                }
            }
        }
        #expect(disagreements == [])
    }

    // MARK: Values SQLite would change

    #if !canImport(CoreData)
    // Apple's framework saves these and reads back something else (nil for NaN, a rounded or missing decimal);
    // OpenCoreData refuses them when saving instead (see the README's porting notes).

    static let refusedCases: [Case] = [
        Case("decimal", Decimal.greatestFiniteMagnitude, "Decimal.greatestFiniteMagnitude"),
        Case("decimal", Decimal.leastFiniteMagnitude, "Decimal.leastFiniteMagnitude"),
        Case("decimal", Decimal.nan, "Decimal.nan"),
        Case("decimal", Decimal(1) / Decimal(3), "1/3 to 38 digits"),
        Case("decimal", Decimal(string: "12345678901234567890.5")!, "21 digits"),
        Case("double", Double.nan, "NaN"), Case("float", Float.nan, "NaN"),
        Case("date", Date(timeIntervalSinceReferenceDate: .nan), "NaN seconds"),
    ]

    @Test(arguments: refusedCases)
    func aValueSQLiteWouldChangeIsRefusedAtSaveWithAValidationError(_ edge: Case) throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let coordinator = try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: url)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            let owner = NSEntityDescription.insertNewObject(forEntityName: "Owner", into: context)
            owner.setValue("saved with it", forKey: "name")
            let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
            item.setValue(edge.value, forKey: edge.key)
            #expect {
                try context.save()
            } throws: { error in
                let error = error as NSError
                return error.domain == NSCocoaErrorDomain && error.code == NSManagedObjectValidationError
                    && error.userInfo[NSValidationKeyErrorKey] as? String == edge.key
                    && error.userInfo[NSValidationObjectErrorKey] as? NSManagedObject === item
                    && (error.userInfo[NSLocalizedDescriptionKey] as? String)?.contains(edge.key) == true
            }
            // Nothing of the save reached the file; with the value corrected, it saves.
            #expect(try RawSQLite.query(url, "SELECT COUNT(*) FROM ZOWNER") == [[.integer(0)]])
            #expect(try RawSQLite.query(url, "SELECT COUNT(*) FROM ZITEM") == [[.integer(0)]])
            item.setValue(nil, forKey: edge.key)
            try context.save()
        }
        #expect(try RawSQLite.query(url, "SELECT COUNT(*) FROM ZOWNER") == [[.integer(1)]])
    }
    #endif
}
