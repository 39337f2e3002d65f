import OpenCoreDataShim
import Testing

/// `NSExpression`'s initializers, expression types and accessors, and the predicate API around them.
@Suite struct ExpressionTests {
    @Test func expressionTypesAndRawValues() {
        let pairs: [(NSExpression, NSExpression.ExpressionType, UInt)] = [
            (NSExpression(forConstantValue: 1), .constantValue, 0),
            (NSExpression.expressionForEvaluatedObject(), .evaluatedObject, 1),
            (NSExpression(forVariable: "v"), .variable, 2),
            (NSExpression(forKeyPath: "a"), .keyPath, 3),
            (NSExpression(forFunction: "now", arguments: []), .function, 4),
            (
                NSExpression(forUnionSet: NSExpression(forKeyPath: "a"), with: NSExpression(forKeyPath: "b")),
                .unionSet, 5
            ),
            (
                NSExpression(forIntersectSet: NSExpression(forKeyPath: "a"), with: NSExpression(forKeyPath: "b")),
                .intersectSet, 6
            ),
            (
                NSExpression(forMinusSet: NSExpression(forKeyPath: "a"), with: NSExpression(forKeyPath: "b")),
                .minusSet, 7
            ),
            (
                NSExpression(
                    forSubquery: NSExpression(forKeyPath: "a"), usingIteratorVariable: "x",
                    predicate: NSPredicate(value: true)), .subquery, 13
            ),
            (NSExpression(forAggregate: [NSExpression(forConstantValue: 1)]), .aggregate, 14),
            (NSExpression.expressionForAnyKey(), .anyKey, 15),
            (NSExpression(forBlock: { _, _, _ in 1 }, arguments: nil), .block, 19),
            (
                NSExpression(
                    forConditional: NSPredicate(value: true), trueExpression: NSExpression(forConstantValue: 1),
                    falseExpression: NSExpression(forConstantValue: 2)), .conditional, 20
            ),
        ]
        for (expression, type, raw) in pairs {
            #expect(expression.expressionType == type)
            #expect(type.rawValue == raw)
        }
        #expect(NSExpression(expressionType: .evaluatedObject).expressionType == .evaluatedObject)
    }

    @Test func operatorAndModifierRawValues() {
        #expect(NSComparisonPredicate.Operator.lessThan.rawValue == 0)
        #expect(NSComparisonPredicate.Operator.equalTo.rawValue == 4)
        #expect(NSComparisonPredicate.Operator.in.rawValue == 10)
        #expect(NSComparisonPredicate.Operator.customSelector.rawValue == 11)
        #expect(NSComparisonPredicate.Operator.contains.rawValue == 99)
        #expect(NSComparisonPredicate.Operator.between.rawValue == 100)
        #expect(NSComparisonPredicate.Modifier.any.rawValue == 2)
        #expect(NSComparisonPredicate.Options.diacriticInsensitive.rawValue == 2)
        #expect(NSCompoundPredicate.LogicalType.or.rawValue == 2)
    }

    @Test func accessors() throws {
        let function = NSExpression(forFunction: "add:to:", arguments: [1, NSExpression(forKeyPath: "a")])
        #expect(function.function == "add:to:")
        #expect(function.arguments?.first?.constantValue as? Int == 1)
        #expect(function.arguments?.last?.keyPath == "a")
        let target = NSExpression(
            forFunction: NSExpression(forKeyPath: "name"), selectorName: "uppercaseString", arguments: nil)
        #expect(target.operand.keyPath == "name")
        #expect(target.function == "uppercaseString")
        let union = NSExpression(forUnionSet: NSExpression(forKeyPath: "a"), with: NSExpression(forKeyPath: "b"))
        #expect(union.left.keyPath == "a")
        #expect(union.right.keyPath == "b")
        let subquery = NSExpression(
            forSubquery: NSExpression(forKeyPath: "items"), usingIteratorVariable: "i",
            predicate: NSPredicate(format: "$i > 1"))
        #expect((subquery.collection as? NSExpression)?.keyPath == "items")
        #expect(subquery.predicate.predicateFormat == "$i > 1")
        let comparison = try #require(NSPredicate(format: "ANY tags CONTAINS[cd] 'x'") as? NSComparisonPredicate)
        #expect(comparison.leftExpression.keyPath == "tags")
        #expect(comparison.rightExpression.constantValue as? String == "x")
        #expect(comparison.predicateOperatorType == .contains)
        #expect(comparison.comparisonPredicateModifier == .any)
        #expect(comparison.options == [.caseInsensitive, .diacriticInsensitive])
        #expect(comparison.customSelector == nil)
    }

