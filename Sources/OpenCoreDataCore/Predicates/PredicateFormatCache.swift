import Foundation

/// Predicates parsed from formats seen before, for `NSPredicate(format:)` called again and again with new arguments.
///
/// Code builds its predicates where it fetches: `NSPredicate(format: "serial == %lld", serial)` for every lookup.
/// Reading the format again each time — lexing, descending through every level of precedence, making the
/// expressions — cost about 10,000 instructions for that one comparison, a sixth of a whole lookup by an indexed
/// attribute. The first time a format is parsed with arguments, it is parsed once more with a placeholder variable
/// for each argument; later calls with the same format make each argument's expression exactly as the parser does
/// (`PredicateParser.argumentExpression`) and put them in the placeholders' places
/// (`withSubstitutionVariables(_:)`, which builds a new predicate each time).
///
/// Only formats whose meaning cannot depend on the argument values are kept: no `%K` (a key path shapes the tree),
/// no argument right after a minus (the parser folds `-5` into a constant), no `CAST`, `FUNCTION` or `FETCH` (the
/// parser reads their constant arguments). And a format is kept only if its template, given the first call's
/// arguments, equals what the parser made of them.
enum PredicateFormatCache {
    /// A parsed format: the predicate with placeholders, and the conversion of each argument (`@`, `d`, `f`…).
    /// A class, so that taking one out of the cache is one retain rather than one for each of its parts.
    private final class Template {
        let predicate: NSPredicate
        let conversions: [String]
        /// Where each argument is in the format, for `argumentExpression`.
        let tokens: [PredicateToken]
        /// For the commonest format, one comparison of a key path with one argument (`serial == %lld`): the parts
        /// of the comparison, made once. `instantiate` would make the same predicate by way of copies of the
        /// expressions' contents and an array of leaves.
        let comparison: Comparison?

        init(predicate: NSPredicate, conversions: [String], tokens: [PredicateToken]) {
            self.predicate = predicate
            self.conversions = conversions
            self.tokens = tokens
            comparison = conversions.count == 1 ? Comparison(predicate) : nil
        }
    }

    /// A template `keyPath <operator> $argument0` (modifier, options and all), whose predicates differ only in the
    /// argument's expression. The key path expression is shared, as `instantiate` shares it.
    private struct Comparison {
        let left: NSExpression
        let modifier: NSComparisonPredicate.Modifier
        let type: NSComparisonPredicate.Operator
        let options: NSComparisonPredicate.Options

        init?(_ predicate: NSPredicate) {
            guard let comparison = predicate as? NSComparisonPredicate, comparison.customSelector == nil,
                case .keyPath(_, _, nil) = comparison.leftExpression.kind,
                case .variable(let name) = comparison.rightExpression.kind, name == PredicateFormatCache.placeholder(0)
            else { return nil }
            left = comparison.leftExpression
            modifier = comparison.comparisonPredicateModifier
            type = comparison.predicateOperatorType
            options = comparison.options
        }
    }

    /// The kept templates, and the last one asked for: a format asked for again and again (a string literal, as
    /// formats are) is recognized by comparing it with the last one, without hashing it.
    private struct Templates {
        var byFormat: [String: Template] = [:]
        var last: (format: String, template: Template)?
    }

    /// Formats kept at most; a full cache starts again empty.
    static let capacity = 256
    /// The longest format kept, in UTF-8 bytes: longer ones are rarely repeated, and would hold their memory.
    static let maximumFormatLength = 1_024
    /// The most arguments of a kept format.
    static let maximumArguments = 32
    /// The most elements of a collection argument in a call whose format is considered for keeping.
    static let maximumCheckedElements = 16

    private static let templates = LockedState(Templates())

    /// The names of the placeholder variables: no `$name` in a format can spell them.
    private static let placeholderNames = (0..<maximumArguments).map { "\u{1}\($0)" }

    /// The placeholder variable of argument `index` (below `maximumArguments`).
    static func placeholder(_ index: Int) -> String {
        placeholderNames[index]
    }

    /// The predicate of `format` with `arguments`, if the format was parsed before and kept; `nil` otherwise, or if
    /// an argument does not fit its conversion (the parser then reports it).
    static func predicate(_ format: String, arguments: [Any]) -> NSPredicate? {
        let template = templates.withLock { templates -> Template? in
            if let last = templates.last, last.format == format { return last.template }
            guard let template = templates.byFormat[format] else { return nil }
            templates.last = (format, template)
            return template
        }
        guard let template else { return nil }
        return predicate(from: template, arguments: arguments)
    }

    /// `template` with `arguments` in its placeholders' places; `nil` if an argument does not fit its conversion.
    private static func predicate(from template: Template, arguments: [Any]) -> NSPredicate? {
        guard template.conversions.count == arguments.count else { return nil }
        if let comparison = template.comparison {
            var classified: PredicateValueComparison.Classified?
            guard
                let expression = try? PredicateParser.argumentExpression(
                    arguments[0], template.conversions[0], at: template.tokens[0], classified: &classified)
            else { return nil }
            let predicate = NSComparisonPredicate(
                leftExpression: comparison.left, rightExpression: expression, modifier: comparison.modifier,
                type: comparison.type, options: comparison.options, classifiedRight: classified)
            predicate._formatTemplate = template.predicate
            return predicate
        }
        var leaves: [Leaf] = []
        leaves.reserveCapacity(arguments.count)
        for index in arguments.indices {
            var classified: PredicateValueComparison.Classified?
            guard
                let expression = try? PredicateParser.argumentExpression(
                    arguments[index], template.conversions[index], at: template.tokens[index],
                    classified: &classified)
            else { return nil }
            leaves.append(Leaf(expression: expression, classified: classified))
        }
        if let predicate = instantiate(template.predicate, leaves) {
            predicate._formatTemplate = template.predicate
            return predicate
        }
        var values: [String: Any] = [:]
        for (index, leaf) in leaves.enumerated() { values[placeholderNames[index]] = leaf.expression }
        return template.predicate.withSubstitutionVariables(values)
    }

