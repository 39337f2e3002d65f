// White-box tests of OpenCoreData's SQLite store (the store's fetch interface and statement recorder): they do not build against Apple's Core Data.
#if !canImport(CoreData)

@_spi(Testing) import OpenCoreDataCore
import OpenCoreDataShim
import Testing

/// The SQL the store generates selects exactly what the in-memory evaluator selects, over a generated set of
/// predicates, and every value reaches SQLite as a bound argument.
@Suite(.serialized) struct SQLitePredicateTests {
    /// A store filled with items whose values exercise every comparison: missing values, case and diacritics,
    /// wildcard characters, Unicode composition, relationships of every kind.
    final class Fixture: @unchecked Sendable {
        let directory = SQLiteTestDirectory()
        let coordinator: NSPersistentStoreCoordinator
        let context: NSManagedObjectContext
        let store: NSPersistentStore
        /// Every object of each entity, fetched without a predicate.
        var all: [String: [NSManagedObject]] = [:]
        let marker = "needle-\(UUID().uuidString)"

        static let names: [String?] = [
            "Ada", "ada", "ADA", "Zoë", "zoe", "ZOË", "Straße", "STRASSE", "a%b", "a_b", "a*b", "a?b", "[x]", "",
            nil, "e\u{301}clair", "\u{e9}clair", "abc def", "Ünïcödé", "x\\y", "100", "b",
        ]

