import Foundation
import Testing

@testable import OpenCoreDataCore

/// The table that holds a context's registry and a store's row cache (an internal data structure, so these tests
/// are OpenCoreData's own): it must behave as a dictionary keyed by object IDs through any mix of insertions,
/// replacements, removals (which count keys put past full groups down again), growth and copies.
@Suite struct ObjectIDDictionaryTests {
    /// A deterministic generator, so that a failure can be replayed.
    struct Generator {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }

        /// One of `keys` keys: dense row numbers (eight to a group of buckets) for odd seeds, scattered ones for even
        /// seeds, so that entries are displaced from their homes.
        mutating func key(of keys: Int, seed: UInt64) -> Int {
            let drawn = next(keys)
            return seed % 2 == 1 ? drawn : drawn &* 7_919 % 1_000_003
        }
    }

    static let entity: NSEntityDescription = {
        let entity = NSEntityDescription()
        entity.name = "Thing"
        return entity
    }()

    /// IDs as a store makes them: equal keys are different objects, as when two fetches read the same row.
    static func id(_ key: Int) -> NSManagedObjectID {
        NSManagedObjectID(entity: entity, storeReference: nil, reference: .primaryKey(Int64(key)))
    }

    func expectSame(_ table: ObjectIDDictionary<Int>, _ model: [Int: Int]) {
        #expect(table.count == model.count)
        #expect(table.isEmpty == model.isEmpty)
        var seen: [Int: Int] = [:]
        for (key, value) in table {
            guard let number = key._primaryKey else { continue }
            #expect(seen[Int(number)] == nil, "key \(number) listed twice")
            seen[Int(number)] = value
        }
        #expect(seen == model)
        for (key, value) in model {
            #expect(table[Self.id(key)] == value)
        }
    }

    @Test(arguments: [1, 2, 3, 4])
    func randomOperationsMatchADictionary(seed: UInt64) {
        var generator = Generator(state: seed)
        var table: ObjectIDDictionary<Int> = [:]
        var model: [Int: Int] = [:]
        // Few distinct keys, so that keys collide, are put past full groups and are removed again.
        let keys = 3_000
        for step in 0..<40_000 {
            let key = generator.key(of: keys, seed: seed)
            switch generator.next(10) {
            case 0..<5:
                table[Self.id(key)] = step
                model[key] = step
            case 5..<8:
                table[Self.id(key)] = nil
                model[key] = nil
            case 8:
                #expect(table.removeValue(forKey: Self.id(key)) == model.removeValue(forKey: key))
            default:
                #expect(table[Self.id(key)] == model[key])
            }
            if step % 5_000 == 0 { expectSame(table, model) }
        }
        expectSame(table, model)
    }

    @Test func keysThatShareLowBitsStillWork() {
        // Multiples of 4,096 share their low bits: a table that used them as homes would pile every entry into
        // one run.
        var table: ObjectIDDictionary<Int> = [:]
        var model: [Int: Int] = [:]
        for index in 0..<3_000 {
            table[Self.id(index * 4_096)] = index
            model[index * 4_096] = index
        }
        for index in stride(from: 0, to: 3_000, by: 3) {
            table[Self.id(index * 4_096)] = nil
            model[index * 4_096] = nil
        }
        expectSame(table, model)
    }

    @Test func aCopyIsIndependentOfTheOriginal() {
        var original: ObjectIDDictionary<Int> = [:]
        for key in 0..<1_000 { original[Self.id(key)] = key }
        var copy = original
        for key in 0..<500 { copy[Self.id(key)] = nil }
        copy[Self.id(5_000)] = 1
        #expect(original.count == 1_000)
        #expect(original[Self.id(10)] == 10)
        #expect(original[Self.id(5_000)] == nil)
        #expect(copy.count == 501)
        #expect(copy[Self.id(10)] == nil)
    }

    @Test func iteratingWhileRemovingSeesTheTableAsItWas() {
        var table: ObjectIDDictionary<Int> = [:]
        for key in 0..<2_000 { table[Self.id(key)] = key }
        var visited = 0
        for (key, _) in table {
            table[key] = nil
            visited += 1
        }
        #expect(visited == 2_000)
        #expect(table.isEmpty)
    }

    @Test func reservingCapacityKeepsTheEntries() {
        var table: ObjectIDDictionary<String> = [:]
        for key in 0..<100 { table[Self.id(key)] = "value \(key)" }
        for extra in stride(from: 100, to: 10_000, by: 100) { table.reserveCapacity(table.count + extra) }
        #expect(table.count == 100)
        #expect(table[Self.id(42)] == "value 42")
        table.removeAll(keepingCapacity: true)
        #expect(table.isEmpty)
        #expect(table[Self.id(42)] == nil)
    }

    @Test func aConditionalRemovalSeesTheValueInPlaceAndRemovesOnlyWhatItPicks() {
        var table: ObjectIDDictionary<StoredValues> = [:]
        for key in 0..<100 { table[Self.id(key)] = StoredValues([.int(Int64(key))]) }
        // Values 0..<50 are also held elsewhere; the condition must see them as shared, not make a copy of its own.
        let held = (0..<50).map { table[Self.id($0)] }
        withExtendedLifetime(held) {
            for key in 0..<100 { table.removeValue(forKey: Self.id(key)) { $0.isUnshared() } }
        }
        #expect(table.count == 50)
        #expect((0..<50).allSatisfy { table[Self.id($0)] != nil })
        #expect((50..<100).allSatisfy { table[Self.id($0)] == nil })
        // An absent key, and one the condition keeps, leave the table as it was.
        table.removeValue(forKey: Self.id(500)) { _ in true }
        table.removeValue(forKey: Self.id(7)) { _ in false }
        #expect(table.count == 50)
        // A table shared with a copy is copied first: the copy keeps its entries.
        let copy = table
        table.removeValue(forKey: Self.id(3)) { _ in true }
        #expect(table[Self.id(3)] == nil)
        #expect(copy[Self.id(3)] != nil)
    }

    @Test(arguments: [false, true])
    func aTableKeptNearlyFullThroughChurnStaysRight(dense: Bool) {
        // Keys put past full groups, removed and put again at the table's capacity: each group's count of the keys
        // put past it must stay right, or lookups stop short (an entry lost) or go on past the end of a sequence.
        var generator = Generator(state: dense ? 11 : 12)
        var table: ObjectIDDictionary<Int> = [:]
        var model: [Int: Int] = [:]
        var present: [Int] = []
        func key(_ index: Int) -> Int { dense ? index : index &* 7_919 % 1_000_003 }
        for index in 0..<819 {
            table[Self.id(key(index))] = index
            model[key(index)] = index
            present.append(key(index))
        }
        var next = 819
        for step in 0..<30_000 {
            let position = generator.next(present.count)
            let gone = present[position]
            table[Self.id(gone)] = nil
            model[gone] = nil
            present[position] = key(next)
            table[Self.id(key(next))] = step
            model[key(next)] = step
            next += 1
            #expect(table[Self.id(gone)] == nil)
            if step % 3_000 == 0 { expectSame(table, model) }
        }
        expectSame(table, model)
    }

    @Test func aTableEmptiedGroupByGroupTakesItsKeysAgain() {
        // Dense keys fill whole groups, and the keys of groups that collide are put past them.
        var table: ObjectIDDictionary<Int> = [:]
        for round in 0..<3 {
            for key in 0..<5_000 { table[Self.id(key)] = key + round }
            expectSame(table, Dictionary(uniqueKeysWithValues: (0..<5_000).map { ($0, $0 + round) }))
            for key in stride(from: 0, to: 5_000, by: 2) { table[Self.id(key)] = nil }
            let odd = stride(from: 1, to: 5_000, by: 2).map { ($0, $0 + round) }
            expectSame(table, Dictionary(uniqueKeysWithValues: odd))
            for key in stride(from: 1, to: 5_000, by: 2) { table[Self.id(key)] = nil }
            #expect(table.isEmpty)
            #expect(table[Self.id(7)] == nil)
        }
    }

    /// The registry's table, whose buckets hold only objects and read each object's key from the object: it must find,
    /// replace and remove objects by their IDs through any mix of registrations (an object with the ID of another
    /// replaces it), removals of the registered object and of a replaced one (which finds nothing), growth and copies.
    @Test(arguments: [5, 6])
    func theRegistryFindsObjectsByTheirOwnIDs(seed: UInt64) {
        var generator = Generator(state: seed)
        var registry: ObjectRegistry = [:]
        var model: [Int: NSManagedObject] = [:]
        var alive: [NSManagedObject] = []
        var copies: [(registry: ObjectRegistry, model: [Int: NSManagedObject])] = []
        let keys = 2_000
        for step in 0..<20_000 {
            let key = generator.key(of: keys, seed: seed)
            switch generator.next(10) {
            case 0..<6:
                let object = NSManagedObject(entity: Self.entity, insertInto: nil)
                object._objectID = Self.id(key)
                alive.append(object)
                registry.register(object)
                model[key] = object
            case 6..<9:
                guard let registered = model[key] else {
                    #expect(registry[Self.id(key)] == nil)
                    continue
                }
                // An object replaced under its ID is no longer the one registered: removing it removes nothing.
                let replaced = alive.last { $0._objectID._primaryKey == Int64(key) && $0 !== registered }
                if let replaced {
                    let removedReplaced = registry.removeObject(replaced)
                    #expect(!removedReplaced)
                }
                let removed = registry.removeObject(registered)
                #expect(removed)
                model[key] = nil
            default:
                if copies.count < 3, step % 1_000 == 0 { copies.append((registry, model)) }
            }
            if step % 2_000 == 0 { expectSame(registry, model) }
        }
        expectSame(registry, model)
        // The copies kept what they held when they were made.
        for copy in copies { expectSame(copy.registry, copy.model) }
    }

    func expectSame(_ registry: ObjectRegistry, _ model: [Int: NSManagedObject]) {
        #expect(registry.count == model.count)
        for (key, object) in model {
            #expect(registry[Self.id(key)]?.takeUnretainedValue() === object)
        }
        for (key, value) in registry {
            #expect(key === value.takeUnretainedValue()._objectID)
        }
    }
}
