/// A computed column of dictionary results: an expression (often an aggregate function such as `sum:` or `max:`),
/// the key it is returned under (`name`), and the type of its values.
///
/// ```swift
/// let total = NSExpressionDescription()
/// total.name = "total"
/// total.expression = NSExpression(forFunction: "sum:", arguments: [NSExpression(forKeyPath: "salary")])
/// total.expressionResultType = .integer64AttributeType
/// request.resultType = .dictionaryResultType
/// request.propertiesToFetch = ["department", total]
/// request.propertiesToGroupBy = ["department"]
/// ```
open class NSExpressionDescription: NSPropertyDescription, @unchecked Sendable {
    // @unchecked: as NSPropertyDescription and NSFetchRequest: configured, then used by the requests that name it.
    var _expression: NSExpression?
    var _expressionResultType: NSAttributeType = .undefinedAttributeType

    public required init() {
        super.init()
    }

    /// The expression computed for each result (for each group, with `propertiesToGroupBy`).
    open var expression: NSExpression? {
        get { _expression }
        set { _expression = newValue }
    }

    /// The type of the computed values: numbers, dates and strings come back as an attribute of this type would.
    /// With `.undefinedAttributeType`, the type follows the expression (an aggregate of an attribute takes its type;
    /// `count:` is an integer, `average:` a double).
    open var expressionResultType: NSAttributeType {
        get { _expressionResultType }
        set { _expressionResultType = newValue }
    }

    /// `expressionResultType` in the Swift spelling Apple's framework gives it (`.integer64`, `.decimal`…).
    open var resultType: NSAttributeDescription.AttributeType {
        get { NSAttributeDescription.AttributeType(rawValue: _expressionResultType) }
        set { _expressionResultType = newValue.rawValue }
    }

    override func _copyProperties(from other: NSPropertyDescription) {
        super._copyProperties(from: other)
        if let other = other as? NSExpressionDescription {
            _expression = other._expression
            _expressionResultType = other._expressionResultType
        }
    }
}
