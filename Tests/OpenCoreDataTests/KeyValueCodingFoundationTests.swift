import OpenCoreDataShim
import Testing

@Suite struct KeyValueCodingFoundationTests {
    @Test func stringsAnswerLengthAsNSStringDoes() {
        #expect(NSPredicate(format: "length >= 2").evaluate(with: "abc"))
        #expect(!NSPredicate(format: "length >= 4").evaluate(with: "abc" as NSString))
        #expect(NSPredicate(format: "length == 2").evaluate(with: "é!"))
        #expect(NSPredicate(format: "uppercaseString == 'ABC'").evaluate(with: "abc"))
    }
}
