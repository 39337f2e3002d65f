import OpenCoreDataShim
import Testing

/// Every predefined function of `NSExpression(forFunction:arguments:)`, with the results Apple documents.
@Suite struct ExpressionFunctionTests {
    private func call(_ name: String, _ arguments: Any...) -> Any? {
        NSExpression(forFunction: name, arguments: arguments.map { NSExpression(forConstantValue: $0) })
            .expressionValue(with: nil, context: nil)
    }

    private func number(_ name: String, _ arguments: Any...) -> Double? {
        let expression = NSExpression(
            forFunction: name, arguments: arguments.map { NSExpression(forConstantValue: $0) })
        return (expression.expressionValue(with: nil, context: nil) as? NSNumber)?.doubleValue
    }

    @Test func statistics() {
        let numbers = [1, 2, 3, 4, 4, 5, 9, 11]
        #expect(number("sum:", numbers) == 39)
        #expect(number("count:", numbers) == 8)
        #expect(number("min:", numbers) == 1)
        #expect(number("max:", numbers) == 11)
        #expect(number("average:", numbers) == 4.875)
        #expect(number("median:", [3, 1, 2]) == 2)
        #expect(number("median:", numbers) == 4)
        #expect(number("median:", [1, 2, 3, 10]) == 2.5)
        #expect((call("mode:", numbers) as? [NSNumber])?.map(\.intValue) == [4])
        // The population standard deviation: Apple's documented result for these numbers is 3.21859…
        let deviation = number("stddev:", numbers) ?? 0
        #expect(abs(deviation - 3.218_59) < 0.000_01)
        #expect(number("sum:", [Double]()) == 0)
        #expect(number("count:", [Int]()) == 0)
        #expect(call("max:", [Int]()) == nil)
    }

    @Test func arithmetic() {
        #expect(number("add:to:", 2, 3) == 5)
        #expect(number("from:subtract:", 2, 3) == -1)
        #expect(number("multiply:by:", 2, 3.5) == 7)
        #expect(number("divide:by:", 7, 2) == 3.5)
        #expect(number("modulus:by:", 7, 3) == 1)
        #expect(number("modulus:by:", 7.5, 2) == 1.5)
        #expect(number("abs:", -4) == 4)
        #expect(number("abs:", -4.5) == 4.5)
        #expect(call("add:to:", 2, 3) as? Int == 5)
    }

    @Test func advancedArithmetic() {
        #expect(number("sqrt:", 16) == 4)
        #expect(number("log:", 1000) == 3)
        #expect(abs((number("ln:", 2.718_281_828_459_045) ?? 0) - 1) < 1e-12)
        #expect(number("raise:toPower:", 2, 10) == 1024)
        #expect(abs((number("exp:", 1) ?? 0) - 2.718_281_828_459_045) < 1e-12)
        #expect(number("floor:", 2.7) == 2)
        #expect(number("floor:", -2.5) == -3)
        #expect(number("ceiling:", 2.1) == 3)
        #expect(number("trunc:", -2.7) == -2)
        #expect(number("trunc:", 2.7) == 2)
    }

    @Test func strings() {
        #expect(call("uppercase:", "Straße") as? String == "STRASSE")
        #expect(call("lowercase:", "ÀBC") as? String == "àbc")
    }

    @Test func randomValues() {
        for _ in 0..<20 {
            let value = number("random") ?? -1
            #expect(value >= 0 && value < 1)
            let integer = number("randomn:", 5) ?? -1
            #expect(integer >= 0 && integer < 5 && integer == integer.rounded())
            let element = call("random:", [10, 20, 30]) as? Int ?? 0
            #expect([10, 20, 30].contains(element))
        }
    }

    @Test func now() throws {
        let before = Date()
        let value = try #require(call("now") as? Date)
        #expect(value >= before && value <= Date())
    }

    @Test func bitwise() {
        #expect(number("bitwiseAnd:with:", 0b1100, 0b1010) == 0b1000)
        #expect(number("bitwiseOr:with:", 0b1100, 0b1010) == 0b1110)
        #expect(number("bitwiseXor:with:", 0b1100, 0b1010) == 0b0110)
        #expect(number("leftshift:by:", 1, 4) == 16)
        #expect(number("rightshift:by:", 16, 2) == 4)
        #expect(number("onesComplement:", 0) == -1)
    }

    @Test func noindexAndCast() {
        #expect(call("noindex:", "x") as? String == "x")
        let date = call("castObject:toType:", 100, "NSDate") as? Date
        #expect(date?.timeIntervalSinceReferenceDate == 100)
        #expect(number("castObject:toType:", "42", "NSNumber") == 42)
        #expect(number("castObject:toType:", Date(timeIntervalSinceReferenceDate: 5), "NSNumber") == 5)
        #expect(call("castObject:toType:", 42, "NSString") as? String == "42")
    }

    @Test func functionsInFormatStrings() {
        #expect(NSExpression(format: "4 + 5 - 2**3").expressionValue(with: nil, context: nil) as? Int == 1)
        #expect(
            NSExpression(format: "sum(items.price)").expressionValue(
                with: ["items": [["price": 2], ["price": 3]]], context: nil) as? Int == 5)
        #expect(NSExpression(format: "max({3, 9, 4})").expressionValue(with: nil, context: nil) as? Int == 9)
        #expect(NSExpression(format: "abs(-3)").expressionValue(with: nil, context: nil) as? Int == 3)
        #expect(NSPredicate(format: "count(children) > 1").evaluate(with: ["children": [1, 2]]))
        #expect(NSPredicate(format: "uppercase(name) == 'BOB'").evaluate(with: ["name": "Bob"]))
        #expect(NSPredicate(format: "birthday < now()").evaluate(with: ["birthday": Date.distantPast]))
    }

    @Test func setOperations() throws {
        let union = try #require(
            NSExpression(format: "{1, 2} UNION {2, 3}").expressionValue(with: nil, context: nil) as? Set<Int>)
        #expect(union == [1, 2, 3])
        let intersection = try #require(
            NSExpression(format: "{1, 2} INTERSECT {2, 3}").expressionValue(with: nil, context: nil) as? Set<Int>)
        #expect(intersection == [2])
        let difference = try #require(
            NSExpression(format: "{1, 2} MINUS {2, 3}").expressionValue(with: nil, context: nil) as? Set<Int>)
        #expect(difference == [1])
    }

    @Test func blockExpression() {
        let expression = NSExpression(
            forBlock: { object, arguments, _ in
                let base = object as? Int ?? 0
                let increment = arguments.first?.expressionValue(with: nil, context: nil) as? Int ?? 0
                return base + increment
            }, arguments: [NSExpression(forConstantValue: 10)])
        #expect(expression.expressionType == .block)
        #expect(expression.expressionValue(with: 5, context: nil) as? Int == 15)
    }
}
