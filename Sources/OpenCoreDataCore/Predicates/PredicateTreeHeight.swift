// Evaluating, printing, comparing, hashing, substituting, translating to SQL and releasing a predicate all walk its
// tree recursively, a few stack frames per level (several kilobytes per level in a debug build). A tree of 100 000
// levels — which `a + a + … + a` would be, since `+` nests to the left — overflows any thread's stack in any of them.
// So a tree's height is bounded when it is built, where the bound can be reported well:
//
// - Format strings: the parser refuses nesting deeper than `PredicateParser.maximumDepth` (100) levels, and
//   operators chained deeper than that, with a parse error at the offending position (`NSPredicate(format:)` stops
//   the program with that message, as Apple raises; `init(validatingFormat:)` throws it).
// - Trees built in code: `maximum` (1 000) levels, far more than any real predicate and within what an 8 MB thread
//   stack holds in a debug build. Building a higher tree is a programmer error and stops the program with a message
//   naming the class, instead of an unexplained stack overflow later.
//
// Every node records its height (one more than its highest child), so the bound costs one comparison per node.

/// The bound on the height of predicate and expression trees.
enum PredicateTreeHeight {
    /// The highest tree that can be built in code.
    static let maximum = 1_000

    /// Stops the program if a node of `type` would top a tree higher than `maximum`.
    @inline(__always)
    static func check(_ height: Int, of type: StaticString) {
        guard height > maximum else { return }
        tooHigh(height, type)
    }

    @inline(never)
    private static func tooHigh(_ height: Int, _ type: StaticString) -> Never {
        preconditionFailure(
            """
            \(type) would top a tree \(height) levels high: predicates and expressions are evaluated, printed and \
            translated recursively, and at most \(maximum) levels are supported. Combine many terms into one \
            compound predicate or aggregate instead of nesting them.
            """)
    }

    /// The height of a comparison of `lhs` and `rhs`, checked.
    static func checked(_ lhs: NSExpression, _ rhs: NSExpression, in type: StaticString) -> Int {
        let height = 1 + max(lhs.height, rhs.height)
        check(height, of: type)
        return height
    }
}
