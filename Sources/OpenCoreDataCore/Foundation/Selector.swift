// Objective-C selectors do not exist on Linux (`#selector` needs the Objective-C runtime), yet Core Data's API names
// comparison methods by selector: `NSSortDescriptor(key:ascending:selector:)`, custom-selector comparison predicates and
// `FUNCTION(receiver, 'selector:', …)`. This value type carries the selector's name so that the same calls can be written.

/// The name of a method, as Objective-C spells it (`"localizedStandardCompare:"`).
///
/// On Apple platforms `Selector` is the Objective-C runtime's selector type. OpenCoreData keeps only its name, which is
/// all that sort descriptors and predicates need to pick one of the comparisons they know:
///
/// ```swift
/// let byName = NSSortDescriptor(key: "name", ascending: true,
///                               selector: Selector("localizedStandardCompare:"))
/// ```
public struct Selector: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The selector's name, for example `"compare:"`.
    public let name: String

    /// Creates a selector from its name, for example `Selector("caseInsensitiveCompare:")`.
    public init(_ name: String) {
        self.name = name
    }

    /// Creates a selector from a string literal: `let selector: Selector = "compare:"`.
    public init(stringLiteral value: String) {
        self.name = value
    }

    /// The selector's name.
    public var description: String { name }
}

/// Returns the name of a selector, as Foundation's `NSStringFromSelector` does.
public func NSStringFromSelector(_ selector: Selector) -> String {
    selector.name
}

/// Returns the selector with the given name, as Foundation's `NSSelectorFromString` does.
public func NSSelectorFromString(_ name: String) -> Selector {
    Selector(name)
}
