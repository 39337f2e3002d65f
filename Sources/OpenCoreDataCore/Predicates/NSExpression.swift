// Foundation on Linux marks `NSExpression` unavailable. This class has Apple's name, initializers, accessors and
// `ExpressionType` raw values, so that it shadows Foundation's for clients. Apple implements the expression kinds
// as private subclasses; here one class holds an internal `Kind`, which the evaluator, the printer and (later) the
// SQL generator switch over.

/// An expression in a predicate: a constant, a key path, a variable, a function call, a set operation, a subquery,
/// an aggregate, a block or a conditional.
///
/// ```swift
/// let salary = NSExpression(forKeyPath: "salary")
/// let raised = NSExpression(forFunction: "multiply:by:", arguments: [salary, NSExpression(forConstantValue: 1.1)])
/// raised.expressionValue(with: ["salary": 1000], context: nil)  // 1100
/// ```
///
/// Asking an expression for an accessor its type does not have (the `keyPath` of a constant) stops the program, as
/// Apple raises an exception.
open class NSExpression: NSObject, NSCopying, Codable, @unchecked Sendable {
    // @unchecked: an expression is immutable once made, as Apple's is (`_isNullObject` is set while it is made).
    /// The kinds of expression, with Apple's raw values.
    public enum ExpressionType: UInt, Sendable {
        /// An expression that always returns the same value.
        case constantValue = 0
        /// An expression that always returns the parameter object itself (`SELF`).
        case evaluatedObject = 1
        /// An expression that always returns whatever value is associated with the key in the bindings dictionary.
        case variable = 2
        /// An expression that returns something that can be used as a key path.
        case keyPath = 3
        /// An expression that returns the result of evaluating a function.
        case function = 4
        /// An expression that creates a union of the results of two nested expressions.
        case unionSet = 5
        /// An expression that creates an intersection of the results of two nested expressions.
        case intersectSet = 6
        /// An expression that combines two nested expression results by set subtraction.
        case minusSet = 7
        /// An expression that filters a collection using a subpredicate.
        case subquery = 13
        /// An expression that defines an aggregate of `NSExpression` objects.
        case aggregate = 14
        /// An expression that represents any key for a Spotlight query.
        case anyKey = 15
        /// An expression that uses a block.
        case block = 19
        /// An expression that chooses between two expressions from the result of a predicate.
        case conditional = 20
        /// An expression that executes a fetch request in a managed object context (`FETCH(request, context, NO)`):
        /// Core Data's `NSFetchRequestExpressionType`.
        case fetchRequest = 50
    }

    /// The symbolic indexes of `array[FIRST]`, `array[LAST]` and `array[SIZE]`.
    enum SymbolicIndex: String, Sendable {
        case first = "FIRST"
        case last = "LAST"
        case size = "SIZE"
    }

    /// What an expression is. Children are `NSExpression`s so that the public accessors return them unchanged.
    enum Kind {
        case constant(Any?)
        case evaluatedObject
        case variable(String)
        /// A key path on the evaluated object (`operand == nil`) or on another expression (`$x.name`,
        /// `SUBQUERY(…).@count`). `components` is the key path split once for evaluation.
        case keyPath(String, components: [String], operand: NSExpression?)
        /// A built-in function (`target == nil`: `sum:`, `add:to:`…) or `FUNCTION(target, 'selector', …)`.
        case function(String, target: NSExpression?, arguments: [NSExpression])
        case unionSet(NSExpression, NSExpression)
        case intersectSet(NSExpression, NSExpression)
        case minusSet(NSExpression, NSExpression)
        case subquery(NSExpression, variable: String, predicate: NSPredicate)
        case aggregate([NSExpression])
        case anyKey
        case block((Any?, [NSExpression], NSMutableDictionary?) -> Any, arguments: [NSExpression]?)
        case conditional(NSPredicate, NSExpression, NSExpression)
        /// `$name := expression`: evaluates the expression and binds the result in the evaluation context.
        case assignment(String, NSExpression)
        /// `FIRST`, `LAST` or `SIZE` inside an index expression.
        case symbolicIndex(SymbolicIndex)
        /// `FETCH(request, context, countOnly)`: the objects (or their count) the fetch request the first expression
        /// evaluates to finds in the managed object context the second evaluates to.
        case fetch(NSExpression, context: NSExpression, countOnly: Bool)
    }

    let kind: Kind

    /// The value of an aggregate of constants (`{1, 2, 3}`), computed once: `IN {…}` evaluates it per object.
    let constantAggregate: [Any]?

    /// For a key path of one plain key on the evaluated object (`age`), the key: the common case, read without
    /// matching over `kind`.
    let simpleKey: String?

