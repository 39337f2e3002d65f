import Benchmark
import PersistenceWorkloads

/// The predicate engine (issue 3): parsing a 200-character format string, and evaluating a five-clause predicate
/// against 100,000 objects in memory — managed objects registered in a context, plain Swift structs (read by
/// reflection) and dictionaries.
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