        init() throws {
            coordinator = try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: directory.store())
            store = coordinator.persistentStores[0]
            context = SQLiteStack.context(coordinator)
            let marker = marker
            try context.performAndWait {
                func insert(_ entity: String, _ values: [String: Any?]) -> NSManagedObject {
                    let object = NSEntityDescription.insertNewObject(forEntityName: entity, into: context)
                    for (key, value) in values { object.setValue(value ?? nil, forKey: key) }
                    return object
                }
                let owners = [insert("Owner", ["name": "Ada"]), insert("Owner", ["name": "bob"]), insert("Owner", [:])]
                let tags = ["red", "Red", "blue", "green", marker].map { insert("Tag", ["label": $0]) }
                let lists = [insert("List", ["title": "one"]), insert("List", ["title": "two"])]
                let pets = [
                    insert("Dog", ["name": "Rex", "breed": "collie"]), insert("Cat", ["name": "Tom", "lives": 9]),
                ]
                var random = SeededRandom(seed: 42)
                for (index, name) in Self.names.enumerated() {
                    let item = insert(
                        "Item",
                        [
                            "name": name, "int16": index % 5 == 0 ? nil : Int16(index - 8),
                            "double": index % 4 == 0 ? nil : Double(index) / 4 - 2,
                            "bool": index % 3 == 0 ? nil : index % 2 == 0,
                            "date": index % 6 == 0 ? nil : Date(timeIntervalSinceReferenceDate: Double(index * 1000)),
                            "int64": Int64(index) * 1_000_000_007,
                            "uuid": index % 2 == 0
                                ? UUID(uuidString: "00000000-0000-0000-0000-0000000000\(10 + index)") : nil,
                            "data": index % 3 == 1 ? Data([UInt8(index), 0, 255]) : nil,
                            "uri": index % 4 == 1 ? URL(string: "https://example.com/\(index)") : nil,
                        ])
                    if index % 4 != 3 { item.setValue(owners[index % owners.count], forKey: "owner") }
                    if index % 5 != 4 { item.setValue(pets[index % 2], forKey: "pet") }
                    var chosen = Set<NSManagedObject>()
                    for tag in tags where random.next() % 3 == 0 { chosen.insert(tag) }
                    item.setValue(chosen, forKey: "tags")
                    if index % 3 != 2 {
                        let list = lists[index % 2]
                        let entries = (list.value(forKey: "entries") as? NSOrderedSet)?.array ?? []
                        list.setValue(NSOrderedSet(array: entries + [item]), forKey: "entries")
                    }
                }
                try context.save()
                context.reset()
                for entity in ["Item", "Owner", "Tag", "List", "Animal"] {
                    all[entity] = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: entity))
                }
            }
        }

        /// Runs `predicate` through the store and through the in-memory evaluator: the object IDs each selects, and
        /// whether the store answered in SQL alone.
        func compare(_ predicate: NSPredicate, entity: String = "Item") throws -> (
            sql: Set<NSManagedObjectID>, memory: Set<NSManagedObjectID>, inSQL: Bool
        ) {
            try context.performAndWait {
                let request = NSFetchRequest<NSFetchRequestResult>(entityName: entity)
                request.entity = coordinator.managedObjectModel.entitiesByName[entity]
                request.predicate = predicate
                let backend = try #require(store as? PersistentStoreBackend)
                let memory = Set(all[entity, default: []].filter { predicate.evaluate(with: $0) }.map(\.objectID))
                switch try backend.fetchRows(request) {
                case .rows(let rows):
                    return (Set(rows.map(\.objectID)), memory, true)
                case .candidates(let rows):
                    let objects = rows.map { context.object(with: $0.objectID) }
                    return (Set(objects.filter { predicate.evaluate(with: $0) }.map(\.objectID)), memory, false)
                case .count, .objects:
                    Issue.record("a count or registered objects from the SQLite store's object fetch")
                    return ([], memory, false)
                }
            }
        }
    }

    /// Deterministic pseudo-random numbers, so that the fixture is the same on every run.
    struct SeededRandom {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
    }

    /// Predicate formats with their arguments, every one of which SQL must answer alone.
    static func translatablePredicates(marker: String) -> [(String, [Any])] {
        var predicates: [(String, [Any])] = []
        let stringConstants: [Any] = [
            "Ada", "ada", "zoe", "Zoë", "strasse", "a%b", "a_b", "a*b", "a?b", "[x]", "", "é", "e", "clair",
            "\u{e9}clair",
            "E\u{301}CLAIR", "b", "x\\y", "100", 100, marker,
        ]
        let patterns: [Any] = ["a*", "A?A", "*b", "a\\*b", "*", "?", "[x]", "z*", "*ä*", "", "a%b", "Zo?"]
        let expressions: [Any] = ["A.*", "[a-z]+", ".*b", "(", "z.e", "\\w+", ".*\u{e9}.*", ""]
        for option in ["", "[c]", "[d]", "[cd]"] {
            for op in ["==", "!=", "<", "<=", ">", ">=", "BEGINSWITH", "ENDSWITH", "CONTAINS", "IN"] {
                for constant in stringConstants {
                    predicates.append(("name \(op)\(option) %@", [constant]))
                }
            }
            for constant in patterns { predicates.append(("name LIKE\(option) %@", [constant])) }
            for constant in expressions { predicates.append(("name MATCHES\(option) %@", [constant])) }
            predicates.append(("name IN\(option) %@", [["ADA", "zoë", "b", 7, NSNull()]]))
            // Typed Swift arrays (bound without boxing each element, when the column's kind and the options allow).
            predicates.append(("name IN\(option) %@", [["Ada", "zoe", "Zoë", "b", "100"] as [String]]))
            predicates.append(("name IN\(option) %@", [[String]()]))
            predicates.append(("name IN\(option) %@", [[100, 7] as [Int]]))
            predicates.append(("name BETWEEN\(option) %@", [["a", "b"]]))
            predicates.append(("owner.name ==\(option) %@", ["ADA"]))
            predicates.append(("ANY tags.label ==\(option) %@", ["red"]))
            predicates.append(("ALL tags.label BEGINSWITH\(option) %@", ["R"]))
            predicates.append(("NONE tags.label CONTAINS\(option) %@", ["E"]))
            predicates.append(("tags.label CONTAINS\(option) %@", ["Red"]))
            predicates.append(("%@ IN\(option) tags.label", ["BLUE"]))
        }
        let numbers: [Any] = [
            0, -3, 2, 1.5, -2.25, 7, 1000, NSNull(), "3", true, false, Date(timeIntervalSinceReferenceDate: 5000),
        ]
        for key in ["int16", "double", "bool", "date", "int64"] {
            for op in ["==", "!=", "<", "<=", ">", ">="] {
                for constant in numbers { predicates.append(("\(key) \(op) %@", [constant])) }
            }
            predicates.append(("\(key) BETWEEN %@", [[-2, 3]]))
            predicates.append(("\(key) IN %@", [[1, -3, 2.5, NSNull(), "x"]]))
            predicates.append(("\(key) IN %@", [[1, -3, 7, 1000] as [Int]]))
            predicates.append(("\(key) IN %@", [[0, 2, 5000] as [Int64]]))
            predicates.append(("\(key) IN %@", [[Int64]()]))
            predicates.append(("\(key) IN %@", [["3", "x"] as [String]]))
            predicates.append(("\(key) == nil", []))
            predicates.append(("NOT (\(key) > 0)", []))
        }
        predicates += [
            ("date > %@", [Date(timeIntervalSinceReferenceDate: 7000)]),
            (
                "date BETWEEN %@",
                [[Date(timeIntervalSinceReferenceDate: 2000), Date(timeIntervalSinceReferenceDate: 9000)]]
            ),
            ("uuid == %@", [UUID(uuidString: "00000000-0000-0000-0000-000000000012")!]),
            ("uuid != %@", [UUID(uuidString: "00000000-0000-0000-0000-000000000012")!]),
            ("uuid < %@", [UUID(uuidString: "00000000-0000-0000-0000-000000000020")!]),
            ("uuid == %@", ["00000000-0000-0000-0000-000000000012"]),
            ("data == %@", [Data([1, 0, 255])]),
            ("data > %@", [Data([5])]),
            ("uri == %@", [URL(string: "https://example.com/5")!]),
            ("uri != %@", [URL(string: "https://example.com/5")!]),
            ("uri < %@", [URL(string: "https://example.com/5")!]),
            ("owner == nil", []),
            ("owner != nil", []),
            ("owner.name == nil", []),
            ("owner.name BEGINSWITH %@", ["A"]),
            ("pet.name == %@", ["Rex"]),
            ("pet == nil", []),
            ("tags.@count == 0", []),
            ("tags.@count >= 2", []),
            ("owner.items.@count > 7", []),
            ("list.entries.@count < 8", []),
            ("SUBQUERY(tags, $t, $t.label BEGINSWITH[c] 'r').@count > 0", []),
            ("SUBQUERY(tags, $t, $t.label == 'blue' OR label == 'green').@count == 1", []),
            ("ANY tags.label IN %@", [["green", "blue"]]),
            ("ALL tags.label != 'red'", []),
            ("name == 'Ada' OR (int16 > 0 AND NOT (bool == YES))", []),
            ("NOT (name BEGINSWITH 'a' OR double < 0)", []),
            ("NOT (owner.name == 'Ada')", []),
            ("NOT (ANY tags.label == 'red') AND name != nil", []),
            ("TRUEPREDICATE", []),
            ("FALSEPREDICATE", []),
            ("int16 > double", []),
            ("int16 == double", []),
            ("name == owner.name", []),
            ("name ==[c] owner.name", []),
            ("name CONTAINS[c] owner.name", []),
            ("int64 > 10000000070 AND int64 < 20000000140", []),
            ("int16 + 1 > 0", []),
            ("double > 1.5 * 2", []),
            ("date < now()", []),
            ("lowercase:(name) == 'ada'", []),
        ]
        return predicates.filter { format, _ in
            // Arithmetic and functions on key paths are evaluated in memory.
            !["int16 + 1 > 0", "lowercase:(name) == 'ada'"].contains(format)
        }
    }

    @Test func sqlSelectsWhatTheInMemoryEvaluatorSelects() throws {
        let fixture = try Fixture()
        var disagreements: [String] = []
        var inMemory: [String] = []
        let predicates = Self.translatablePredicates(marker: fixture.marker)
        #expect(predicates.count > 800)
        for (format, arguments) in predicates {
            let predicate = NSPredicate(format: format, argumentArray: arguments)
            let result = try fixture.compare(predicate)
            if result.sql != result.memory {
                disagreements.append(
                    "\(predicate.predicateFormat): SQL \(result.sql.count), memory \(result.memory.count)")
            }
            if !result.inSQL { inMemory.append(predicate.predicateFormat) }
        }
        #expect(disagreements == [])
        #expect(inMemory == [])
    }

    @Test func combinationsAgree() throws {
        let fixture = try Fixture()
        var random = SeededRandom(seed: 7)
        let parts = Self.translatablePredicates(marker: fixture.marker).map {
            NSPredicate(format: $0.0, argumentArray: $0.1)
        }
        var disagreements: [String] = []
        for _ in 0..<400 {
            let a = parts[Int(random.next() % UInt64(parts.count))]
            let b = parts[Int(random.next() % UInt64(parts.count))]
            let predicate: NSPredicate
            switch random.next() % 3 {
            case 0: predicate = NSCompoundPredicate(andPredicateWithSubpredicates: [a, b])
            case 1: predicate = NSCompoundPredicate(orPredicateWithSubpredicates: [a, b])
            default:
                predicate = NSCompoundPredicate(
                    andPredicateWithSubpredicates: [NSCompoundPredicate(notPredicateWithSubpredicate: a), b])
            }
            let result = try fixture.compare(predicate)
            if result.sql != result.memory || !result.inSQL { disagreements.append(predicate.predicateFormat) }
        }
        #expect(disagreements == [])
    }

    /// The highest trees that can be built — 1 000 levels of compound predicates, and what a format may nest — are
    /// translated (or left to memory) without exhausting the stack, and select what memory selects.
    @Test func theHighestPredicatesAgree() throws {
        let fixture = try Fixture()
        var compound: NSPredicate = NSPredicate(format: "name BEGINSWITH[c] 'a'")
        for level in 2..<1_000 {
            let other = NSPredicate(format: "int64 > %lld", Int64(level % 7) * 1_000_000_007)
            compound =
                level % 3 == 0
                ? NSCompoundPredicate(notPredicateWithSubpredicate: compound)
                : NSCompoundPredicate(type: level % 3 == 1 ? .or : .and, subpredicates: [compound, other])
        }
        let chain = Array(repeating: "1", count: 99).joined(separator: " + ")
        let nested = String(repeating: "(", count: 99) + "name == 'Ada'" + String(repeating: ")", count: 99)
        for predicate in [
            compound, NSPredicate(format: "int64 < " + chain), NSPredicate(format: nested),
            NSPredicate(
                format: "name IN " + String(repeating: "{", count: 98) + "'x'" + String(repeating: "}", count: 98)),
        ] {
            let result = try fixture.compare(predicate)
            #expect(result.sql == result.memory)
        }
    }

    @Test func predicatesSQLCannotExpressAreLeftToMemoryAndStillAgree() throws {
        let fixture = try Fixture()
        let predicates = [
            NSPredicate(format: "int16 + 1 > 0"),
            NSPredicate(format: "lowercase:(name) == 'ada'"),
            NSPredicate(format: "plist == nil"),
            NSPredicate(format: "name == 'Ada' AND int16 * 2 > 3"),
            NSPredicate { object, _ in ((object as? NSManagedObject)?.value(forKey: "name") as? String)?.count == 3 },
            NSPredicate(format: "ANY tags.items.name == 'Ada'"),
            NSPredicate(format: "ANY tags.items.@count > 10"),
        ]
        for predicate in predicates {
            let result = try fixture.compare(predicate)
            #expect(result.sql == result.memory, "\(predicate.predicateFormat)")
            #expect(!result.inSQL, "\(predicate.predicateFormat) should be left to memory")
        }
    }

    /// A decimal column holds an integer or the double whose shortest description is the decimal, and those keep the
    /// decimals' order: SQL compares decimals as memory does. A constant that no double names is left to memory.
    @Test func decimalsCompareInSQLAsInMemory() throws {
        let fixture = try Fixture()
        let values = ["10.11", "3.3333333333", "0.1", "-2.5", "250", "0.0000001", "123456789.123456", "3"]
        try fixture.context.performAndWait {
            for (item, value) in zip(fixture.all["Item"] ?? [], values) {
                item.setValue(NSDecimalNumber(string: value), forKey: "decimal")
            }
            try fixture.context.save()
        }
        let probes: [(String, [Any])] = [
            ("decimal == nil", []), ("decimal > 100", []), ("decimal <= 0.1", []), ("decimal == 3", []),
            ("decimal == %@", [NSDecimalNumber(string: "3.3333333333")]), ("decimal == %@", [3.3333333333]),
            ("decimal < %@", [NSDecimalNumber(string: "10.11")]), ("decimal BETWEEN {0, 11}", []),
            ("decimal IN %@", [[NSDecimalNumber(string: "0.1"), NSDecimalNumber(value: 250)]]),
            ("int16 < %@", [NSDecimalNumber(string: "-2.5")]),
        ]
        for (format, arguments) in probes {
            let predicate = NSPredicate(format: format, argumentArray: arguments)
            let result = try fixture.compare(predicate)
            #expect(result.sql == result.memory, "\(predicate.predicateFormat)")
            #expect(result.inSQL, "\(predicate.predicateFormat) should be answered in SQL")
        }
        let precise = try fixture.compare(
            NSPredicate(format: "decimal < %@", NSDecimalNumber(string: "0.12345678901234567891")))
        #expect(precise.sql == precise.memory)
        #expect(!precise.inSQL)
    }

    @Test func objectsAndObjectIDsCompareByPrimaryKey() throws {
        let fixture = try Fixture()
        let (ada, item) = try fixture.context.performAndWait {
            let owners = fixture.all["Owner"] ?? []
            let ada = try #require(owners.first { $0.value(forKey: "name") as? String == "Ada" })
            return (ada, try #require(fixture.all["Item"]?.first))
        }
        for (format, argument) in [
            ("owner == %@", ada as Any), ("owner != %@", ada), ("owner IN %@", [ada]), ("SELF == %@", item),
            ("SELF IN %@", [item]), ("SELF != %@", item),
        ] {
            let predicate = NSPredicate(format: format, argumentArray: [argument])
            let result = try fixture.compare(predicate)
            #expect(result.sql == result.memory, "\(predicate.predicateFormat)")
            #expect(result.inSQL)
        }
        // Object IDs select the same rows as their objects (as on Apple platforms).
        let byID = try fixture.compare(NSPredicate(format: "owner == %@", ada.objectID))
        let byObject = try fixture.compare(NSPredicate(format: "owner == %@", ada))
        #expect(byID.sql == byObject.sql)
    }

    @Test func sortsFetchLimitsAndOffsetsMatchMemory() throws {
        let fixture = try Fixture()
        let sorts: [[NSSortDescriptor]] = [
            [NSSortDescriptor(key: "name", ascending: true)],
            [NSSortDescriptor(key: "name", ascending: false)],
            [NSSortDescriptor(key: "name", ascending: true, selector: Selector("caseInsensitiveCompare:"))],
            [NSSortDescriptor(key: "int16", ascending: false), NSSortDescriptor(key: "double", ascending: true)],
            [NSSortDescriptor(key: "bool", ascending: true), NSSortDescriptor(key: "date", ascending: false)],
            [NSSortDescriptor(key: "owner.name", ascending: true), NSSortDescriptor(key: "uuid", ascending: true)],
            [NSSortDescriptor(key: "uri", ascending: false), NSSortDescriptor(key: "data", ascending: true)],
        ]
        try fixture.context.performAndWait {
            let backend = try #require(fixture.store as? PersistentStoreBackend)
            for descriptors in sorts {
                for (offset, limit) in [(0, 0), (0, 5), (3, 4), (20, 10), (5, 0)] {
                    let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Item")
                    request.entity = fixture.coordinator.managedObjectModel.entitiesByName["Item"]
                    request.predicate = NSPredicate(format: "int64 > 0")
                    request.sortDescriptors = descriptors
                    request.fetchOffset = offset
                    request.fetchLimit = limit
                    guard case .rows(let rows) = try backend.fetchRows(request) else {
                        Issue.record("\(descriptors) was not sorted in SQL")
                        continue
                    }
                    let all = (fixture.all["Item"] ?? []).filter { request.predicate!.evaluate(with: $0) }.sorted {
                        a, b in (try? Self.primaryKey(a)) ?? 0 < (try? Self.primaryKey(b)) ?? 0
                    }
                    var expected = all.sorted(using: descriptors).dropFirst(offset)
                    if limit > 0 { expected = expected.prefix(limit) }
                    #expect(rows.map(\.objectID) == expected.map(\.objectID), "\(descriptors) \(offset) \(limit)")
                }
            }
        }
    }

    @Test func countsAndSubentitiesMatchMemory() throws {
        let fixture = try Fixture()
        try fixture.context.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
            request.predicate = NSPredicate(format: "name BEGINSWITH[c] 'a'")
            let count = try fixture.context.count(for: request)
            #expect(count == fixture.all["Item"]?.filter { request.predicate!.evaluate(with: $0) }.count)
            let animals = NSFetchRequest<NSManagedObject>(entityName: "Animal")
            #expect(try fixture.context.count(for: animals) == 2)
            let dogs = NSFetchRequest<NSManagedObject>(entityName: "Dog")
            dogs.includesSubentities = false
            #expect(try fixture.context.fetch(dogs).map { $0.entity.name } == ["Dog"])
        }
    }

    @Test func everyValueIsBoundAndNeverInSQLText() throws {
        let fixture = try Fixture()
        let recorder = SQLiteStatementRecorder()
        defer { recorder.stop() }
        let secret = "secret-\(UUID().uuidString)"
        let formats = [
            "name == %@", "name !=[cd] %@", "name BEGINSWITH %@", "name ENDSWITH[c] %@", "name CONTAINS %@",
            "name LIKE %@", "name MATCHES %@", "name IN %@", "owner.name == %@", "ANY tags.label == %@",
            "SUBQUERY(tags, $t, $t.label == %@).@count > 0", "tags.label CONTAINS %@",
        ]
        for format in formats {
            let argument: Any = format.hasSuffix("IN %@") ? [secret, secret + "2"] : secret
            let result = try fixture.compare(NSPredicate(format: format, argumentArray: [argument]))
            #expect(result.inSQL, "\(format)")
        }
        try fixture.context.performAndWait {
            let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: fixture.context)
            item.setValue(secret, forKey: "name")
            try fixture.context.save()
            let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
            request.predicate = NSPredicate(format: "name == %@", secret)
            request.fetchLimit = 917_253
            let found = try fixture.context.fetch(request)
            #expect(found.count == 1)
            fixture.context.delete(item)
            try fixture.context.save()
        }
        let statements = recorder.statements
        #expect(statements.count > formats.count)
        #expect(statements.filter { $0.contains(secret) || $0.contains("917253") } == [])
        #expect(statements.contains { $0.contains("?") })
    }

    static func primaryKey(_ object: NSManagedObject) throws -> Int64 {
        try #require(Int64(object.objectID.uriRepresentation().lastPathComponent.dropFirst()))
    }
}

#endif
