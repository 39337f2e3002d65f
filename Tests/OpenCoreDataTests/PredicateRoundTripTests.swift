#if !canImport(CoreData)
import Foundation
import OpenCoreDataShim
import Testing

/// A property of the whole grammar: whatever parses prints a `predicateFormat` that parses back to an equal
/// predicate, whose own format prints the same again. The strings come from `PredicateGrammar`, seeded, so a failure names the
/// seed that reproduces it.
@Suite struct PredicateRoundTripTests {
    /// The outcome of one generated string: `nil` when it round-trips or does not parse, else what went wrong.
    static func roundTripFailure(_ format: String) -> String? {
        guard let first = try? NSPredicate(validatingFormat: format, argumentArray: nil) else { return nil }
        let printed = first.predicateFormat
        let second: NSPredicate
        do {
            second = try NSPredicate(validatingFormat: printed, argumentArray: nil)
        } catch {
            return "\(format) printed as \(printed), which does not parse: \(error.localizedDescription)"
        }
        if second != first { return "\(format) printed as \(printed), which parses to \(second.predicateFormat)" }
        // Printing settles: a second round prints what the first printed, but for spellings of one value that the
        // first print merges (`-0.0` prints as Apple prints it, `-0`, which reads back as the integer 0).
        let reprinted = second.predicateFormat
        if reprinted != printed,
            (try? NSPredicate(validatingFormat: reprinted, argumentArray: nil))?.predicateFormat != reprinted
        {
            return "\(format) printed as \(printed), then as \(reprinted), and does not settle"
        }
        if second.hash != first.hash { return "\(format) and its reparsed copy hash differently" }
        return nil
    }

    @Test func generatedPredicatesRoundTrip() {
        var parsed = 0
        var failures: [String] = []
        let count = 20_000
        for seed in 0..<UInt64(count) {
            var grammar = PredicateGrammar(seed: seed)
            let format = grammar.predicate()
            if (try? NSPredicate(validatingFormat: format, argumentArray: nil)) != nil { parsed += 1 }
            if let failure = Self.roundTripFailure(format) { failures.append("seed \(seed): \(failure)") }
        }
        #expect(failures.isEmpty, "\(failures.count) of \(count) failed; first: \(failures.prefix(5))")
        // The generator speaks the grammar: most of what it says parses.
        #expect(parsed > count * 3 / 4, "only \(parsed) of \(count) generated strings parse")
    }

    @Test func generatedExpressionsRoundTrip() throws {
        var failures: [String] = []
        for seed in 0..<UInt64(5_000) {
            var grammar = PredicateGrammar(seed: seed)
            let format = grammar.expression()
            guard let first = try? NSExpression(validatingFormat: format, argumentArray: []) else { continue }
            let printed = first.expressionFormat
            guard let second = try? NSExpression(validatingFormat: printed, argumentArray: []), second == first else {
                failures.append("seed \(seed): \(format) printed as \(printed)")
                continue
            }
        }
        #expect(failures.isEmpty, "\(failures.count) failed; first: \(failures.prefix(5))")
    }
}
#endif
