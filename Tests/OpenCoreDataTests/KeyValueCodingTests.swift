import OpenCoreDataShim
import Testing

/// Key-value coding: dictionaries, collections, collection operators with Foundation's result types, and (on Linux)
/// plain Swift values through reflection.
@Suite struct KeyValueCodingTests {
    private let transactions: NSArray = [
        ["payee": "Green Power", "amount": 120.0, "date": Date(timeIntervalSinceReferenceDate: 100)],
        ["payee": "Green Power", "amount": 150.0, "date": Date(timeIntervalSinceReferenceDate: 300)],
        ["payee": "Car Loan", "amount": 250.0, "date": Date(timeIntervalSinceReferenceDate: 200)],
    ]

    @Test func dictionaryLookups() {
        let dictionary: NSDictionary = ["name": "Ada", "address": ["city": "London"]]
        #expect(dictionary.value(forKey: "name") as? String == "Ada")
        #expect(dictionary.value(forKeyPath: "address.city") as? String == "London")
        #expect(dictionary.value(forKey: "missing") == nil)
        #expect(dictionary.value(forKeyPath: "address.missing") == nil)
    }

    @Test func aKeyAppliedToACollectionMapsOverIt() {
        let names = transactions.value(forKey: "payee") as? [String]
        #expect(names == ["Green Power", "Green Power", "Car Loan"])
        let set = NSSet(array: [["n": 1], ["n": 2], ["m": 3]])
        let values = set.value(forKey: "n") as? Set<Int>
        #expect(values == [1, 2])
        let withMissing = NSArray(array: [["n": 1], ["m": 3]]).value(forKey: "n") as? [Any]
        #expect(withMissing?.count == 2)
        #expect(withMissing?[1] is NSNull)
    }

    @Test func aggregationOperators() throws {
        let sum = try #require(transactions.value(forKeyPath: "@sum.amount") as? NSNumber)
        #expect(sum.doubleValue == 520)
        let average = try #require(transactions.value(forKeyPath: "@avg.amount") as? NSNumber)
        #expect(abs(average.doubleValue - 173.333_333) < 0.001)
        #expect((transactions.value(forKeyPath: "@count") as? NSNumber)?.intValue == 3)
        #expect((transactions.value(forKeyPath: "@max.amount") as? NSNumber)?.doubleValue == 250)
        #expect((transactions.value(forKeyPath: "@min.amount") as? NSNumber)?.doubleValue == 120)
        let latest = transactions.value(forKeyPath: "@max.date") as? Date
        #expect(latest?.timeIntervalSinceReferenceDate == 300)
        let earliest = transactions.value(forKeyPath: "@min.date") as? Date
        #expect(earliest?.timeIntervalSinceReferenceDate == 100)
    }

    @Test func sumAndAverageAreDecimalNumbers() {
        #expect(NSArray(array: [1, 2]).value(forKeyPath: "@sum.self") is NSDecimalNumber)
        #expect(NSArray(array: [1, 2]).value(forKeyPath: "@avg.self") is NSDecimalNumber)
        #expect((NSArray().value(forKeyPath: "@sum.self") as? NSNumber)?.intValue == 0)
        #expect(NSArray().value(forKeyPath: "@max.self") == nil)
    }

    @Test func objectOperators() {
        let distinct = transactions.value(forKeyPath: "@distinctUnionOfObjects.payee") as? [String]
        #expect(distinct.map(Set.init) == ["Green Power", "Car Loan"])
        #expect(distinct?.count == 2)
        let all = transactions.value(forKeyPath: "@unionOfObjects.payee") as? [String]
        #expect(all?.count == 3)
    }

    @Test func arrayAndSetOperators() {
        let nested: NSArray = [
            [["payee": "A"], ["payee": "B"]],
            [["payee": "B"], ["payee": "C"]],
        ]
        let union = nested.value(forKeyPath: "@unionOfArrays.payee") as? [String]
        #expect(union?.sorted() == ["A", "B", "B", "C"])
        let distinct = nested.value(forKeyPath: "@distinctUnionOfArrays.payee") as? [String]
        #expect(distinct?.sorted() == ["A", "B", "C"])
        let sets = NSSet(array: [NSSet(array: [1, 2]), NSSet(array: [2, 3])])
        let distinctSets = sets.value(forKeyPath: "@distinctUnionOfSets.self") as? Set<Int>
        #expect(distinctSets == [1, 2, 3])
    }

    @Test func operatorsAfterALeftKeyPath() {
        let order: NSDictionary = ["items": [["price": 2], ["price": 3]]]
        #expect((order.value(forKeyPath: "items.@count") as? NSNumber)?.intValue == 2)
        #expect((order.value(forKeyPath: "items.@sum.price") as? NSNumber)?.intValue == 5)
    }

    #if !canImport(CoreData)
    struct Person: KeyValueCoding {
        var name: String
        var age: Int
        var nickname: String?
        var address: Address?
    }

    struct Address {
        var city: String
    }

    class Animal {
        let legs: Int
        init(legs: Int) { self.legs = legs }
    }

    final class Dog: Animal {
        let name = "Rex"
        init() { super.init(legs: 4) }
    }

