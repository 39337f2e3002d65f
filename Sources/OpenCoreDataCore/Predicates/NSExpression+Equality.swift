// Structural equality, so that parse → print → parse can be checked and predicates can key dictionaries (as fetch
// request templates do). Constants compare with Foundation's `isEqual:` rules (`1 == 1.0`), and a constant array
// equals an aggregate of the same constants, because `%@` with an array prints as `{…}` and parses back as an
// aggregate.

extension NSExpression {
    /// Whether `object` is an expression of the same structure with equal constants.
    func isStructurallyEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSExpression else { return false }
        if self === other { return true }
        switch (kind, other.kind) {
        case (.constant(let a), .constant(let b)):
            return PredicateValueComparison.isEqual(a, b)
        case (.constant(let value), .aggregate(let expressions)), (.aggregate(let expressions), .constant(let value)):
            guard let elements = PredicateValueComparison.elements(value), elements.count == expressions.count else {
                return false
            }
            return zip(elements, expressions).allSatisfy { element, expression in
                expression.isEqual(NSExpression(forConstantValue: element))
            }
        case (.evaluatedObject, .evaluatedObject), (.anyKey, .anyKey):
            return true
        case (.variable(let a), .variable(let b)):
            return a == b
        case (.keyPath(_, let a, let aOperand), .keyPath(_, let b, let bOperand)):
            return a == b && Self.equal(aOperand, bOperand)
        case (.function(let a, let aTarget, let aArguments), .function(let b, let bTarget, let bArguments)):
            return a == b && Self.equal(aTarget, bTarget) && Self.equal(aArguments, bArguments)
        case (.unionSet(let a1, let a2), .unionSet(let b1, let b2)),
            (.intersectSet(let a1, let a2), .intersectSet(let b1, let b2)),
            (.minusSet(let a1, let a2), .minusSet(let b1, let b2)):
            return a1.isEqual(b1) && a2.isEqual(b2)
        case (.subquery(let a, let aVariable, let aPredicate), .subquery(let b, let bVariable, let bPredicate)):
            return aVariable == bVariable && a.isEqual(b) && aPredicate.isEqual(bPredicate)
        case (.aggregate(let a), .aggregate(let b)):
            return Self.equal(a, b)
        case (.block, .block):
            return false
        case (.conditional(let aPredicate, let aTrue, let aFalse), .conditional(let bPredicate, let bTrue, let bFalse)):
            return aPredicate.isEqual(bPredicate) && aTrue.isEqual(bTrue) && aFalse.isEqual(bFalse)
        case (.assignment(let a, let aValue), .assignment(let b, let bValue)):
            return a == b && aValue.isEqual(bValue)
        case (.symbolicIndex(let a), .symbolicIndex(let b)):
            return a == b
        case (.fetch(let aRequest, let aContext, let aCount), .fetch(let bRequest, let bContext, let bCount)):
            return aCount == bCount && aRequest.isEqual(bRequest) && aContext.isEqual(bContext)
        default:
            return false
        }
    }

    private static func equal(_ a: NSExpression?, _ b: NSExpression?) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case (let a?, let b?): a.isEqual(b)
        default: false
        }
    }

    private static func equal(_ a: [NSExpression], _ b: [NSExpression]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { $0.isEqual($1) }
    }

    /// A hash consistent with `isEqual(_:)`: it covers the structure and the names in it, not the constants.
    var structuralHash: Int {
        var hasher = Hasher()
        switch kind {
        case .constant, .aggregate: hasher.combine(0)
        case .evaluatedObject: hasher.combine(1)
        case .variable(let name): hasher.combine(name)
        case .keyPath(let path, _, _): hasher.combine(path)
        case .function(let name, _, let arguments):
            hasher.combine(name)
            hasher.combine(arguments.count)
        case .subquery(_, let variable, _): hasher.combine(variable)
        default: hasher.combine(expressionType.rawValue)
        }
        return hasher.finalize()
    }

    /// The expression's format string, as `NSExpression(format:)` would parse it back.
    public var expressionFormat: String {
        PredicatePrinter.format(self)
    }
}
