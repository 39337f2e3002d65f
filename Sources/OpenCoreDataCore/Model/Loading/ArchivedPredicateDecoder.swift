/// Turns archived predicates and expressions (`NSComparisonPredicate`, `NSKeyPathExpression`…, as compiled models
/// store validation predicates, fetched properties, derivations and templates) into OpenCoreData's. The archive is
/// rewritten as a format string whose constants are passed as `%@` arguments, then parsed, so that the result is
/// exactly what the format parser builds for the same predicate.
struct ArchivedPredicateDecoder {
    let archive: KeyedArchive

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    func predicate(_ object: KeyedArchive.Object) throws -> NSPredicate {
        var arguments: [Any] = []
        let format = try predicateFormat(object, arguments: &arguments, depth: 0)
        return try NSPredicate(validatingFormat: format, argumentArray: arguments)
    }

    func expression(_ object: KeyedArchive.Object) throws -> NSExpression {
        var arguments: [Any] = []
        let format = try expressionFormat(object, arguments: &arguments, depth: 0)
        return try NSExpression(validatingFormat: format, argumentArray: arguments)
    }

    /// How deeply predicates and expressions may nest: an archive from a file may be damaged, or loop.
    static let maximumDepth = 64

    private func predicateFormat(_ object: KeyedArchive.Object, arguments: inout [Any], depth: Int) throws -> String {
        guard depth < Self.maximumDepth else {
            throw Failure(description: "predicates nest more than \(Self.maximumDepth) deep")
        }
        switch object.className {
        case "NSTruePredicate":
            return "TRUEPREDICATE"
        case "NSFalsePredicate":
            return "FALSEPREDICATE"
        case "NSCompoundPredicate":
            let parts = try archive.elements(object["NSSubpredicates"]).map { element -> String in
                guard let sub = try archive.object(element) else {
                    throw Failure(description: "a subpredicate is missing")
                }
                return "(" + (try predicateFormat(sub, arguments: &arguments, depth: depth + 1)) + ")"
            }
            switch object["NSCompoundPredicateType"]?.integer ?? 1 {
            case 0:
                guard parts.count == 1 else { throw Failure(description: "a NOT predicate has \(parts.count) parts") }
                return "NOT " + parts[0]
            case 2:
                return parts.isEmpty ? "FALSEPREDICATE" : parts.joined(separator: " OR ")
            default:
                return parts.isEmpty ? "TRUEPREDICATE" : parts.joined(separator: " AND ")
            }
        case "NSComparisonPredicate":
            guard let left = try archive.object(object["NSLeftExpression"]),
                let right = try archive.object(object["NSRightExpression"]),
                let comparison = try archive.object(object["NSPredicateOperator"])
            else { throw Failure(description: "a comparison lacks an expression or operator") }
            let lhs = try expressionFormat(left, arguments: &arguments, depth: depth + 1)
            let rhs = try expressionFormat(right, arguments: &arguments, depth: depth + 1)
            var type = comparison["NSOperatorType"]?.integer ?? 4
            if comparison["NSNegate"]?.bool == true, type == 4 { type = 5 }
            guard let symbol = Self.operators[type] else {
                throw Failure(description: "unknown comparison operator \(type)")
            }
            let options = comparison["NSOptions"]?.integer ?? comparison["NSFlags"]?.integer ?? 0
            var modifiers = ""
            if options & 1 != 0 { modifiers += "c" }
            if options & 2 != 0 { modifiers += "d" }
            if options & 4 != 0 { modifiers += "n" }
            let written = modifiers.isEmpty ? symbol : "\(symbol)[\(modifiers)]"
            let prefix: String
            switch comparison["NSModifier"]?.integer ?? 0 {
            case 1: prefix = "ALL "
            case 2: prefix = "ANY "
            default: prefix = ""
            }
            return "\(prefix)\(lhs) \(written) \(rhs)"
        default:
            throw Failure(description: "unsupported archived predicate class \(object.className)")
        }
    }

    private static let operators: [Int64: String] = [
        0: "<", 1: "<=", 2: ">", 3: ">=", 4: "==", 5: "!=", 6: "MATCHES", 7: "LIKE", 8: "BEGINSWITH", 9: "ENDSWITH",
        10: "IN", 99: "CONTAINS", 100: "BETWEEN",
    ]