    @Test func reflectionReadsPlainSwiftValues() {
        let person = Person(name: "Ada", age: 36, nickname: nil, address: Address(city: "London"))
        #expect(person.value(forKey: "name") as? String == "Ada")
        #expect(person.value(forKey: "age") as? Int == 36)
        #expect(person.value(forKey: "nickname") == nil)
        #expect(person.value(forKey: "missing") == nil)
        #expect(person.value(forKeyPath: "address.city") as? String == "London")
        #expect(person.value(forKey: "self") as? Person != nil)
    }

    @Test func reflectionSearchesSuperclasses() {
        let dog = Dog()
        #expect(NSPredicate(format: "legs == 4 AND name == 'Rex'").evaluate(with: dog))
    }

    @Test func predicatesFilterPlainSwiftValues() {
        let people = [
            Person(name: "Ada", age: 36, nickname: "Countess", address: nil),
            Person(name: "Alan", age: 41, nickname: nil, address: Address(city: "Manchester")),
            Person(name: "Grace", age: 85, nickname: nil, address: Address(city: "Arlington")),
        ]
        let adults = people.filtered(using: NSPredicate(format: "age > 40 AND name BEGINSWITH[c] 'a'"))
        #expect(adults.map(\.name) == ["Alan"])
        #expect(people.filtered(using: NSPredicate(format: "nickname == nil")).count == 2)
        #expect(people.filtered(using: NSPredicate(format: "address.city ENDSWITH 'ton'")).map(\.name) == ["Grace"])
        #expect((people.value(forKeyPath: "@avg.age") as? NSNumber)?.intValue == 54)
        #expect(people.value(forKeyPath: "@max.name") as? String == "Grace")
    }

    @Test func swiftCollectionsAndDictionaries() {
        let dictionary: [String: Any] = ["a": ["b": 1], "n": Optional<Int>.none as Any]
        #expect(dictionary.value(forKeyPath: "a.b") as? Int == 1)
        #expect(dictionary.value(forKey: "n") == nil)
        #expect((dictionary.value(forKey: "@count") as? NSNumber)?.intValue == 2)
        let numbers = [3, 1, 2]
        #expect((numbers.value(forKeyPath: "@sum.self") as? NSNumber)?.intValue == 6)
        #expect((numbers.value(forKey: "@count") as? NSNumber)?.intValue == 3)
        let set: Set<Int> = [1, 2]
        #expect((set.value(forKeyPath: "@max.self") as? NSNumber)?.intValue == 2)
        let ordered = NSOrderedSet(array: [["k": 1], ["k": 2]])
        #expect((ordered.value(forKey: "k") as? NSOrderedSet)?.array as? [Int] == [1, 2])
    }

    /// Stands in for `NSManagedObject`: an `NSObject` subclass that answers `value(forKey:)` with what Core Data
    /// returns (NSNumber, String, Date, Data, UUID, URL, NSDecimalNumber, a set for to-many, an ordered set for
    /// ordered to-many, the related object for to-one).
    final class Record: NSObject, KeyValueCoding {
        var storage: [String: Any] = [:]

        init(_ storage: [String: Any]) {
            self.storage = storage
        }

        func value(forKey key: String) -> Any? {
            storage[key]
        }
    }

    @Test func managedObjectLikeValues() {
        let ada = Record([
            "name": "Ada", "age": NSNumber(value: Int16(36)), "salary": NSDecimalNumber(string: "1000.50"),
        ])
        let alan = Record(["name": "Alan", "age": NSNumber(value: Int16(41)), "salary": NSDecimalNumber(string: "900")])
        let id = UUID()
        let company = Record([
            "name": "Analytical Engines",
            "founded": Date(timeIntervalSinceReferenceDate: 0),
            "logo": Data([0xFF]),
            "site": URL(string: "https://example.com")!,
            "id": id,
            "public": NSNumber(value: true),
            "employees": Set([ada, alan]),
            "board": NSOrderedSet(array: [alan, ada]),
            "ceo": ada,
        ])
        let holds = { (format: String, args: [Any]) in
            NSPredicate(format: format, argumentArray: args).evaluate(with: company)
        }
        #expect(holds("ANY employees.name == 'Ada'", []))
        #expect(holds("ALL employees.age > 30", []))
        #expect(holds("employees.@count == 2", []))
        #expect(holds("employees.@sum.salary == 1900.5", []))
        #expect(holds("employees.@max.age == 41", []))
        #expect(holds("board[FIRST].name == 'Alan'", []))
        #expect(holds("ceo.name == 'Ada' AND ceo == %@", [ada]))
        #expect(holds("ceo != %@", [alan]))
        #expect(NSPredicate(format: "ceo == %@ AND %@ IN employees", ada, alan).evaluate(with: company))
        #expect(holds("%@ IN employees", [alan]))
        #expect(holds("employees CONTAINS %@", [ada]))
        #expect(holds("founded < %@ AND public == YES", [Date()]))
        #expect(
            holds("logo == %@ AND site == %@ AND id == %@", [Data([0xFF]), URL(string: "https://example.com")!, id]))
        #expect(holds("SUBQUERY(employees, $e, $e.salary > 950).@count == 1", []))
        #expect(!holds("missing == 'x'", []))
        let sorted = (company.storage["employees"] as! Set<Record>).sorted(using: [
            NSSortDescriptor(key: "salary", ascending: false)
        ])
        #expect(sorted.map { $0.storage["name"] as? String } == ["Ada", "Alan"])
    }
    #endif
}
