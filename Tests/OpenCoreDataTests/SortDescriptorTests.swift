import OpenCoreDataShim
import Testing

/// `NSSortDescriptor` with every comparison selector, comparators, reversal, and sorting collections.
@Suite struct SortDescriptorTests {
    private let people: NSArray = [
        ["name": "bob", "age": 30],
        ["name": "Alice", "age": 25],
        ["name": "carol", "age": 30],
        ["name": "Émile", "age": 41],
        ["age": 19],
    ]

    private func names(_ sorted: [Any]) -> [String] {
        sorted.map { ($0 as? NSDictionary)?["name"] as? String ?? "-" }
    }

    @Test func properties() {
        let descriptor = NSSortDescriptor(key: "name", ascending: true)
        #expect(descriptor.key == "name")
        #expect(descriptor.ascending)
        #expect(descriptor.selector == Selector("compare:"))
        let custom = NSSortDescriptor(key: "name", ascending: false, selector: Selector("caseInsensitiveCompare:"))
        #expect(custom.selector == Selector("caseInsensitiveCompare:"))
        #expect(!custom.ascending)
    }

    @Test func compareSortsNilFirstThenByCodePoint() {
        let sorted = people.sortedArray(using: [NSSortDescriptor(key: "name", ascending: true)])
        #expect(names(sorted) == ["-", "Alice", "bob", "carol", "Émile"])
        let descending = people.sortedArray(using: [NSSortDescriptor(key: "name", ascending: false)])
        #expect(names(descending) == ["Émile", "carol", "bob", "Alice", "-"])
    }

    @Test func caseInsensitiveCompare() {
        let words: NSArray = ["b", "A", "c", "B"]
        let sorted = words.sortedArray(using: [
            NSSortDescriptor(key: nil, ascending: true, selector: Selector("caseInsensitiveCompare:"))
        ])
        #expect((sorted as? [String])?.map { $0.lowercased() } == ["a", "b", "b", "c"])
    }

    @Test func localizedComparisons() {
        let words: NSArray = ["b", "a", "B", "A"]
        for selector in ["localizedCompare:", "localizedCaseInsensitiveCompare:"] {
            let sorted = words.sortedArray(using: [
                NSSortDescriptor(key: nil, ascending: true, selector: Selector(selector))
            ])
            #expect((sorted as? [String])?.map { $0.lowercased() } == ["a", "a", "b", "b"], "\(selector)")
        }
    }

    @Test func localizedStandardCompareSortsNumbersNumerically() {
        let files: NSArray = ["file10.txt", "file2.txt", "File1.txt"]
        let sorted = files.sortedArray(using: [
            NSSortDescriptor(key: "self", ascending: true, selector: Selector("localizedStandardCompare:"))
        ])
        #expect(sorted as? [String] == ["File1.txt", "file2.txt", "file10.txt"])
        let plain = files.sortedArray(using: [NSSortDescriptor(key: "self", ascending: true)])
        #expect(plain as? [String] == ["File1.txt", "file10.txt", "file2.txt"])
    }

    @Test func severalDescriptorsBreakTies() {
        let sorted = people.sortedArray(using: [
            NSSortDescriptor(key: "age", ascending: false),
            NSSortDescriptor(key: "name", ascending: true),
        ])
        #expect(names(sorted) == ["Émile", "bob", "carol", "Alice", "-"])
    }

    @Test func comparator() {
        let byLength = NSSortDescriptor(key: "name", ascending: true) { lhs, rhs in
            let a = (lhs as? String)?.count ?? 0
            let b = (rhs as? String)?.count ?? 0
            return a < b ? .orderedAscending : (a > b ? .orderedDescending : .orderedSame)
        }
        #expect(byLength.selector == nil)
        let sorted = people.sortedArray(using: [byLength, NSSortDescriptor(key: "name", ascending: true)])
        #expect(names(sorted) == ["-", "bob", "Alice", "carol", "Émile"])
    }

    @Test func reversedSortDescriptor() throws {
        let descriptor = NSSortDescriptor(key: "age", ascending: true)
        let reversed = try #require(descriptor.reversedSortDescriptor as? NSSortDescriptor)
        #expect(reversed.key == "age")
        #expect(!reversed.ascending)
        #expect(reversed.selector == descriptor.selector)
    }

    @Test func compareTo() {
        let descriptor = NSSortDescriptor(key: "age", ascending: true)
        let young: NSDictionary = ["age": 20]
        let old: NSDictionary = ["age": 60]
        #expect(descriptor.compare(young, to: old) == .orderedAscending)
        #expect(descriptor.compare(old, to: young) == .orderedDescending)
        #expect(descriptor.compare(old, to: old) == .orderedSame)
        let descending = NSSortDescriptor(key: "age", ascending: false)
        #expect(descending.compare(young, to: old) == .orderedDescending)
    }

    @Test func keyPathsAndDates() {
        let events: NSArray = [
            ["when": ["date": Date(timeIntervalSinceReferenceDate: 30)], "id": 1],
            ["when": ["date": Date(timeIntervalSinceReferenceDate: 10)], "id": 2],
            ["when": ["date": Date(timeIntervalSinceReferenceDate: 20)], "id": 3],
        ]
        let sorted = events.sortedArray(using: [NSSortDescriptor(key: "when.date", ascending: true)])
        #expect(sorted.map { ($0 as? NSDictionary)?["id"] as? Int } == [2, 3, 1])
    }

    @Test func equalityAndDescription() {
        #expect(NSSortDescriptor(key: "a", ascending: true) == NSSortDescriptor(key: "a", ascending: true))
        #expect(NSSortDescriptor(key: "a", ascending: true) != NSSortDescriptor(key: "a", ascending: false))
        #expect(NSSortDescriptor(key: "a", ascending: true) != NSSortDescriptor(key: "b", ascending: true))
        #expect(NSSortDescriptor(key: "name", ascending: true).description == "(name, ascending, compare:)")
    }

    @Test func mutableArraySortsInPlace() {
        let array = NSMutableArray(array: [3, 1, 2])
        array.sort(using: [NSSortDescriptor(key: nil, ascending: true)])
        #expect(array as? [Int] == [1, 2, 3])
    }

    #if !canImport(CoreData)
    struct Item {
        var name: String
        var rank: Int
    }

    @Test func swiftArraysAndKeyPaths() {
        let items = [Item(name: "b", rank: 2), Item(name: "a", rank: 2), Item(name: "c", rank: 1)]
        let sorted = items.sorted(using: [
            NSSortDescriptor(key: "rank", ascending: true), NSSortDescriptor(key: "name", ascending: true),
        ])
        #expect(sorted.map(\.name) == ["c", "a", "b"])
        let byKeyPath = items.sorted(using: [NSSortDescriptor(keyPath: \Item.name, ascending: false)])
        #expect(byKeyPath.map(\.name) == ["c", "b", "a"])
        var mutable = items
        mutable.sort(using: [NSSortDescriptor(key: "name", ascending: true)])
        #expect(mutable.map(\.name) == ["a", "b", "c"])
    }
    #endif
}
