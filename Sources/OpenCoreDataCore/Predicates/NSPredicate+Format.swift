// The format initializers. On Apple platforms `NSPredicate(format:)` returns an instance of the subclass the format
// describes; a Swift initializer cannot do that, but an initializer in a protocol extension may assign `self`, so
// the format initializers live here and NSPredicate adopts the protocol.

/// The format initializers of `NSPredicate`, which return the subclass the format describes.
public protocol NSPredicateFormatInitializable {}

extension NSPredicate: NSPredicateFormatInitializable {}

extension NSPredicateFormatInitializable where Self: NSPredicate {
    /// Parses `predicateFormat`, substituting `args` for its `%@`, `%K`, `%d`… specifiers.
    ///
    /// ```swift
    /// NSPredicate(format: "%K BEGINSWITH[cd] %@ AND age > %d", "name", "jo", 30)
    /// ```
    ///
    /// A malformed format string stops the program, naming the position and what was expected there, as Apple
    /// raises an exception. For strings from users, files or the network use
    /// ``NSPredicate/init(validatingFormat:argumentArray:)``, which throws instead.
    public init(format predicateFormat: String, _ args: CVarArg...) {
        self.init(format: predicateFormat, argumentArray: args.map { $0 as Any })
    }

    /// Parses `predicateFormat`, substituting the values in `arguments` in order.
    ///
    /// A malformed format string stops the program; see ``NSPredicate/init(validatingFormat:argumentArray:)``.
    public init(format predicateFormat: String, argumentArray arguments: [Any]?) {
        let predicate: NSPredicate
        do {
            predicate = try PredicateParser.parsePredicate(predicateFormat, arguments: arguments ?? [])
        } catch {
            preconditionFailure(error.message(format: predicateFormat))
        }
        guard let typed = predicate as? Self else {
            preconditionFailure("\"\(predicateFormat)\" describes a \(type(of: predicate)), not a \(Self.self)")
        }
        self = typed
    }

    /// Parses a format string that may be malformed, such as one typed by a user, and throws instead of stopping
    /// the program.
    ///
    /// ```swift
    /// do {
    ///     let filter = try NSPredicate(validatingFormat: searchField.text)
    /// } catch let error as NSError {
    ///     print(error.localizedDescription)  // …expected an expression at position 7…
    /// }
    /// ```
    ///
    /// The error is an `NSError` in `NSCocoaErrorDomain` with code 2048 (`NSFormattingError`); its localized
    /// description names the position and what was expected, and `NSDebugDescriptionErrorKey` adds the format
    /// string. Parsing takes time linear in the string's length whatever it contains.
    public init(validatingFormat predicateFormat: String, argumentArray arguments: [Any]? = nil) throws {
        let predicate: NSPredicate
        do {
            predicate = try PredicateParser.parsePredicate(predicateFormat, arguments: arguments ?? [])
        } catch {
            throw error.error(format: predicateFormat)
        }
        guard let typed = predicate as? Self else {
            throw PredicateParseFailure(
                position: 0, expected: "a \(Self.self)", found: "a \(type(of: predicate))"
            ).error(format: predicateFormat)
        }
        self = typed
    }
}

extension NSExpression {
    /// Parses an expression format, substituting `args` for its format specifiers.
    ///
    /// ```swift
    /// NSExpression(format: "4 + 5 - 2**3").expressionValue(with: nil, context: nil)  // 1
    /// ```
    ///
    /// A malformed format stops the program; see ``NSExpression/init(validatingFormat:argumentArray:)``.
    public convenience init(format expressionFormat: String, _ args: CVarArg...) {
        self.init(format: expressionFormat, argumentArray: args.map { $0 as Any })
    }

    /// Parses an expression format, substituting the values in `arguments` in order.
    public convenience init(format expressionFormat: String, argumentArray arguments: [Any]) {
        let expression: NSExpression
        do {
            expression = try PredicateParser.parseExpression(expressionFormat, arguments: arguments)
        } catch {
            preconditionFailure(error.message(format: expressionFormat))
        }
        self.init(kind: expression.kind)
    }

    /// Parses an expression format that may be malformed and throws an `NSError` (`NSCocoaErrorDomain`, code
    /// 2048) naming the position and what was expected, instead of stopping the program.
    public convenience init(validatingFormat expressionFormat: String, argumentArray arguments: [Any] = []) throws {
        let expression: NSExpression
        do {
            expression = try PredicateParser.parseExpression(expressionFormat, arguments: arguments)
        } catch {
            throw error.error(format: expressionFormat)
        }
        self.init(kind: expression.kind)
    }
}
