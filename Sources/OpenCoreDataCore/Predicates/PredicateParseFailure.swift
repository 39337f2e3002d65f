// Where a format string stopped making sense and what the parser wanted there. `NSPredicate(format:)` turns it into
// a precondition failure (Apple raises NSInvalidArgumentException "Unable to parse the format string …"); the
// validating initializers turn it into an NSError with Cocoa's formatting-error code.

/// A parse error: the character offset and what was expected there.
struct PredicateParseFailure: Error {
    /// The offset, in characters, into the format string.
    var position: Int
    /// What the parser expected, for example `"an operator such as ==, IN or BEGINSWITH"`.
    var expected: String
    /// What it found instead.
    var found: String

    /// The message without the format string, safe to show anywhere.
    var reason: String {
        "expected \(expected) at position \(position), found \(found)"
    }

    /// Apple's wording, with the format string.
    func message(format: String) -> String {
        "Unable to parse the format string \"\(format)\": \(reason)"
    }

    /// The error the validating initializers throw: `NSCocoaErrorDomain`, code 2048 (`NSFormattingError`).
    func error(format: String) -> NSError {
        NSError(
            domain: NSCocoaErrorDomain,
            code: CocoaError.formatting.rawValue,
            userInfo: [
                NSLocalizedDescriptionKey: "The predicate format is invalid: \(reason).",
                NSDebugDescriptionErrorKey: message(format: format),
                PredicateParseFailure.positionKey: position,
            ])
    }

    /// The `userInfo` key under which the error gives the position as an `Int`.
    static let positionKey = "OpenCoreDataPredicateFormatPosition"
}
