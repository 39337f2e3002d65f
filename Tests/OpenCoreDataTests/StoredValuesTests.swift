import Foundation
import Testing

@testable import OpenCoreDataCore

/// The buffer that holds every object's and row's values (an internal data structure, so these tests are
/// OpenCoreData's own). Its values are packed at their size rather than their stride and moved in and out by
/// copying bytes, so these tests check that every kind of value survives the trip, that references are neither
/// leaked nor released early, and that copies are independent.
@Suite struct StoredValuesTests {
    final class Payload {}
    struct Failure: Error {}

    /// One value of every kind, the references among them to `payload`.
    static func everyKind(_ payload: Payload) -> [StoredValue] {
        [
            .null, .int(-42), .bool(true), .double(2.5), .float(1.25), .string("twenty characters!!!"),
            .string("short"), .date(Date(timeIntervalSinceReferenceDate: 1_000)), .data(Data(repeating: 7, count: 16)),
            .data(Data([1, 2])), .uuid(UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16))),
            .url(URL(string: "https://example.com/a")!), .toManyFault, .boxed(AnyBox(payload)),
        ]
    }

    static func describe(_ value: StoredValue) -> String {
        switch value {
        case .null: "null"
        case .int(let number): "int \(number)"
        case .bool(let flag): "bool \(flag)"
        case .double(let number): "double \(number)"
        case .float(let number): "float \(number)"
        case .string(let text): "string \(text)"
        case .date(let date): "date \(date.timeIntervalSinceReferenceDate)"
        case .data(let data): "data \(Array(data))"
        case .uuid(let uuid): "uuid \(uuid.uuidString)"
        case .url(let url): "url \(url.absoluteString)"
        case .objectID(let id): "objectID \(ObjectIdentifier(id))"
        case .object(let object): "object \(ObjectIdentifier(object))"
        case .toMany(let contents): "toMany \(ObjectIdentifier(contents))"
        case .toManyFault: "toManyFault"
        case .boxed(let box): "boxed \(ObjectIdentifier(box))"
        }
    }

    @Test func everyKindOfValueReadsBackAsWritten() {
        let payload = Payload()
        let expected = Self.everyKind(payload)
        let fromCollection = StoredValues(expected)
        let filled = StoredValues(count: expected.count) { slots in
            for (index, value) in expected.enumerated() { slots[index] = value }
        }
        for values in [fromCollection, filled] {
            #expect(values.count == expected.count)
            #expect(values.map(Self.describe) == expected.map(Self.describe))
        }
    }

    @Test func referencesAreReleasedWithTheLastCopy() {
        weak var watched: Payload?
        var values: StoredValues = []
        do {
            let payload = Payload()
            watched = payload
            values = StoredValues(count: 3) { slots in
                slots[0] = .boxed(AnyBox(payload))
                slots[1] = .string(String(repeating: "x", count: 40))
                slots[2] = .boxed(AnyBox(payload))
            }
        }
        var copy = values
        copy[1] = .int(1)
        values = []
        // The copy was made on write and still holds its own boxes.
        #expect(watched != nil)
        copy[0] = .null
        #expect(watched != nil)
        copy[2] = .null
        #expect(watched == nil)
    }

    @Test func replacingAValueReleasesTheOldOne() {
        weak var watched: Payload?
        var values = StoredValues(repeating: .null, count: 4)
        do {
            let payload = Payload()
            watched = payload
            values[3] = .boxed(AnyBox(payload))
        }
        #expect(watched != nil)
        values[3] = .string("replaced")
        #expect(watched == nil)
        #expect(Self.describe(values[3]) == "string replaced")
    }

    @Test func aCopyIsIndependentOfTheOriginal() {
        let expected = Self.everyKind(Payload())
        let original = StoredValues(expected)
        var copy = original
        for index in copy.indices { copy[index] = .int(Int64(index)) }
        #expect(original.map(Self.describe) == expected.map(Self.describe))
        #expect(copy.map(Self.describe) == copy.indices.map { "int \($0)" })
    }

    @Test func valuesAreUnsharedUntilCopiedAndAgainWhenTheCopyGoes() {
        var values = StoredValues([.int(1), .string("one")])
        let alone = values.isUnshared()
        var copy: StoredValues? = values
        let whileCopied = values.isUnshared()
        let copyWhileCopied = copy?.isUnshared()
        copy = nil
        let afterwards = values.isUnshared()
        var empty = StoredValues()
        let emptyAlone = empty.isUnshared()
        #expect(alone && !whileCopied && copyWhileCopied == false && afterwards && emptyAlone)
    }

    @Test func aModificationThatThrowsStoresBackWhatTheCallerLeft() {
        var values = StoredValues([.string("kept"), .int(1)])
        func change(_ value: inout StoredValue) throws {
            value = .string("changed")
            throw Failure()
        }
        #expect(throws: Failure.self) { try change(&values[0]) }
        // The value as the caller left it is stored back, not lost or released twice.
        #expect(Self.describe(values[0]) == "string changed")
        #expect(Self.describe(values[1]) == "int 1")
    }

    @Test func valuesArePackedWithoutPadding() {
        // Ten values take their size each, not their stride (the tag byte's padding), plus the count.
        let storage = StoredValueStorage.make(count: 10)
        // Every value must be there before the buffer goes: its deinit destroys them.
        for index in 0..<10 { StoredValueStorage.store(.null, at: storage.address(index)) }
        #expect(storage.count == 10)
        #expect(MemoryLayout<StoredValue>.size < MemoryLayout<StoredValue>.stride)
        #expect(storage.address(1) - storage.address(0) == MemoryLayout<StoredValue>.size)
    }
}
