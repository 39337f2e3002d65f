import Foundation
import Testing

@testable import OpenCoreDataCore

/// The binary property list writer under the keyed archives: what it writes, Foundation's own reader and
/// `BinaryPropertyListReader` read back as it was, at every size of count, reference and offset.
struct BinaryPropertyListWriterTests {
    /// Values of every type, with counts past 15 (a count object after the marker), more than 255 objects
    /// (two-byte references) and more than 65,535 bytes (four-byte offsets).
    static var sample: PropertyListValue {
        .dictionary([
            "small": .integer(7), "byte": .integer(255), "short": .integer(65_535), "int": .integer(4_294_967_295),
            "long": .integer(Int64.max), "negative": .integer(-1), "min": .integer(Int64.min),
            "real": .real(-2.5), "date": .date(Date(timeIntervalSinceReferenceDate: 123_456.75)),
            "true": .bool(true), "false": .bool(false), "ascii": .string("plain"), "empty": .string(""),
            "unicode": .string("héllo ✓ \u{1F600}"), "data": .data(Data((0..<40).map { UInt8($0) })),
            "many": .array((0..<300).map { .string("item \($0)") }),
            "large": .data(Data(repeating: 0xAB, count: 70_000)),
            "nested": .dictionary(["list": .array([.integer(1), .array([]), .dictionary([:])])]),
        ])
    }

    @Test func foundationReadsWhatIsWritten() throws {
        let data = BinaryPropertyListWriter.data(Self.sample)
        var format = PropertyListSerialization.PropertyListFormat.xml
        let plist = try #require(
            try PropertyListSerialization.propertyList(from: data, options: [], format: &format) as? [String: Any])
        #expect(format == .binary)
        #expect(plist["small"] as? Int == 7)
        #expect(plist["int"] as? Int64 == 4_294_967_295)
        #expect(plist["long"] as? Int64 == Int64.max)
        #expect(plist["negative"] as? Int == -1)
        #expect(plist["min"] as? Int64 == Int64.min)
        #expect(plist["real"] as? Double == -2.5)
        #expect(plist["date"] as? Date == Date(timeIntervalSinceReferenceDate: 123_456.75))
        #expect(plist["true"] as? Bool == true)
        #expect(plist["false"] as? Bool == false)
        #expect(plist["unicode"] as? String == "héllo ✓ \u{1F600}")
        #expect(plist["empty"] as? String == "")
        #expect(plist["data"] as? Data == Data((0..<40).map { UInt8($0) }))
        #expect((plist["many"] as? [String])?.last == "item 299")
        #expect((plist["large"] as? Data)?.count == 70_000)
        let nested = try #require(plist["nested"] as? [String: Any])
        #expect((nested["list"] as? [Any])?.count == 3)
    }

    @Test func theReaderReadsBackWhatIsWritten() throws {
        #expect(try BinaryPropertyListReader(BinaryPropertyListWriter.data(Self.sample)).read() == Self.sample)
        let references: PropertyListValue = .array([.uid(0), .uid(255), .uid(256), .uid(70_000)])
        #expect(try BinaryPropertyListReader(BinaryPropertyListWriter.data(references)).read() == references)
    }

    /// Equal strings and numbers are written once, as Core Foundation writes them.
    @Test func equalValuesAreWrittenOnce() {
        let repeated = BinaryPropertyListWriter.data(.array(Array(repeating: .string("same value"), count: 100)))
        let distinct = BinaryPropertyListWriter.data(.array((0..<100).map { .string("value \($0)") }))
        #expect(repeated.count < 200)
        #expect(distinct.count > 1_000)
    }
}
