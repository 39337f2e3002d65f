// Apple's comparison predicate with Apple's enums and raw values (the raw values are what archived predicates and
// the SQL generator's tables key on).

/// A predicate that compares two expressions with an operator (`age > 30`, `ANY employees.name == "Bob"`).
///
/// ```swift
/// let predicate = NSComparisonPredicate(
///     leftExpression: NSExpression(forKeyPath: "name"),
///     rightExpression: NSExpression(forConstantValue: "a"),
///     modifier: .direct, type: .beginsWith, options: [.caseInsensitive])
/// predicate.predicateFormat  // name BEGINSWITH[c] "a"
/// ```
open class NSComparisonPredicate: NSPredicate, @unchecked Sendable {
    // @unchecked: immutable once made, as NSPredicate.
    /// The comparison operators, with Apple's raw values.
    public enum Operator: UInt, Sendable {
        /// `<`
        case lessThan = 0
        /// `<=`
        case lessThanOrEqualTo = 1
        /// `>`
        case greaterThan = 2
        /// `>=`
        case greaterThanOrEqualTo = 3
        /// `==`
        case equalTo = 4
        /// `!=`
        case notEqualTo = 5
        /// `MATCHES`: the left string matches the regular expression on the right.
        case matches = 6
        /// `LIKE`: the left string matches the right pattern (`*` and `?` wildcards).
        case like = 7
        /// `BEGINSWITH`
        case beginsWith = 8
        /// `ENDSWITH`
        case endsWith = 9
        /// `IN`: the left value is in the right collection, or the left string occurs in the right string.
        case `in` = 10
        /// A comparison by a custom selector.
        case customSelector = 11
        /// `CONTAINS`: the left collection contains the right value, or the left string contains the right string.
        case contains = 99
        /// `BETWEEN`: the left value lies between the two values of the right collection, inclusive.
        case between = 100
    }

    /// How the left expression is applied: directly, or to every or any element of a collection.
    public enum Modifier: UInt, Sendable {
        /// Compare the left value itself.
        case direct = 0
        /// `ALL`: every element of the left collection must satisfy the comparison.
        case all = 1
        /// `ANY`/`SOME`: at least one element of the left collection must satisfy the comparison.
        case any = 2
    }

    /// String comparison options: `[c]`, `[d]`, `[n]`.
    public struct Options: OptionSet, Sendable, Hashable {
        /// The options' bits, as Apple defines them.
        public let rawValue: UInt

        /// Creates options from their raw value.
        public init(rawValue: UInt) {
            self.rawValue = rawValue
        }

        /// `[c]`: case-insensitive.
        public static let caseInsensitive = Options(rawValue: 1)
        /// `[d]`: diacritic-insensitive.
        public static let diacriticInsensitive = Options(rawValue: 2)
        /// `[n]`: the strings are already normalized, so compare them without further preparation.
        public static let normalized = Options(rawValue: 4)
        /// `[l]`: Apple's `NSLocaleSensitivePredicateOption`, which Swift spells only by its raw value. It is kept
        /// and printed back; comparisons give the same results with it as without it (in memory and in SQL alike).
        static let localeSensitive = Options(rawValue: 8)
    }

    /// The left-hand expression.
    public let leftExpression: NSExpression
    /// The right-hand expression.
    public let rightExpression: NSExpression
    /// The operator.
    public let predicateOperatorType: Operator
    /// The modifier (`ANY`, `ALL` or direct).
    public let comparisonPredicateModifier: Modifier
    /// The string comparison options.
    public let options: Options
    /// The selector of a custom-selector comparison, `nil` otherwise.
    public let customSelector: Selector?

    /// A constant right-hand side, classified once rather than once per evaluated object.
    let rightConstant: PredicateValueComparison.Classified?

    private static func classifiedConstant(_ expression: NSExpression) -> PredicateValueComparison.Classified? {
        guard case .constant(let value?) = expression.kind else { return nil }
        return PredicateValueComparison.classify(value)
    }

    /// Creates a comparison predicate.
    public init(
        leftExpression lhs: NSExpression, rightExpression rhs: NSExpression, modifier: Modifier,
        type: Operator, options: Options = []
    ) {
        leftExpression = lhs
        rightExpression = rhs
        comparisonPredicateModifier = modifier
        predicateOperatorType = type
        self.options = options
        customSelector = nil
        rightConstant = Self.classifiedConstant(rhs)
        super.init(predicateKind: .subclass, height: PredicateTreeHeight.checked(lhs, rhs, in: "NSComparisonPredicate"))
    }

