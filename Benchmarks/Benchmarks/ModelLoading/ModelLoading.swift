import Benchmark
import PersistenceWorkloads

/// Loading large models (issue 30): an inheritance chain of 5,000 entities loaded and added to a new SQLite store,
/// and 10,000 entities side by side loaded, added and saved with an object each.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal],
        timeUnits: .milliseconds,
        warmupIterations: 1,
        maxDuration: .seconds(60),
        maxIterations: 5
    )

    Benchmark("model.chain-5000.load-and-add-store") { benchmark, file in
        do {
            let result = try ModelScaleWorkloads.loadAndAddStore(file)
            if result != ModelScaleWorkloads.chainDepth + 1 { benchmark.error("checksum \(result)") }
        } catch {
            benchmark.error("\(error)")
        }
    } setup: {
        try ModelScaleWorkloads.chainModel()
    }

    Benchmark("model.flat-10000.load-add-and-save") { benchmark, file in
        do {
            let result = try ModelScaleWorkloads.loadAddStoreAndSave(file)
            if result != 2 * ModelScaleWorkloads.flatCount { benchmark.error("checksum \(result)") }
        } catch {
            benchmark.error("\(error)")
        }
    } setup: {
        try ModelScaleWorkloads.flatModel()
    }
}
