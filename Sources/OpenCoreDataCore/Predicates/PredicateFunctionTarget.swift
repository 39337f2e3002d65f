// `FUNCTION(receiver, 'selector:', args…)` and custom-selector comparisons send an arbitrary message on Apple
// platforms, through the Objective-C runtime. Linux has no such runtime, so a type opts in by naming the methods it
// answers. A few methods every value has on Apple platforms (`valueForKey:`, `description`…) are answered here.

/// A type whose instances answer `FUNCTION(receiver, 'name:', …)` expressions and custom-selector comparison
/// predicates, which call Objective-C methods by name on Apple platforms.
///
/// ```swift
/// struct Box: PredicateFunctionTarget {
///     var width: Double
///     func performPredicateFunction(_ name: String, arguments: [Any?]) -> Any? {
///         guard name == "scaledBy:", let factor = arguments.first as? Double else { return nil }
///         return width * factor
///     }
///     func respondsToPredicateFunction(_ name: String) -> Bool { name == "scaledBy:" }
/// }
/// NSPredicate(format: "FUNCTION(SELF, 'scaledBy:', 2) > 10").evaluate(with: Box(width: 6))  // true
/// ```
///
/// Evaluating a function the receiver does not answer stops the program, as Apple raises "unrecognized selector".
public protocol PredicateFunctionTarget {
    /// Whether the receiver answers the method `name` (an Objective-C selector name such as `"scaledBy:"`).
    func respondsToPredicateFunction(_ name: String) -> Bool

    /// Calls the method `name` with the evaluated `arguments` and returns its result. A custom-selector comparison
    /// predicate passes its right-hand value as the one argument and expects a `Bool`.
    func performPredicateFunction(_ name: String, arguments: [Any?]) -> Any?
}

/// Dispatch of named methods to receivers.
enum PredicateFunctionDispatch {
    static func call(_ name: String, on receiver: Any?, arguments: [Any?]) -> Any? {
        let receiver = PredicateValueComparison.unwrap(receiver)
        if let target = receiver as? any PredicateFunctionTarget, target.respondsToPredicateFunction(name) {
            return target.performPredicateFunction(name, arguments: arguments)
        }
        if let result = standardMethod(name, on: receiver, arguments: arguments) { return result.value }
        let typeName = receiver.map { String(describing: type(of: $0)) } ?? "nil"
        let message = "FUNCTION: \(typeName) does not respond to '\(name)'; adopt PredicateFunctionTarget to answer it"
        if report(message) { return nil }
        preconditionFailure(message)
    }

    /// Where evaluation reports what it cannot do instead of stopping the program, while a caller evaluates
    /// expressions that come from files (a migration's mapping model) and turns the report into an error.
    /// It keeps the first report, in a `String?` on the caller's stack: what went wrong first explains what
    /// followed. (A fetch asks for reports every time; an object to keep them was an allocation per fetch.)
    static let unansweredCallReport = ThreadLocalPointer()

    /// Runs `body` with evaluation failures — a method nobody answers, a `FETCH` without a context, `ANYKEY` —
    /// reported (the failing part then evaluates to `nil`) instead of stopping the program; returns `body`'s value
    /// and the first failure reported, if any.
    static func reportingUnansweredCalls<T>(_ body: () throws -> T) rethrows -> (value: T, firstFailure: String?) {
        var first: String?
        let value = try withUnsafeMutablePointer(to: &first) { first in
            let previous = unansweredCallReport.value
            unansweredCallReport.value = UnsafeMutableRawPointer(first)
            defer { unansweredCallReport.value = previous }
            return try body()
        }
        return (value, first)
    }

    /// Runs `body` — a fetch, a save, a batch request — with evaluation failures reported, and throws Core Data's
    /// error (`NSCoreDataError`) for the first of them once it returns: a predicate or derivation that comes from a
    /// user or a file names a key the entity lacks, a method nobody answers, `ANYKEY` or a `FETCH` without a context.
    static func throwingEvaluationFailures<T>(_ action: @autoclosure () -> String, _ body: () throws -> T) throws -> T {
        let (result, failure) = reportingUnansweredCalls { Result { try body() } }
        // The failure comes first: an error `body` threw after it (a validation failing on the nil the failing part
        // evaluated to) is its consequence.
        if let message = failure {
            var userInfo: [String: Any] = ["reason": message]
            if case .failure(let error) = result { userInfo[NSUnderlyingErrorKey] = error }
            throw coreDataError(NSCoreDataError, "\(action()) failed: \(message)", userInfo: userInfo)
        }
        return try result.get()
    }

    /// Reports `message` if a caller asked for reports; `false` if evaluation must stop the program instead.
    static func report(_ message: String) -> Bool {
        guard let raw = unansweredCallReport.value else { return false }
        let first = raw.assumingMemoryBound(to: String?.self)
        if first.pointee == nil { first.pointee = message }
        return true
    }

    /// A custom-selector comparison: `lhs` answers `selector` with `rhs` as its argument.
    static func compare(_ lhs: Any?, _ rhs: Any?, selector: Selector) -> Bool {
        let result = call(selector.name, on: lhs, arguments: [rhs])
        if let bool = result as? Bool { return bool }
        return PredicateNumber(result as Any).map { $0.int64Value != 0 } ?? false
    }

    /// A method's result, which may itself be `nil`.
    private struct Answer {
        let value: Any?
    }

    /// Methods that every object, string or collection has on Apple platforms.
    private static func standardMethod(_ name: String, on receiver: Any?, arguments: [Any?]) -> Answer? {
        let argument = arguments.first.flatMap { PredicateValueComparison.unwrap($0) }
        switch name {
        case "valueForKey:":
            guard let key = argument.flatMap(PredicateValueComparison.string) else { return Answer(value: nil) }
            return Answer(value: KeyValueCodingPath.value(of: receiver, forKey: key))
        case "valueForKeyPath:":
            guard let path = argument.flatMap(PredicateValueComparison.string) else { return Answer(value: nil) }
            let components = KeyValueCodingPath.split(path)
            return Answer(value: KeyValueCodingPath.value(of: receiver, components: components[...]))
        case "self":
            return Answer(value: receiver)
        case "description":
            return Answer(value: receiver.map { String(describing: $0) })
        case "isEqual:":
            return Answer(value: PredicateValueComparison.isEqual(receiver, argument))
        case "compare:":
            guard let order = PredicateValueComparison.compare(receiver, argument) else { return nil }
            return Answer(value: NSNumber(value: order.rawValue))
        default:
            break
        }
        guard let string = receiver.flatMap(PredicateValueComparison.string) else { return nil }
        let other = argument.flatMap(PredicateValueComparison.string)
        switch name {
        case "uppercaseString": return Answer(value: string.uppercased())
        case "lowercaseString": return Answer(value: string.lowercased())
        case "length": return Answer(value: NSNumber(value: string.utf16.count))
        case "isEqualToString:": return Answer(value: other.map { string == $0 } ?? false)
        case "hasPrefix:": return Answer(value: other.map { !$0.isEmpty && string.hasPrefix($0) } ?? false)
        case "hasSuffix:": return Answer(value: other.map { !$0.isEmpty && string.hasSuffix($0) } ?? false)
        case "containsString:": return Answer(value: other.map { !$0.isEmpty && string.contains($0) } ?? false)
        case "stringByAppendingString:": return Answer(value: other.map { string + $0 })
        default: return nil
        }
    }
}