    /// A comparison predicate whose right-hand constant is already classified (`nil`: classified here as usual), as
    /// the format cache knows it for the numbers it converts.
    init(
        leftExpression lhs: NSExpression, rightExpression rhs: NSExpression, modifier: Modifier, type: Operator,
        options: Options, classifiedRight: PredicateValueComparison.Classified?
    ) {
        leftExpression = lhs
        rightExpression = rhs
        comparisonPredicateModifier = modifier
        predicateOperatorType = type
        self.options = options
        customSelector = nil
        rightConstant = classifiedRight ?? Self.classifiedConstant(rhs)
        super.init(predicateKind: .subclass, height: PredicateTreeHeight.checked(lhs, rhs, in: "NSComparisonPredicate"))
    }

    /// Creates a predicate that compares by calling the method `selector` on the left value with the right value,
    /// which must return a `Bool`. The left value answers through ``PredicateFunctionTarget``.
    public init(leftExpression lhs: NSExpression, rightExpression rhs: NSExpression, customSelector selector: Selector)
    {
        leftExpression = lhs
        rightExpression = rhs
        comparisonPredicateModifier = .direct
        predicateOperatorType = .customSelector
        options = []
        customSelector = selector
        rightConstant = nil
        super.init(predicateKind: .subclass, height: PredicateTreeHeight.checked(lhs, rhs, in: "NSComparisonPredicate"))
    }

    /// Decodes a comparison predicate from its format string; evaluation stays disabled until
    /// `allowEvaluation()`.
    public required init(from decoder: any Decoder) throws {
        let parsed = try NSPredicate.decodeFormat(from: decoder)
        guard let comparison = parsed as? NSComparisonPredicate else {
            let container = try decoder.singleValueContainer()
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "\(parsed.predicateFormat) is not a comparison predicate")
        }
        leftExpression = comparison.leftExpression
        rightExpression = comparison.rightExpression
        comparisonPredicateModifier = comparison.comparisonPredicateModifier
        predicateOperatorType = comparison.predicateOperatorType
        options = comparison.options
        customSelector = comparison.customSelector
        rightConstant = comparison.rightConstant
        super.init(predicateKind: .subclass, height: comparison.height)
        disallowEvaluation()
    }

    /// The format string: `left OPERATOR[options] right`, with `ANY`/`ALL` in front when modified.
    open override var predicateFormat: String {
        PredicatePrinter.format(comparison: self)
    }

    override func evaluateTree(_ object: Any?, in scope: PredicateScope) -> Bool {
        evaluateComparison(object, in: scope)
    }

    /// Whether `object` is a comparison predicate with the same operator, modifier, options and expressions.
    open override func isEqual(_ object: Any?) -> Bool {
        if let other = object as? NSPredicate, case .decoded(let inner) = other.predicateKind { return isEqual(inner) }
        guard let other = object as? NSComparisonPredicate else { return false }
        return predicateOperatorType == other.predicateOperatorType
            && comparisonPredicateModifier == other.comparisonPredicateModifier
            && options == other.options
            && customSelector == other.customSelector
            && leftExpression.isEqual(other.leftExpression)
            && rightExpression.isEqual(other.rightExpression)
    }

    /// A hash consistent with `isEqual(_:)`.
    open override var hash: Int {
        var hasher = Hasher()
        hasher.combine(predicateOperatorType)
        hasher.combine(comparisonPredicateModifier)
        hasher.combine(leftExpression.hash)
        hasher.combine(rightExpression.hash)
        return hasher.finalize()
    }

    /// Returns a copy with `$variables` replaced by the values in `variables`.
    open override func withSubstitutionVariables(_ variables: [String: Any]) -> Self {
        let left = leftExpression.substituting(variables)
        let right = rightExpression.substituting(variables)
        let result: NSComparisonPredicate
        if let customSelector {
            result = NSComparisonPredicate(leftExpression: left, rightExpression: right, customSelector: customSelector)
        } else {
            result = NSComparisonPredicate(
                leftExpression: left, rightExpression: right, modifier: comparisonPredicateModifier,
                type: predicateOperatorType, options: options)
        }
        guard let typed = result as? Self else {
            preconditionFailure("\(type(of: self)) must override withSubstitutionVariables(_:)")
        }
        return typed
    }
}