    /// The levels of the tree this expression tops: 1 for a constant, key or variable, one more than its deepest
    /// operand otherwise. Evaluation, printing, equality and SQL generation walk the tree recursively, so its height
    /// is bounded (see `PredicateTreeHeight`).
    let height: Int

    init(kind: Kind) {
        self.kind = kind
        // Constants and variables, the most made, first: each look below copies the kind (a hundred instructions).
        switch kind {
        case .constant, .variable, .evaluatedObject:
            constantAggregate = nil
            simpleKey = nil
            height = 1
            super.init()
            return
        default:
            break
        }
        constantAggregate = NSExpression.constantAggregate(of: kind)
        simpleKey = NSExpression.simpleKey(of: kind)
        height = NSExpression.height(of: kind)
        PredicateTreeHeight.check(height, of: "NSExpression")
        super.init()
    }

    private static func height(of kind: Kind) -> Int {
        switch kind {
        case .constant, .evaluatedObject, .variable, .anyKey, .symbolicIndex:
            return 1
        case .keyPath(_, _, let operand):
            return 1 + (operand?.height ?? 0)
        case .function(_, let target, let arguments):
            return 1 + max(target?.height ?? 0, arguments.reduce(0) { max($0, $1.height) })
        case .unionSet(let left, let right), .intersectSet(let left, let right), .minusSet(let left, let right):
            return 1 + max(left.height, right.height)
        case .subquery(let collection, _, let predicate):
            return 1 + max(collection.height, predicate.height)
        case .aggregate(let expressions):
            return 1 + expressions.reduce(0) { max($0, $1.height) }
        case .block(_, let arguments):
            return 1 + (arguments ?? []).reduce(0) { max($0, $1.height) }
        case .conditional(let predicate, let whenTrue, let whenFalse):
            return 1 + max(predicate.height, whenTrue.height, whenFalse.height)
        case .assignment(_, let value):
            return 1 + value.height
        case .fetch(let request, let context, _):
            return 1 + max(request.height, context.height)
        }
    }

    private static func simpleKey(of kind: Kind) -> String? {
        guard case .keyPath(_, let components, nil) = kind, components.count == 1, !components[0].hasPrefix("@") else {
            return nil
        }
        return components[0]
    }

    private static func constantAggregate(of kind: Kind) -> [Any]? {
        guard case .aggregate(let expressions) = kind else { return nil }
        var values: [Any] = []
        values.reserveCapacity(expressions.count)
        for expression in expressions {
            guard case .constant(let value) = expression.kind else { return nil }
            values.append(value ?? NSNull())
        }
        return values
    }

    /// Creates an expression of the given type; only the types without operands (`.evaluatedObject`, `.anyKey`)
    /// can be made this way.
    public init(expressionType type: ExpressionType) {
        switch type {
        case .evaluatedObject: kind = .evaluatedObject
        case .anyKey: kind = .anyKey
        default:
            preconditionFailure("NSExpression(expressionType: .\(type)) needs operands: use the matching initializer")
        }
        constantAggregate = nil
        simpleKey = nil
        height = 1
        super.init()
    }

    /// Creates an expression that always returns `obj`.
    public convenience init(forConstantValue obj: Any?) {
        let value = PredicateValueComparison.unwrap(obj)
        self.init(kind: .constant(value))
        // Evaluation and SQL treat `NSNull` as no value; only the description and `constantValue` tell them apart.
        if value == nil, obj is NSNull { _isNullObject = true }
    }

    /// Whether the expression is the constant `NSNull()` (which prints as `<null>`) rather than `nil`.
    var _isNullObject = false

    /// Returns an expression that evaluates to the object the predicate is evaluated against (`SELF`).
    open class func expressionForEvaluatedObject() -> NSExpression {
        NSExpression(kind: .evaluatedObject)
    }

    /// Creates an expression that returns the value bound to `string` in the substitution variables (`$string`).
    public convenience init(forVariable string: String) {
        self.init(kind: .variable(string))
    }

    /// Creates an expression that reads `keyPath` from the evaluated object.
    public convenience init(forKeyPath keyPath: String) {
        self.init(kind: .keyPath(keyPath, components: KeyValueCodingPath.split(keyPath), operand: nil))
    }

    /// Creates an expression that reads the key of a Swift key path of `@Managed` properties
    /// (`NSExpression(forKeyPath: \Book.author?.name)` reads `author.name`). A key path with no key string (one
    /// through a property that is not `@Managed`) stops with a message naming it, as on Apple platforms.
    public convenience init<Root, Value>(forKeyPath keyPath: KeyPath<Root, Value>) {
        self.init(forKeyPath: ManagedKeyPath.requiredKeyString(of: keyPath, for: "NSExpression(forKeyPath:)"))
    }