    private func expressionFormat(_ object: KeyedArchive.Object, arguments: inout [Any], depth: Int) throws -> String {
        guard depth < Self.maximumDepth else {
            throw Failure(description: "expressions nest more than \(Self.maximumDepth) deep")
        }
        var type = object["NSExpressionType"]?.integer ?? -1
        // Apple's parser types a key path on another expression (`$FETCH_SOURCE.name`) as the function it is.
        if object.className == "NSKeyPathExpression" { type = 3 }
        switch type {
        case 0:
            if let className = try archive.string(object["NSConstantValueClassName"]) {
                throw Failure(description: "a class constant (\(className)) outside a function call")
            }
            guard let value = try archive.plainValue(object["NSConstantValue"]) else { return "nil" }
            arguments.append(value)
            return "%@"
        case 1:
            return "SELF"
        case 2:
            guard let name = try archive.string(object["NSVariable"]) else {
                throw Failure(description: "a variable expression has no name")
            }
            return "$" + name
        case 3:
            let operand = try archive.object(object["NSOperand"])
            let keyPath = try archive.elements(object["NSArguments"]).compactMap { element in
                try archive.object(element).flatMap { try archive.string($0["NSKeyPath"]) }
            }.joined(separator: ".")
            guard !keyPath.isEmpty else { throw Failure(description: "a key path expression has no key path") }
            guard let operand, operand["NSExpressionType"]?.integer != 1 else { return keyPath }
            return try expressionFormat(operand, arguments: &arguments, depth: depth + 1) + "." + keyPath
        case 4:
            guard let selector = try archive.string(object["NSSelectorName"]) else {
                throw Failure(description: "a function expression has no selector")
            }
            // The format's `%@` arguments are taken in order: the target and the selector before the arguments.
            let operand = try archive.object(object["NSOperand"])
            var prefix: [String] = []
            if let operand, try archive.string(operand["NSConstantValueClassName"]) == nil {
                prefix = [try expressionFormat(operand, arguments: &arguments, depth: depth + 1), "%@"]
                arguments.append(selector)
            } else if operand == nil {
                throw Failure(description: "a function expression has no operand")
            }
            let parts = try archive.elements(object["NSArguments"]).map { element -> String in
                guard let argument = try archive.object(element) else { return "nil" }
                return try expressionFormat(argument, arguments: &arguments, depth: depth + 1)
            }
            if prefix.isEmpty { return "\(selector)(\(parts.joined(separator: ", ")))" }
            return "FUNCTION(\((prefix + parts).joined(separator: ", ")))"
        case 10:
            guard let keyPath = try archive.string(object["NSKeyPath"]) else {
                throw Failure(description: "a key path specifier has no key path")
            }
            return keyPath
        case 13:
            guard let collection = try archive.object(object["NSExpression"]),
                let variable = try archive.string(object["NSVariable"]),
                let predicate = try archive.object(object["NSSubpredicate"])
            else { throw Failure(description: "a subquery lacks its collection, variable or predicate") }
            let source = try expressionFormat(collection, arguments: &arguments, depth: depth + 1)
            let condition = try predicateFormat(predicate, arguments: &arguments, depth: depth + 1)
            return "SUBQUERY(\(source), $\(variable), \(condition))"
        case 14:
            let parts = try archive.elements(object["NSCollection"]).map { element -> String in
                guard let item = try archive.object(element) else { return "nil" }
                return try expressionFormat(item, arguments: &arguments, depth: depth + 1)
            }
            return "{" + parts.joined(separator: ", ") + "}"
        case 50:
            // NSFetchRequestExpression: the fetch request and the context as expressions, and the count flag.
            guard let request = try archive.object(object["NSFRExpression"]),
                let context = try archive.object(object["NSMOCExpression"])
            else { throw Failure(description: "a fetch request expression lacks its request or context") }
            let requestFormat = try expressionFormat(request, arguments: &arguments, depth: depth + 1)
            let contextFormat = try expressionFormat(context, arguments: &arguments, depth: depth + 1)
            let countOnly = object["NSCountOnlyFlag"]?.bool ?? false
            return "FETCH(\(requestFormat), \(contextFormat), \(countOnly ? "YES" : "NO"))"
        default:
            throw Failure(description: "unsupported archived expression type \(type) (\(object.className))")
        }
    }
}