    @Test func wrongAccessorStopsTheProgram() async {
        await #expect(processExitsWith: .failure) {
            _ = NSExpression(forConstantValue: 1).keyPath
        }
    }

    @Test func contextReceivesBindings() {
        let context = NSMutableDictionary(dictionary: ["rate": 2])
        let expression = NSExpression(format: "$rate * price")
        #expect(expression.expressionValue(with: ["price": 10], context: context) as? Int == 20)
    }

    @Test func filteringCollections() {
        let predicate = NSPredicate(format: "SELF > 2")
        #expect((NSArray(array: [1, 2, 3, 4]).filtered(using: predicate) as? [Int]) == [3, 4])
        #expect(NSSet(array: [1, 2, 3, 4]).filtered(using: predicate) == Set([3, 4] as [AnyHashable]))
        #expect(NSOrderedSet(array: [4, 1, 3]).filtered(using: predicate).array as? [Int] == [4, 3])
        let mutableSet = NSMutableSet(array: [1, 5])
        mutableSet.filter(using: predicate)
        #expect(mutableSet.allObjects as? [Int] == [5])
        let mutableOrdered = NSMutableOrderedSet(array: [5, 1, 6])
        mutableOrdered.filter(using: predicate)
        #expect(mutableOrdered.array as? [Int] == [5, 6])
    }

    @Test func copiesAreEqual() {
        let expression = NSExpression(format: "a + 1")
        #expect(expression.copy() as? NSExpression == expression)
        let predicate = NSPredicate(format: "a > 1")
        #expect(predicate.copy() as? NSPredicate == predicate)
    }

    #if !canImport(CoreData)
    struct Box: PredicateFunctionTarget {
        var width: Double

        func respondsToPredicateFunction(_ name: String) -> Bool {
            name == "scaledBy:" || name == "isWiderThan:"
        }

        func performPredicateFunction(_ name: String, arguments: [Any?]) -> Any? {
            let factor = (arguments.first as? NSNumber)?.doubleValue ?? 0
            return name == "scaledBy:" ? width * factor : width > factor
        }
    }

    @Test func functionTargets() {
        #expect(NSPredicate(format: "FUNCTION(SELF, 'scaledBy:', 2) > 10").evaluate(with: Box(width: 6)))
        #expect(!NSPredicate(format: "FUNCTION(SELF, 'scaledBy:', 2) > 10").evaluate(with: Box(width: 4)))
        let custom = NSComparisonPredicate(
            leftExpression: NSExpression.expressionForEvaluatedObject(),
            rightExpression: NSExpression(forConstantValue: 5), customSelector: Selector("isWiderThan:"))
        #expect(custom.evaluate(with: Box(width: 6)))
        #expect(!custom.evaluate(with: Box(width: 4)))
        #expect(NSPredicate(format: "FUNCTION(name, 'uppercaseString') == 'BOB'").evaluate(with: ["name": "Bob"]))
        #expect(NSPredicate(format: "FUNCTION(SELF, 'valueForKey:', 'n') == 3").evaluate(with: ["n": 3]))
    }

    @Test func unknownFunctionStopsTheProgram() async {
        await #expect(processExitsWith: .failure) {
            _ = NSPredicate(format: "FUNCTION(SELF, 'frobnicate:', 1) == 1").evaluate(with: 3)
        }
    }

    @Test func codableRoundTrip() throws {
        let predicate = NSPredicate(
            format: "name BEGINSWITH[c] 'a' AND ANY tags IN {'x', 'y'} AND d > %@",
            argumentArray: [Date(timeIntervalSinceReferenceDate: 5)])
        let data = try JSONEncoder().encode(predicate)
        let decoded = try JSONDecoder().decode(NSPredicate.self, from: data)
        #expect(decoded == predicate)
        #expect(decoded.predicateFormat == predicate.predicateFormat)
        decoded.allowEvaluation()
        #expect(decoded.evaluate(with: ["name": "Ann", "tags": ["y"], "d": Date(timeIntervalSinceReferenceDate: 9)]))
        let compound = try JSONDecoder().decode(NSCompoundPredicate.self, from: data)
        #expect(compound.subpredicates.count == 3)
        #expect(throws: DecodingError.self) {
            _ = try JSONDecoder().decode(NSComparisonPredicate.self, from: data)
        }
        let expression = NSExpression(format: "sum:(a) + 1")
        let decodedExpression = try JSONDecoder().decode(
            NSExpression.self, from: try JSONEncoder().encode(expression))
        #expect(decodedExpression == expression)
        #expect(throws: DecodingError.self) {
            _ = try JSONDecoder().decode(NSPredicate.self, from: Data("\"a ==\"".utf8))
        }
        #expect(throws: EncodingError.self) {
            _ = try JSONEncoder().encode(NSPredicate { _, _ in true })
        }
    }

    @Test func decodedPredicatesNeedAllowEvaluation() async {
        await #expect(processExitsWith: .failure) {
            let data = try JSONEncoder().encode(NSPredicate(format: "a == 1"))
            let decoded = try JSONDecoder().decode(NSPredicate.self, from: data)
            _ = decoded.evaluate(with: ["a": 1])
        }
    }

    @Test func selectorValues() {
        let literal: Selector = "compare:"
        #expect(literal == Selector("compare:"))
        #expect(NSStringFromSelector(literal) == "compare:")
        #expect(NSSelectorFromString("compare:") == literal)
    }
    #endif
}
