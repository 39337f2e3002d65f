import OpenCoreData

/// The predicate engine's benchmarks (issue 3): parsing a format string, and evaluating a predicate in memory.
public enum PredicateWorkloads {
    /// A 200-character predicate with comparisons, string options, BETWEEN, IN, an aggregate and NOT.
    public static let format =
        "(name BEGINSWITH[c] 'alpha' OR category CONTAINS[cd] 'café') AND price BETWEEN {10.5, 99.75} AND "
        + "NOT (flags IN {1, 2, 3, 5, 8}) AND ANY children.label LIKE[c] 'child*' AND quantity >= 20 AND rank != nil"

    /// Parses `format` once.
    @inline(never)
    public static func parse() -> NSPredicate {
        NSPredicate(format: format)
    }

    /// A format string of one megabyte (issue 21): 25,000 comparisons joined by OR, with strings, numbers and key
    /// paths, as a search box or a file might hand over.
    public static let megabyteFormat: String = {
        var clauses: [String] = []
        var length = 0
        var index = 0
        while length < 1_000_000 {
            let clause = "name BEGINSWITH[cd] 'term \(index)' OR price > \(index).5"
            clauses.append(clause)
            length += clause.utf8.count + 4
            index += 1
        }
        return clauses.joined(separator: " OR ")
    }()

    /// A comparison of a key path of 100,000 components (issue 21).
    public static let longKeyPathFormat = (0..<100_000).map { "k\($0 % 10)" }.joined(separator: ".") + " == 1"

    /// Parses `megabyteFormat` once; the number of clauses.
    @inline(never)
    public static func parseMegabyte() -> Int {
        (NSPredicate(format: megabyteFormat) as? NSCompoundPredicate)?.subpredicates.count ?? 0
    }

    /// Parses `longKeyPathFormat` once; the length of the key path.
    @inline(never)
    public static func parseLongKeyPath() -> Int {
        (NSPredicate(format: longKeyPathFormat) as? NSComparisonPredicate)?.leftExpression.keyPath.count ?? 0
    }

    /// The five-clause predicate evaluated against 100,000 objects: a fifth of them match.
    public static let fiveClauses = NSPredicate(
        format: "quantity >= 100 AND price < 20000.0 AND flags != 7 AND name BEGINSWITH 'cafe' AND rank != nil")

    /// The number of the 100,000 fixture items the five-clause predicate matches.
    public static let expectedMatches: Int = {
        var matches = 0
        for index in 0..<Fixture.itemCount {
            let item = Fixture.item(index)
            guard item.quantity >= 100, item.price < 20000, item.flags != 7 else { continue }
            if item.name.hasPrefix("cafe"), item.rank != nil { matches += 1 }
        }
        return matches
    }()

    /// 100,000 managed objects registered in a context (an in-memory store), with the fixture's values.
    public final class ManagedObjects: @unchecked Sendable {
        let coordinator: NSPersistentStoreCoordinator
        let context: NSManagedObjectContext
        let items: [Item]

        public init() throws {
            coordinator = NSPersistentStoreCoordinator(managedObjectModel: BenchmarkModel.shared)
            _ = try coordinator.addPersistentStore(
                ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
            let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            self.context = context
            items = try context.performAndWait {
                var items: [Item] = []
                for index in 0..<Fixture.itemCount {
                    items.append(OpenCoreDataLibrary.insertItem(Fixture.item(index), into: context))
                }
                try context.save()
                return items
            }
        }

        /// Evaluates the predicate against every object; returns the number of matches.
        public func evaluate(_ predicate: NSPredicate) -> Int {
            context.performAndWait {
                var matches = 0
                for item in items where predicate.evaluate(with: item) {
                    matches += 1
                }
                return matches
            }
        }
    }

    /// A plain Swift value, read by the reflection-based default of `KeyValueCoding`.
    public struct PlainItem: KeyValueCoding {
        var serial: Int64
        var quantity: Int64
        var flags: Int64
        var price: Double
        var ratio: Double
        var name: String
        var category: String
        var note: String
        var payload: Data
        var rank: Int64?
    }

    public static func plainItems() -> [PlainItem] {
        (0..<Fixture.itemCount).map { index in
            let values = Fixture.item(index)
            return PlainItem(
                serial: values.serial, quantity: values.quantity, flags: values.flags, price: values.price,
                ratio: values.ratio, name: values.name, category: values.category, note: values.note,
                payload: values.payload, rank: values.rank)
        }
    }

    public static func dictionaries() -> [[String: Any]] {
        (0..<Fixture.itemCount).map { index in
            let values = Fixture.item(index)
            var dictionary: [String: Any] = [
                "serial": values.serial, "quantity": values.quantity, "flags": values.flags, "price": values.price,
                "ratio": values.ratio, "name": values.name, "category": values.category, "note": values.note,
                "payload": values.payload,
            ]
            dictionary["rank"] = values.rank
            return dictionary
        }
    }

    /// Evaluates the predicate against every value; returns the number of matches.
    @inline(never)
    public static func evaluate<T>(_ predicate: NSPredicate, _ values: [T]) -> Int {
        var matches = 0
        for value in values where predicate.evaluate(with: value) {
            matches += 1
        }
        return matches
    }
}