    /// `predicate` with its placeholders replaced by `leaves`, made as `withSubstitutionVariables(_:)` makes it, for
    /// the usual trees (comparisons of key paths, constants and arguments under AND, OR and NOT) without building a
    /// dictionary of variables; `nil` for any other tree.
    private static func instantiate(_ predicate: NSPredicate, _ leaves: [Leaf]) -> NSPredicate? {
        switch predicate {
        case let comparison as NSComparisonPredicate:
            guard comparison.customSelector == nil,
                let left = instantiate(comparison.leftExpression, leaves)?.expression,
                let right = instantiate(comparison.rightExpression, leaves)
            else { return nil }
            return NSComparisonPredicate(
                leftExpression: left, rightExpression: right.expression,
                modifier: comparison.comparisonPredicateModifier, type: comparison.predicateOperatorType,
                options: comparison.options, classifiedRight: right.classified)
        case let compound as NSCompoundPredicate:
            var parts: [NSPredicate] = []
            parts.reserveCapacity(compound.predicates.count)
            for part in compound.predicates {
                guard let instantiated = instantiate(part, leaves) else { return nil }
                parts.append(instantiated)
            }
            return NSCompoundPredicate(type: compound.compoundPredicateType, subpredicates: parts)
        default:
            return nil
        }
    }

    /// An argument's expression, with its constant classified if the conversion told how (see `argumentExpression`).
    private struct Leaf {
        let expression: NSExpression
        let classified: PredicateValueComparison.Classified?
    }

    private static func instantiate(_ expression: NSExpression, _ leaves: [Leaf]) -> Leaf? {
        switch expression.kind {
        case .variable(let name):
            guard let index = placeholderNames.firstIndex(of: name) else {
                return Leaf(expression: expression, classified: nil)
            }
            return index < leaves.count ? leaves[index] : nil
        case .constant, .evaluatedObject, .anyKey, .keyPath(_, _, nil):
            return Leaf(expression: expression, classified: nil)
        default:
            return nil
        }
    }

    /// Keeps `format` if its meaning cannot depend on its arguments' values and its template, given `arguments`,
    /// equals `parsed` (what the parser made of them).
    static func consider(_ format: String, tokens: [PredicateToken], arguments: [Any], parsed: NSPredicate) {
        guard format.utf8.count <= maximumFormatLength, arguments.count <= maximumArguments,
            parsed is NSComparisonPredicate || parsed is NSCompoundPredicate,
            !arguments.contains(where: isLargeCollection)
        else { return }
        var conversions: [String] = []
        var argumentTokens: [PredicateToken] = []
        var previous: PredicateToken.Kind?
        for token in tokens {
            switch token.kind {
            case .formatSpecifier(let conversion) where conversion != "%":
                if conversion == "K" || previous == .symbol(.minus) { return }
                conversions.append(conversion)
                argumentTokens.append(token)
            case .identifier(_, escaped: false)
            where token.keyword == .cast || token.keyword == .function || token.keyword == .fetch:
                return
            default:
                break
            }
            previous = token.kind
        }
        guard conversions.count == arguments.count,
            let template = PredicateParser.parseTemplate(tokens, arguments: arguments),
            template is NSComparisonPredicate || template is NSCompoundPredicate
        else { return }
        // Checked by the path later calls take.
        let kept = Template(predicate: template, conversions: conversions, tokens: argumentTokens)
        guard let check = predicate(from: kept, arguments: arguments), check == parsed,
            check.predicateFormat == parsed.predicateFormat
        else { return }
        templates.withLock { templates in
            if templates.byFormat.count >= capacity { templates.byFormat.removeAll(keepingCapacity: true) }
            templates.byFormat[format] = kept
            templates.last = nil
        }
    }

    /// Whether `argument` is a collection of more than `maximumCheckedElements` elements.
    ///
    /// Checking a template compares the parser's predicate with the template's and prints both, which for a constant
    /// collection costs thousands of instructions an element: 20 million for `serial IN %@` with 1,000 numbers, more
    /// than the fetch that used the predicate. A call with such an argument is parsed without its format being
    /// considered; a later call of the format with a smaller collection makes the template, which then serves
    /// collections of any size. (Asked of the argument's type first: casting a Swift array to `NSArray` would bridge
    /// every element.)
    private static func isLargeCollection(_ raw: Any) -> Bool {
        guard let argument = PredicateValueComparison.unwrap(raw) else { return false }
        let type = type(of: argument)
        if type == String.self || type == Substring.self || type == Data.self { return false }
        if type is NSArray.Type { return (argument as! NSArray).count > maximumCheckedElements }
        if type is NSSet.Type { return (argument as! NSSet).count > maximumCheckedElements }
        if type is NSOrderedSet.Type { return (argument as! NSOrderedSet).count > maximumCheckedElements }
        guard let collection = argument as? any Collection else { return false }
        return collection.count > maximumCheckedElements
    }
}
