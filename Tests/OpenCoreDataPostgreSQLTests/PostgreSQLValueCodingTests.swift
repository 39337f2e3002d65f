import Foundation
import OpenCoreData
import Testing

@testable import OpenCoreDataCore
@testable import OpenCoreDataPostgreSQL

/// Column text read in place, as the store decodes fetched rows: the same values as through a `String`, and `nil` (or
/// `.null`) for text a damaged or foreign table may hold, never a crash. No server needed.
struct PostgreSQLValueCodingTests {
    func inPlace<T>(_ text: String, _ body: (UnsafeBufferPointer<UInt8>) -> T) -> T {
        var text = text
        return text.withUTF8(body)
    }

    @Test(arguments: [
        "0", "42", "-42", "+7", "007", "9223372036854775807", "-9223372036854775808", "", "-", "+", "12a", " 1", "1 ",
        "--1", "9223372036854775808", "-9223372036854775809", "99999999999999999999", "1.5", "٣",
    ])
    func integersReadInPlaceAsInt64ReadsThem(text: String) {
        #expect(inPlace(text, PostgreSQLValueCoding.int64) == Int64(text))
    }

    @Test func byteaTextReadInPlace() {
        #expect(inPlace(#"\x"#, PostgreSQLValueCoding.data) == Data())
        #expect(inPlace(#"\x0aFf10"#, PostgreSQLValueCoding.data) == Data([0x0a, 0xff, 0x10]))
        for damaged in [#"\x0"#, #"\xzz"#, "x00", "", #"\"#, #"\x0g"#] {
            #expect(inPlace(damaged, PostgreSQLValueCoding.data) == nil)
        }
    }

    @Test func attributeValuesReadInPlaceEqualThoseReadThroughAString() {
        let cases: [(NSAttributeType, String)] = [
            (.integer64AttributeType, "-12"), (.integer32AttributeType, "x"), (.stringAttributeType, "héllo ✓"),
            (.binaryDataAttributeType, #"\x00ff"#), (.binaryDataAttributeType, "bad"), (.doubleAttributeType, "2.5"),
            (.booleanAttributeType, "t"), (.dateAttributeType, "86400"),
        ]
        for (type, text) in cases {
            let attribute = NSAttributeDescription()
            attribute.attributeType = type
            let inPlace = inPlace(text) { PostgreSQLValueCoding.value($0, type: type, attribute: attribute) }
            let throughString = PostgreSQLValueCoding.value(text, type: type, attribute: attribute)
            #expect(inPlace.publicValue as? NSObject == throughString.publicValue as? NSObject, "\(type) \(text)")
        }
    }

    @Test func identifiersAreQuotedWithTheirQuotesDoubled() {
        #expect(quoted("ZITEM") == #""ZITEM""#)
        #expect(quoted(#"a"b""#) == #""a""b""""#)
        #expect(quoted(#"""#) == #""""""#)
        #expect(quoted("") == #""""#)
    }
}
