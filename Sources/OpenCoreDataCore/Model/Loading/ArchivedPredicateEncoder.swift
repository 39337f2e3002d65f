/// Archives predicates and expressions as Foundation's classes encode themselves (`NSComparisonPredicate` with an
/// `NSPredicateOperator`, `NSKeyPathExpression` with an `NSKeyPathSpecifierExpression`…), for the validation
/// predicates, fetch requests and derivations of compiled models and the expressions of compiled mapping models;
/// `ArchivedPredicateDecoder` reads them back.
///
/// Block predicates and expressions cannot be archived (Apple's framework refuses them too); neither, in this
/// release, can set expressions, conditionals, assignments, `ANYKEY` and custom-selector comparisons.
enum ArchivedPredicateEncoder {
    typealias Failure = KeyedArchive.Failure

    static func predicate(_ predicate: NSPredicate, into writer: inout KeyedArchiveWriter) throws(Failure)
        -> PropertyListValue
    {
        switch predicate {
        case let comparison as NSComparisonPredicate:
            return try self.comparison(comparison, into: &writer)
        case let compound as NSCompoundPredicate:
            return try writer.encodeObject(className: "NSCompoundPredicate") { (writer, _) throws(Failure) in
                var subpredicates: [PropertyListValue] = []
                for subpredicate in compound.predicates {
                    subpredicates.append(try self.predicate(subpredicate, into: &writer))
                }
                return [
                    "NSCompoundPredicateType": .integer(Int64(compound.compoundPredicateType.rawValue)),
                    "NSSubpredicates": writer.collection("NSArray", subpredicates),
                ]
            }
        default:
            switch predicate.predicateKind {
            case .value(let value):
                return writer.encodeObject(className: value ? "NSTruePredicate" : "NSFalsePredicate") { _, _ in [:] }
            case .decoded(let inner):
                return try self.predicate(inner, into: &writer)
            case .block:
                throw Failure(description: "a block predicate cannot be archived")
            case .subclass:
                throw Failure(description: "a predicate of class \(type(of: predicate)) cannot be archived")
            }
        }
    }

    private static func comparison(_ comparison: NSComparisonPredicate, into writer: inout KeyedArchiveWriter)
        throws(Failure) -> PropertyListValue
    {
        if let selector = comparison.customSelector {
            throw Failure(description: "a comparison with the custom selector \(selector.name) cannot be archived")
        }
        return try writer.encodeObject(className: "NSComparisonPredicate") { (writer, _) throws(Failure) in
            let left = try expression(comparison.leftExpression, into: &writer)
            let right = try expression(comparison.rightExpression, into: &writer)
            return [
                "NSLeftExpression": left, "NSRightExpression": right,
                "NSPredicateOperator": predicateOperator(of: comparison, into: &writer),
            ]
        }
    }

    /// The operator object: Foundation has one class per family of operators, each with its own keys.
    private static func predicateOperator(
        of comparison: NSComparisonPredicate, into writer: inout KeyedArchiveWriter
    ) -> PropertyListValue {
        let type = comparison.predicateOperatorType
        var fields: [String: PropertyListValue] = [
            "NSOperatorType": .integer(Int64(type.rawValue)),
            "NSModifier": .integer(Int64(comparison.comparisonPredicateModifier.rawValue)),
        ]
        let options = PropertyListValue.integer(Int64(comparison.options.rawValue))
        let className: String
        switch type {
        case .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo, .customSelector:
            className = "NSComparisonPredicateOperator"
            fields["NSVariant"] = .integer(Int64(type.rawValue))
            fields["NSOptions"] = options
        case .equalTo, .notEqualTo:
            className = "NSEqualityPredicateOperator"
            fields["NSNegate"] = .bool(type == .notEqualTo)
            fields["NSOptions"] = options
        case .matches:
            className = "NSMatchingPredicateOperator"
            fields["NSFlags"] = options
        case .like:
            className = "NSLikePredicateOperator"
            fields["NSFlags"] = options
        case .beginsWith, .endsWith:
            className = "NSSubstringPredicateOperator"
            fields["NSFlags"] = options
            fields["NSPosition"] = .integer(type == .beginsWith ? 0 : 1)
        case .in, .contains:
            className = "NSInPredicateOperator"
            fields["NSFlags"] = options
        case .between:
            className = "NSBetweenPredicateOperator"
        }
        return writer.encodeObject(className: className) { _, _ in fields }
    }

