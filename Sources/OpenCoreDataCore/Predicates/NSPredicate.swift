// Foundation on Linux marks `NSPredicate(format:)` unavailable; this class has Apple's name and API and shadows
// Foundation's for clients. On Apple platforms `NSPredicate(format:)` is a class cluster that hands back an
// `NSComparisonPredicate` or an `NSCompoundPredicate`; the format initializers here do the same (see
// NSPredicate+Format.swift), so `predicate as? NSComparisonPredicate` works as it does there.

/// A logical condition that an object either satisfies or not, used to filter fetch results and collections.
///
/// ```swift
/// let adults = NSPredicate(format: "age >= %d AND name BEGINSWITH[c] %@", 18, "a")
/// adults.evaluate(with: ["age": 30, "name": "Alice"])  // true
/// adults.predicateFormat                                // age >= 18 AND name BEGINSWITH[c] "a"
/// ```
///
/// Subclasses: ``NSComparisonPredicate`` compares two expressions, ``NSCompoundPredicate`` combines predicates with
/// AND, OR and NOT.
open class NSPredicate: NSObject, NSCopying, Codable, @unchecked Sendable {
    // @unchecked: a predicate is immutable once made, as Apple's is, but for `allowEvaluation()`, which a caller makes
    // before sharing a predicate it decoded.
    /// What a predicate that is not a comparison or compound predicate does.
    enum Kind {
        /// `TRUEPREDICATE` or `FALSEPREDICATE`.
        case value(Bool)
        case block((Any?, [String: Any]?) -> Bool)
        /// An instance of a subclass, which implements evaluation and printing itself.
        case subclass
        /// A predicate decoded as `NSPredicate` whose format describes a comparison or compound predicate.
        case decoded(NSPredicate)
    }

    let predicateKind: Kind

    /// Cleared for predicates decoded from an archive until `allowEvaluation()` is called.
    private var evaluationAllowed: Bool

    /// The levels of the tree this predicate tops: 1 for a constant or block predicate, one more than its deepest
    /// part otherwise (see `PredicateTreeHeight`).
    let height: Int

    /// The parsed format this predicate was made from by `PredicateFormatCache`, if it was. Every predicate made from
    /// one template is the same tree but for the values of its arguments, so a fetch plan found for one serves all
    /// (`SQLiteFetchPlanCache`). Set only while the predicate is made, before anything else can see it.
    final var _formatTemplate: NSPredicate?

    init(predicateKind: Kind, height: Int = 1) {
        self.predicateKind = predicateKind
        self.evaluationAllowed = true
        switch predicateKind {
        case .decoded(let inner): self.height = inner.height + 1
        default: self.height = height
        }
        super.init()
    }

    /// Creates a predicate that always evaluates to `value` (`TRUEPREDICATE` or `FALSEPREDICATE`).
    public init(value: Bool) {
        predicateKind = .value(value)
        evaluationAllowed = true
        height = 1
        super.init()
    }

    /// Creates a predicate that evaluates `block` with the evaluated object and the substitution variables.
    ///
    /// Block predicates cannot be printed back into a format, encoded, or translated into SQL.
    public init(block: @escaping (Any?, [String: Any]?) -> Bool) {
        predicateKind = .block(block)
        evaluationAllowed = true
        height = 1
        super.init()
    }

    /// The format string of the predicate, as `NSPredicate(format:)` would parse it back.
    open var predicateFormat: String {
        switch predicateKind {
        case .value(let value): return value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .block: return "BLOCKPREDICATE(\(String(UInt(bitPattern: ObjectIdentifier(self).hashValue), radix: 16)))"
        case .decoded(let predicate): return predicate.predicateFormat
        case .subclass: return ""
        }
    }

    /// The predicate's format string.
    open override var description: String { predicateFormat }

    /// Returns whether `object` satisfies the predicate.
    open func evaluate(with object: Any?) -> Bool {
        evaluate(with: object, substitutionVariables: nil)
    }

    /// Returns whether `object` satisfies the predicate after replacing its `$variables` with `bindings`.
    open func evaluate(with object: Any?, substitutionVariables bindings: [String: Any]?) -> Bool {
        precondition(
            evaluationAllowed,
            "This predicate was decoded from an archive and evaluation is disabled: call allowEvaluation() first")
        return evaluateTree(object, in: PredicateScope(variables: bindings ?? [:], context: nil))
    }

    /// Evaluation with a scope of variable bindings shared by the whole tree. `NSComparisonPredicate` and
    /// `NSCompoundPredicate` override it; the base implementation serves constant, block and decoded predicates.
    func evaluateTree(_ object: Any?, in scope: PredicateScope) -> Bool {
        switch predicateKind {
        case .value(let value): return value
        case .block(let block): return block(object, scope.variables)
        case .decoded(let predicate): return predicate.evaluateTree(object, in: scope)
        case .subclass: return false
        }
    }

    /// How a compound predicate, subquery or conditional evaluates a child predicate: through the tree, unless the
    /// child is an instance of a subclass defined outside OpenCoreData, which may override `evaluate(with:…)`.
    @inline(__always)
    final func evaluateChild(_ object: Any?, in scope: PredicateScope) -> Bool {
        let type = ObjectIdentifier(Swift.type(of: self))
        if type == ObjectIdentifier(NSComparisonPredicate.self) || type == ObjectIdentifier(NSCompoundPredicate.self)
            || type == ObjectIdentifier(NSPredicate.self)
        {
            return evaluateTree(object, in: scope)
        }
        return evaluate(with: object, substitutionVariables: scope.variables)
    }

