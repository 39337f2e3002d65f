import OpenCoreDataShim
import Testing

@Suite struct ValueTransformerTests {
    @Test func secureUnarchiveRoundTrip() throws {
        let transformer = try #require(ValueTransformer(forName: .secureUnarchiveFromDataTransformerName))
        let data = try #require(transformer.reverseTransformedValue(["a", "b"]) as? Data)
        #expect(transformer.transformedValue(data) as? [String] == ["a", "b"])
        #expect(transformer.transformedValue(Data("not an archive".utf8)) == nil)
    }

    @Test func builtInTransformers() throws {
        let negate = try #require(ValueTransformer(forName: .negateBooleanTransformerName))
        #expect(negate.transformedValue(true) as? Bool == false)
        let isNil = try #require(ValueTransformer(forName: .isNilTransformerName))
        #expect(isNil.transformedValue(nil) as? Bool == true)
        #expect(ValueTransformer(forName: NSValueTransformerName("NoSuchTransformer")) == nil)
    }

    @Test func registeredTransformers() throws {
        final class Reverse: ValueTransformer, @unchecked Sendable {
            override class func allowsReverseTransformation() -> Bool { true }
            override func transformedValue(_ value: Any?) -> Any? { (value as? String).map { String($0.reversed()) } }
            override func reverseTransformedValue(_ value: Any?) -> Any? { transformedValue(value) }
        }
        let name = NSValueTransformerName("TestReverse")
        ValueTransformer.setValueTransformer(Reverse(), forName: name)
        defer { ValueTransformer.setValueTransformer(nil, forName: name) }
        #expect(ValueTransformer.valueTransformerNames().contains(name))
        #expect(ValueTransformer(forName: name)?.transformedValue("abc") as? String == "cba")
    }
}