    static func expression(_ expression: NSExpression, into writer: inout KeyedArchiveWriter) throws(Failure)
        -> PropertyListValue
    {
        switch expression.kind {
        case .constant(let value):
            return try writer.encodeObject(className: "NSConstantValueExpression") { (writer, _) throws(Failure) in
                ["NSExpressionType": .integer(0), "NSConstantValue": try writer.value(value)]
            }
        case .evaluatedObject:
            return writer.encodeObject(className: "NSSelfExpression") { _, _ in ["NSExpressionType": .integer(1)] }
        case .variable(let name):
            return writer.encodeObject(className: "NSVariableExpression") { writer, _ in
                ["NSExpressionType": .integer(2), "NSVariable": writer.string(name)]
            }
        case .keyPath(_, let components, let operand):
            return try writer.encodeObject(className: "NSKeyPathExpression") { (writer, _) throws(Failure) in
                // Apple's parser gives a key path on another expression (`$FETCH_SOURCE.name`) the type of the
                // function it is, and reads single keys of the evaluated object with `valueForKey:`.
                let onSelf = operand == nil
                let target = try self.expression(operand ?? NSExpression.expressionForEvaluatedObject(), into: &writer)
                let selector = onSelf && components.count == 1 ? "valueForKey:" : "valueForKeyPath:"
                let specifier = writer.encodeObject(className: "NSKeyPathSpecifierExpression") { writer, _ in
                    ["NSExpressionType": .integer(10), "NSKeyPath": writer.string(components.joined(separator: "."))]
                }
                return [
                    "NSExpressionType": .integer(onSelf ? 3 : 4), "NSOperand": target,
                    "NSSelectorName": writer.string(selector),
                    "NSArguments": writer.collection("NSMutableArray", [specifier]),
                ]
            }
        case .function(let name, let target, let arguments):
            return try writer.encodeObject(className: "NSFunctionExpression") { (writer, _) throws(Failure) in
                // Built-in functions (`count:`, `add:to:`…) are class methods of `_NSPredicateUtilities`, which
                // the operand names.
                let operand: PropertyListValue
                if let target {
                    operand = try self.expression(target, into: &writer)
                } else {
                    operand = writer.encodeObject(className: "NSConstantValueExpression") { writer, _ in
                        [
                            "NSExpressionType": .integer(0),
                            "NSConstantValueClassName": writer.string("_NSPredicateUtilities"),
                        ]
                    }
                }
                let selector = writer.string(name)
                var encoded: [PropertyListValue] = []
                for argument in arguments { encoded.append(try self.expression(argument, into: &writer)) }
                return [
                    "NSExpressionType": .integer(4), "NSOperand": operand, "NSSelectorName": selector,
                    "NSArguments": writer.collection("NSArray", encoded),
                ]
            }
        case .aggregate(let expressions):
            return try writer.encodeObject(className: "NSAggregateExpression") { (writer, _) throws(Failure) in
                var encoded: [PropertyListValue] = []
                for element in expressions { encoded.append(try self.expression(element, into: &writer)) }
                return ["NSExpressionType": .integer(14), "NSCollection": writer.collection("NSArray", encoded)]
            }
        case .subquery(let collection, let variable, let predicate):
            return try writer.encodeObject(className: "NSSubqueryExpression") { (writer, _) throws(Failure) in
                let source = try self.expression(collection, into: &writer)
                let name = writer.string(variable)
                let condition = try self.predicate(predicate, into: &writer)
                return [
                    "NSExpressionType": .integer(13), "NSExpression": source, "NSVariable": name,
                    "NSSubpredicate": condition,
                ]
            }
        case .fetch(let request, let context, let countOnly):
            // As mapping models hold the source fetch of an entity mapping (`FETCH(FUNCTION($manager, …),
            // $manager.sourceContext, NO)`).
            return try writer.encodeObject(className: "NSFetchRequestExpression") { (writer, _) throws(Failure) in
                let requestExpression = try self.expression(request, into: &writer)
                let contextExpression = try self.expression(context, into: &writer)
                return [
                    "NSExpressionType": .integer(50), "NSFRExpression": requestExpression,
                    "NSMOCExpression": contextExpression, "NSCountOnlyFlag": .bool(countOnly),
                ]
            }
        case .block:
            throw Failure(description: "a block expression cannot be archived")
        case .unionSet, .intersectSet, .minusSet, .anyKey, .conditional, .assignment, .symbolicIndex:
            throw Failure(description: "the expression \(expression.description) cannot be archived by this release")
        }
    }
}
