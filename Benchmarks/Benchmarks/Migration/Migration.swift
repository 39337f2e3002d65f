import Benchmark
import PersistenceWorkloads

/// Migrating a store of 100,000 items (issue 20): `migration.<kind>`, where the kind is `lightweight` (inferred, in
/// place with SQL), `mapping` (a mapping model, object by object) or `copy` (SQLite's own copy of the table, the
/// reference).
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal],
        timeUnits: .milliseconds,
        warmupIterations: 1,
        maxDuration: .seconds(60),
        maxIterations: 7
    )
    for kind in MigrationWorkloads.Kind.allCases {
        Benchmark("migration.\(kind.rawValue)") { benchmark, template in
            do {
                // Each run migrates a fresh copy of the version-1 store; only the migration is measured.
                let run = try MigrationWorkloads.prepare(kind, in: template)
                benchmark.startMeasurement()
                try run.run()
                benchmark.stopMeasurement()
                try run.finish()
            } catch {
                benchmark.error("\(error)")
            }
        } setup: {
            try MigrationWorkloads.Template()
        }
    }
}