    /// Creates an expression that invokes one of the predefined functions (`"sum:"`, `"add:to:"`, `"now"`…) with
    /// the given `NSExpression` arguments.
    public convenience init(forFunction name: String, arguments parameters: [Any]) {
        self.init(kind: .function(name, target: nil, arguments: NSExpression.expressions(parameters)))
    }

    /// Creates an expression that invokes the method `name` on the result of `target` with `parameters`
    /// (`FUNCTION(target, 'name', …)`). Types answer such calls by adopting ``PredicateFunctionTarget``.
    public convenience init(forFunction target: NSExpression, selectorName name: String, arguments parameters: [Any]?) {
        self.init(kind: .function(name, target: target, arguments: NSExpression.expressions(parameters ?? [])))
    }

    /// Creates an aggregate expression (`{1, 2, 3}`) from other expressions.
    public convenience init(forAggregate subexpressions: [NSExpression]) {
        self.init(kind: .aggregate(subexpressions))
    }

    /// Creates an expression for the union of two collection expressions (`left UNION right`).
    public convenience init(forUnionSet left: NSExpression, with right: NSExpression) {
        self.init(kind: .unionSet(left, right))
    }

    /// Creates an expression for the intersection of two collection expressions (`left INTERSECT right`).
    public convenience init(forIntersectSet left: NSExpression, with right: NSExpression) {
        self.init(kind: .intersectSet(left, right))
    }

    /// Creates an expression for the elements of `left` not in `right` (`left MINUS right`).
    public convenience init(forMinusSet left: NSExpression, with right: NSExpression) {
        self.init(kind: .minusSet(left, right))
    }

    /// Creates a subquery: the elements of `expression` for which `predicate` holds, each bound in turn to the
    /// variable `variable` (`SUBQUERY(employees, $e, $e.salary > 1000)`).
    public convenience init(
        forSubquery expression: NSExpression, usingIteratorVariable variable: String,
        predicate: NSPredicate
    ) {
        self.init(kind: .subquery(expression, variable: variable, predicate: predicate))
    }

    /// Returns an expression that matches any key (for Spotlight queries; it cannot be evaluated).
    open class func expressionForAnyKey() -> NSExpression {
        NSExpression(kind: .anyKey)
    }

    /// Creates an expression that calls `block` with the evaluated object, the argument expressions and the
    /// context.
    public convenience init(
        forBlock block: @escaping (Any?, [NSExpression], NSMutableDictionary?) -> Any,
        arguments: [NSExpression]?
    ) {
        self.init(kind: .block(block, arguments: arguments))
    }

    /// Creates an expression that evaluates `trueExpression` when `predicate` holds for the evaluated object and
    /// `falseExpression` otherwise (`TERNARY(predicate, true, false)`).
    public convenience init(
        forConditional predicate: NSPredicate, trueExpression: NSExpression,
        falseExpression: NSExpression
    ) {
        self.init(kind: .conditional(predicate, trueExpression, falseExpression))
    }

    /// Wraps arguments given as values rather than expressions, as Apple's initializers accept.
    static func expressions(_ values: [Any]) -> [NSExpression] {
        values.map { $0 as? NSExpression ?? NSExpression(forConstantValue: $0) }
    }

    // MARK: NSObject

    /// Whether `object` is an expression of the same structure with equal constants.
    open override func isEqual(_ object: Any?) -> Bool {
        isStructurallyEqual(object)
    }

    /// A hash consistent with `isEqual(_:)`.
    open override var hash: Int {
        structuralHash
    }

    /// The expression's format string, as `expressionFormat`.
    open override var description: String {
        expressionFormat
    }

    // MARK: NSCopying

    /// Returns the receiver: expressions are immutable.
    open func copy(with zone: NSZone? = nil) -> Any {
        self
    }

    // MARK: Codable

    /// Encodes the expression as its `expressionFormat`, from which decoding parses it back.
    ///
    /// Block expressions, and constants whose format cannot be parsed back, cannot be encoded.
    open func encode(to encoder: any Encoder) throws {
        if case .block = kind {
            throw EncodingError.invalidValue(
                self, .init(codingPath: encoder.codingPath, debugDescription: "Block expressions cannot be encoded"))
        }
        var container = encoder.singleValueContainer()
        try container.encode(expressionFormat)
    }

    /// Decodes an expression from its format string.
    public required init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let format = try container.decode(String.self)
        do {
            let parsed = try PredicateParser.parseExpression(format, arguments: [])
            kind = parsed.kind
            constantAggregate = parsed.constantAggregate
            simpleKey = parsed.simpleKey
            height = parsed.height
        } catch {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "Invalid expression format: \(error.localizedDescription)")
        }
        super.init()
    }
}
