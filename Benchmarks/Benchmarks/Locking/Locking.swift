import Benchmark
import PersistenceWorkloads

/// A reader's 2,000 lookups by serial, alone and beside a save of 100,000 rows into another store of the same
/// coordinator or into the same SQLite store (issue 23): `locking.<case>`. Only the reader's time is measured.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock],
        timeUnits: .milliseconds,
        warmupIterations: 1,
        maxDuration: .seconds(60),
        maxIterations: 7
    )
    for kind in LockingWorkloads.Case.allCases {
        Benchmark("locking.\(kind.rawValue)") { benchmark, stores in
            do {
                // Only the reader is measured: making the writer's objects and undoing its save are not its time.
                let (_, found) = try LockingWorkloads.run(
                    kind, on: stores, readerStarts: { benchmark.startMeasurement() },
                    readerEnds: { benchmark.stopMeasurement() })
                precondition(found == LockingWorkloads.lookups, "every lookup finds its item")
            } catch {
                benchmark.error("\(error)")
            }
        } setup: {
            try LockingWorkloads.Stores()
        }
    }
}
