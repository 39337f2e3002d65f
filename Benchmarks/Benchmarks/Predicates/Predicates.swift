import Benchmark
import PersistenceWorkloads

/// The predicate engine (issue 3): parsing a 200-character format string (and, for issue 21, a one-megabyte one and
/// a key path of 100,000 components), and evaluating a five-clause predicate against 100,000 objects in memory —
/// managed objects registered in a context, plain Swift structs (read by reflection) and dictionaries.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal],
        timeUnits: .microseconds,
        warmupIterations: 1,
        maxDuration: .seconds(20),
        maxIterations: 25
    )

    Benchmark("parse.200-characters-x1000", configuration: .init(scalingFactor: .kilo, maxIterations: 100)) {
        benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(PredicateWorkloads.parse())
        }
    }

    // Parsing is linear in the input (issue 21): a one-megabyte format string and a 100,000-component key path.
    Benchmark("parse.1-megabyte") { benchmark in
        let clauses = PredicateWorkloads.parseMegabyte()
        if clauses < 20_000 { benchmark.error("\(clauses) clauses") }
    }

    Benchmark("parse.key-path-100k-components") { benchmark in
        blackHole(PredicateWorkloads.parseLongKeyPath())
    }

    Benchmark("evaluate.managed-objects") { benchmark, objects in
        let matches = objects.evaluate(PredicateWorkloads.fiveClauses)
        if matches != PredicateWorkloads.expectedMatches { benchmark.error("\(matches) matches") }
    } setup: {
        try PredicateWorkloads.ManagedObjects()
    }

    Benchmark("evaluate.plain-values") { benchmark, values in
        let matches = PredicateWorkloads.evaluate(PredicateWorkloads.fiveClauses, values)
        if matches != PredicateWorkloads.expectedMatches { benchmark.error("\(matches) matches") }
    } setup: {
        PredicateWorkloads.plainItems()
    }

    Benchmark("evaluate.dictionaries") { benchmark, values in
        let matches = PredicateWorkloads.evaluate(PredicateWorkloads.fiveClauses, values)
        if matches != PredicateWorkloads.expectedMatches { benchmark.error("\(matches) matches") }
    } setup: {
        PredicateWorkloads.dictionaries()
    }
}
