// Apple's accessors: each is meaningful for some expression types only, and asking the wrong type raises an
// exception on Apple platforms. Here it stops the program with a message naming the accessor and the type.

extension NSExpression {
    /// The kind of the expression.
    public var expressionType: ExpressionType {
        switch kind {
        case .constant, .symbolicIndex: .constantValue
        case .evaluatedObject: .evaluatedObject
        case .variable, .assignment: .variable
        case .keyPath: .keyPath
        case .function: .function
        case .unionSet: .unionSet
        case .intersectSet: .intersectSet
        case .minusSet: .minusSet
        case .subquery: .subquery
        case .aggregate: .aggregate
        case .anyKey: .anyKey
        case .block: .block
        case .conditional: .conditional
        case .fetch: .fetchRequest
        }
    }

    /// The constant value of a constant-value expression (`nil` for `NULL`); for an aggregate, the array of its
    /// subexpressions.
    public var constantValue: Any? {
        switch kind {
        case .constant(let value): return _isNullObject ? NSNull() : value
        case .symbolicIndex(let index): return index.rawValue
        case .aggregate(let expressions): return expressions
        default: wrongType("constantValue")
        }
    }

    /// The key path of a key-path expression.
    public var keyPath: String {
        guard case .keyPath(let path, _, _) = kind else { wrongType("keyPath") }
        return path
    }

    /// The function name of a function expression (`"sum:"`, or the selector name of `FUNCTION(…)`).
    public var function: String {
        guard case .function(let name, _, _) = kind else { wrongType("function") }
        return name
    }

    /// The variable name of a variable expression, or the iterator variable of a subquery.
    public var variable: String {
        switch kind {
        case .variable(let name), .assignment(let name, _), .subquery(_, let name, _): return name
        default: wrongType("variable")
        }
    }

    /// The object on which a function or key path is evaluated: the target of `FUNCTION(target, …)`, the operand of
    /// `$x.name`, the evaluated object for a plain key path.
    public var operand: NSExpression {
        switch kind {
        case .function(_, let target, _):
            return target ?? NSExpression(kind: .constant("_NSPredicateUtilities"))
        case .keyPath(_, _, let operand):
            return operand ?? NSExpression.expressionForEvaluatedObject()
        default:
            wrongType("operand")
        }
    }

    /// The argument expressions of a function or block expression.
    public var arguments: [NSExpression]? {
        switch kind {
        case .function(_, _, let arguments): return arguments
        case .block(_, let arguments): return arguments
        default: wrongType("arguments")
        }
    }

    /// The collection of a subquery expression (the expression it filters), or the subexpressions of an
    /// aggregate expression.
    public var collection: Any {
        switch kind {
        case .subquery(let collection, _, _): return collection
        case .aggregate(let expressions): return expressions
        default: wrongType("collection")
        }
    }

    /// The predicate of a subquery or conditional expression.
    public var predicate: NSPredicate {
        switch kind {
        case .subquery(_, _, let predicate): return predicate
        case .conditional(let predicate, _, _): return predicate
        default: wrongType("predicate")
        }
    }

    /// The left-hand expression of a set expression.
    public var left: NSExpression {
        switch kind {
        case .unionSet(let left, _), .intersectSet(let left, _), .minusSet(let left, _): return left
        default: wrongType("left")
        }
    }

    /// The right-hand expression of a set expression.
    public var right: NSExpression {
        switch kind {
        case .unionSet(_, let right), .intersectSet(_, let right), .minusSet(_, let right): return right
        default: wrongType("right")
        }
    }

    /// The expression a conditional evaluates when its predicate holds.
    public var trueExpression: NSExpression {
        guard case .conditional(_, let expression, _) = kind else { wrongType("trueExpression") }
        return expression
    }

    /// The expression a conditional evaluates when its predicate does not hold.
    public var falseExpression: NSExpression {
        guard case .conditional(_, _, let expression) = kind else { wrongType("falseExpression") }
        return expression
    }

    /// The block of a block expression.
    public var expressionBlock: (Any?, [NSExpression], NSMutableDictionary?) -> Any {
        guard case .block(let block, _) = kind else { wrongType("expressionBlock") }
        return block
    }

    private func wrongType(_ accessor: String) -> Never {
        preconditionFailure(
            "NSExpression: \(accessor) is not defined for an expression of type "
                + ".\(expressionType) (\(expressionFormat))")
    }
}