    /// Returns a copy of the predicate with its `$variables` replaced by the constant values in `variables`.
    /// Variables without a value stay.
    open func withSubstitutionVariables(_ variables: [String: Any]) -> Self {
        guard case .decoded(let predicate) = predicateKind else { return self }
        return NSPredicate(predicateKind: .decoded(predicate.substituting(variables))) as! Self
    }

    /// Substitution without the `Self` return type, for the tree's recursion.
    func substituting(_ variables: [String: Any]) -> NSPredicate {
        withSubstitutionVariables(variables)
    }

    /// Enables evaluation of a predicate decoded from an archive, after the caller has checked it is safe.
    ///
    /// Predicates decoded with `Decodable` come from outside the program and may call functions; as with Apple's
    /// securely decoded predicates, evaluating one stops the program until this method has been called.
    open func allowEvaluation() {
        evaluationAllowed = true
        if case .decoded(let predicate) = predicateKind { predicate.allowEvaluation() }
    }

    /// Returns the receiver: predicates are immutable.
    open func copy(with zone: NSZone? = nil) -> Any {
        self
    }

    // MARK: Equality

    /// Whether `object` is a predicate of the same structure.
    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSPredicate else { return false }
        if case .decoded(let predicate) = predicateKind { return predicate.isEqual(other) }
        if case .decoded(let predicate) = other.predicateKind { return isEqual(predicate) }
        switch (predicateKind, other.predicateKind) {
        case (.value(let a), .value(let b)): return a == b
        case (.block, .block): return self === other
        default: return false
        }
    }

    /// A hash consistent with `isEqual(_:)`.
    open override var hash: Int {
        switch predicateKind {
        case .value(let value): return value ? 1 : 0
        case .block: return ObjectIdentifier(self).hashValue
        case .decoded(let predicate): return predicate.hash
        case .subclass: return 0
        }
    }

    // MARK: Codable

    /// Encodes the predicate as its `predicateFormat`. Block predicates cannot be encoded.
    open func encode(to encoder: any Encoder) throws {
        if case .block = predicateKind {
            throw EncodingError.invalidValue(
                self, .init(codingPath: encoder.codingPath, debugDescription: "Block predicates cannot be encoded"))
        }
        var container = encoder.singleValueContainer()
        try container.encode(predicateFormat)
    }

    /// Decodes a predicate from its format string. Evaluation stays disabled until `allowEvaluation()`.
    ///
    /// Decoding as `NSPredicate` gives a predicate that evaluates, prints and compares as the encoded one; decode
    /// as `NSComparisonPredicate` or `NSCompoundPredicate` to get that subclass and its accessors.
    public required init(from decoder: any Decoder) throws {
        let parsed = try NSPredicate.decodeFormat(from: decoder)
        switch parsed.predicateKind {
        case .value, .block, .decoded:
            predicateKind = parsed.predicateKind
            height = parsed.height
        case .subclass:
            predicateKind = .decoded(parsed)
            height = parsed.height + 1
        }
        evaluationAllowed = false
        super.init()
    }

    /// Parses the format string a decoder holds.
    static func decodeFormat(from decoder: any Decoder) throws -> NSPredicate {
        let container = try decoder.singleValueContainer()
        let format = try container.decode(String.self)
        do {
            return try PredicateParser.parsePredicate(format, arguments: [])
        } catch {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "Invalid predicate format: \(error.localizedDescription)")
        }
    }

    /// Marks a decoded subclass instance as not yet allowed to evaluate.
    func disallowEvaluation() {
        evaluationAllowed = false
    }
}

/// Variable bindings during one evaluation: the substitution variables, the variables bound by `SUBQUERY` and
/// `:=`, and the caller's context dictionary when evaluating an expression with one.
final class PredicateScope {
    var variables: [String: Any]
    let context: NSMutableDictionary?

    init(variables: [String: Any], context: NSMutableDictionary?) {
        self.variables = variables
        self.context = context
    }

    @inline(__always)
    func value(of variable: String) -> Any? {
        if let value = variables[variable] { return value }
        return context?.object(forKey: variable)
    }

    /// The type whose key-value coding was last used, and how to call it without asking the runtime for the
    /// conformance again: a filter reads the same few keys from many objects of one type.
    private var accessorType: ObjectIdentifier?
    private var accessor: ((Any, String) -> Any?)?

    /// The value of `key` on `object` (`nil` and `NSNull` have none), unwrapped.
    @inline(__always)
    func value(of object: Any?, forKey key: String) -> Any? {
        guard let object else { return nil }
        let type = ObjectIdentifier(Swift.type(of: object))
        if type == accessorType, let accessor {
            return PredicateValueComparison.unwrap(accessor(object, key))
        }
        if let coding = object as? any KeyValueCoding {
            accessorType = type
            accessor = PredicateScope.accessor(for: coding)
            return PredicateValueComparison.unwrap(coding.value(forKey: key))
        }
        guard let unwrapped = PredicateValueComparison.unwrap(object) else { return nil }
        if ObjectIdentifier(Swift.type(of: unwrapped)) == type {
            // Neither optional nor conforming: read by reflection, without asking for the conformance again.
            accessorType = type
            accessor = { KeyValueCodingReflection.value(of: $0, forKey: $1) }
        }
        return PredicateValueComparison.unwrap(KeyValueCodingPath.value(of: unwrapped, forKey: key))
    }

    private static func accessor<T: KeyValueCoding>(for _: T) -> (Any, String) -> Any? {
        { object, key in (object as! T).value(forKey: key) }
    }

    func bind(_ variable: String, to value: Any?) {
        variables[variable] = value ?? NSNull()
        context?.setObject(value ?? NSNull(), forKey: variable as NSString)
    }
}
