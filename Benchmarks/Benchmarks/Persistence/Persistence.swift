import Benchmark
import PersistenceWorkloads

/// The same workloads with each library, in one run: `<workload>.<library>`, where the library is `raw` (the SQLite
/// C API), `grdb` (GRDB's statements), `records` (GRDB's Codable records) or `ocd` (OpenCoreData).
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal],
        timeUnits: .microseconds,
        warmupIterations: 1,
        maxDuration: .seconds(60),
        maxIterations: 9
    )
    let shortNames = ["raw", "grdb", "records", "ocd"]
    for workload in Workload.allCases {
        for short in shortNames {
            guard let library = Libraries.name(forShortName: short) else { continue }
            Benchmark("\(workload.rawValue).\(short)") { benchmark, driver in
                do {
                    // Each run gets its own prepared database (a fresh copy where the workload changes the data);
                    // only the workload itself is measured.
                    let run = try driver.prepare(workload)
                    benchmark.startMeasurement()
                    let checksum = try run.run()
                    benchmark.stopMeasurement()
                    blackHole(checksum)
                    try run.finish()
                    try workload.check(checksum, library: library)
                } catch {
                    benchmark.error("\(error)")
                }
            } setup: {
                Libraries.driver(named: library)!
            }
        }
    }
}
