import Foundation
import PersistenceWorkloads

// Runs workloads outside the benchmark harness.
//
//   WorkloadRunner <raw|grdb|records|ocd> <workload> [iterations]   time one workload (median of the runs)
//   WorkloadRunner memory <raw|grdb|records|ocd>                     the memory row, as JSON
//   WorkloadRunner predicate <parse|megabyte|keypath|managed|plain|dictionary> [n]   the predicate workloads
//   WorkloadRunner model <chain|flat> [n] [size]                     load a large model and add a store (and save)
//   WorkloadRunner migration <lightweight|mapping|copy> [n]          migrate a store of 100,000 items (or copy it)
//   WorkloadRunner open [rows] [iterations]                          add a store of 1,000,000 items and fetch one,
//                                                                    against raw SQLite opening it and reading one
//   WorkloadRunner filter [kind] [iterations]                        a fetch with BEGINSWITH, IN 1,000, ANY, SUBQUERY
//                                                                    against raw SQL filtering the same way
//   WorkloadRunner batches <raw|ocd> [rows] [batch size]             iterate a store of 1,000,000 items (OpenCoreData:
//                                                                    fetchBatchSize 500); the memory it took
//   WorkloadRunner sqlite-version                                    the version of the SQLite library linked
//
// Under callgrind, count only the measured part with `--toggle-collect='*measuredRun*'`.

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(2)
}

@inline(never)
func measuredRun(_ run: WorkloadRun) throws -> Checksum {
    try run.run()
}

@inline(never)
func measuredPredicate(_ body: () -> Int) -> Int {
    body()
}

@inline(never)
func measuredMigration(_ run: MigrationWorkloads.Run) throws {
    try run.run()
}

@inline(never)
func measuredModel(_ body: () throws -> Int) rethrows -> Int {
    try body()
}

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
}

let arguments = CommandLine.arguments.dropFirst()
guard let first = arguments.first else {
    fail("usage: WorkloadRunner <raw|grdb|records|ocd> <workload> [iterations] | memory <library> | predicate <kind>")
}

switch first {
case "sqlite-version":
    print(RawSQLiteLibrary.sqliteVersion)

case "memory":
    guard let short = arguments.dropFirst().first, let name = Libraries.name(forShortName: short),
        let measurement = try Libraries.measureMemory(named: name)
    else { fail("usage: WorkloadRunner memory <raw|grdb|records|ocd>") }
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    print(String(decoding: try encoder.encode(measurement), as: UTF8.self))

case "predicate":
    let kind = arguments.dropFirst().first ?? "parse"
    let iterations = arguments.dropFirst(2).first.flatMap(Int.init) ?? 5
    var times: [Double] = []
    var result = 0
    switch kind {
    case "parse":
        for _ in 0..<iterations {
            times.append(
                seconds {
                    result = measuredPredicate {
                        var total = 0
                        for _ in 0..<1_000 { total &+= PredicateWorkloads.parse().predicateFormat.count }
                        return total
                    }
                } / 1_000)
        }
    case "megabyte":
        for _ in 0..<iterations {
            times.append(seconds { result = measuredPredicate { PredicateWorkloads.parseMegabyte() } })
        }
    case "keypath":
        for _ in 0..<iterations {
            times.append(seconds { result = measuredPredicate { PredicateWorkloads.parseLongKeyPath() } })
        }
    case "managed":
        let objects = try PredicateWorkloads.ManagedObjects()
        for _ in 0..<iterations {
            times.append(seconds { result = measuredPredicate { objects.evaluate(PredicateWorkloads.fiveClauses) } })
        }
    case "plain":
        let values = PredicateWorkloads.plainItems()
        for _ in 0..<iterations {
            times.append(
                seconds {
                    result = measuredPredicate { PredicateWorkloads.evaluate(PredicateWorkloads.fiveClauses, values) }
                })
        }
    case "dictionary":
        let values = PredicateWorkloads.dictionaries()
        for _ in 0..<iterations {
            times.append(
                seconds {
                    result = measuredPredicate { PredicateWorkloads.evaluate(PredicateWorkloads.fiveClauses, values) }
                })
        }
    default:
        fail("unknown predicate workload \(kind)")
    }
    print("predicate \(kind): median \(String(format: "%.6f", median(times))) s (result \(result))")

case "model":
    let kind = arguments.dropFirst().first ?? "chain"
    let iterations = arguments.dropFirst(2).first.flatMap(Int.init) ?? 3
    let size = arguments.dropFirst(3).first.flatMap(Int.init)
    let file: ModelScaleWorkloads.ModelFile
    switch kind {
    case "chain": file = try ModelScaleWorkloads.chainModel(depth: size ?? ModelScaleWorkloads.chainDepth)
    case "flat": file = try ModelScaleWorkloads.flatModel(count: size ?? ModelScaleWorkloads.flatCount)
    default: fail("unknown model workload \(kind): chain or flat")
    }
    var times: [Double] = []
    var result = 0
    for _ in 0..<iterations {
        times.append(
            try seconds {
                result = try measuredModel {
                    kind == "chain"
                        ? try ModelScaleWorkloads.loadAndAddStore(file)
                        : try ModelScaleWorkloads.loadAddStoreAndSave(file)
                }
            })
    }
    let formatted = times.map { String(format: "%.3f", $0) }.joined(separator: " ")
    print("model \(kind): median \(String(format: "%.3f", median(times))) s  [\(formatted)] (result \(result))")

case "migration":
    guard let kind = arguments.dropFirst().first.flatMap(MigrationWorkloads.Kind.init(rawValue:)) else {
        fail("usage: WorkloadRunner migration <lightweight|mapping|copy> [iterations]")
    }
    let iterations = arguments.dropFirst(2).first.flatMap(Int.init) ?? 5
    let template = try MigrationWorkloads.Template()
    var times: [Double] = []
    for _ in 0..<iterations {
        let run = try MigrationWorkloads.prepare(kind, in: template)
        times.append(try seconds { try measuredMigration(run) })
        try run.finish()
    }
    let formatted = times.map { String(format: "%.3f", $0) }.joined(separator: " ")
    print("migration \(kind.rawValue): median \(String(format: "%.3f", median(times))) s  [\(formatted)]")

case "filter":
    let kinds =
        arguments.dropFirst().first.flatMap(FilterWorkloads.Kind.init(rawValue:)).map { [$0] }
        ?? FilterWorkloads.Kind.allCases
    let iterations = arguments.dropFirst(2).first.flatMap(Int.init) ?? 11
    let template = try FilterWorkloads.Template()
    for kind in kinds {
        let (raw, ocd, count) = try FilterWorkloads.compare(kind, in: template, iterations: iterations)
        print(
            "filter \(kind.rawValue) (\(count) rows): raw SQLite median "
                + "\(String(format: "%.2f", median(raw) * 1_000)) ms, OpenCoreData median "
                + "\(String(format: "%.2f", median(ocd) * 1_000)) ms (\(String(format: "%.2f", median(ocd) / median(raw)))×)"
        )
    }

case "open":
    let rows = arguments.dropFirst().first.flatMap(Int.init) ?? 1_000_000
    let iterations = arguments.dropFirst(2).first.flatMap(Int.init) ?? 11
    let template = try OpenWorkloads.Template(rows: rows)
    var raw: [Double] = []
    var ocd: [Double] = []
    // Alternated, so that both see the machine in the same state.
    for _ in 0..<iterations {
        var serial: Int64 = 0
        raw.append(try seconds { serial = try OpenWorkloads.openRaw(template.url) })
        var opened: (serial: Int64, close: () throws -> Void)?
        ocd.append(try seconds { opened = try OpenWorkloads.openOpenCoreData(template.url) })
        guard let opened, opened.serial == serial else { fail("open: OpenCoreData and raw SQLite read different rows") }
        try opened.close()
    }
    let format = { (values: [Double]) in values.map { String(format: "%.2f", $0 * 1_000) }.joined(separator: " ") }
    print(
        "open \(rows) rows: raw SQLite median \(String(format: "%.2f", median(raw) * 1_000)) ms [\(format(raw))]; "
            + "OpenCoreData median \(String(format: "%.2f", median(ocd) * 1_000)) ms [\(format(ocd))]; "
            + "difference of medians \(String(format: "%.2f", (median(ocd) - median(raw)) * 1_000)) ms")

case "batches":
    // One library per process, so that what one leaves on the heap does not count against the other.
    guard let library = arguments.dropFirst().first, library == "raw" || library == "ocd" else {
        fail("usage: WorkloadRunner batches <raw|ocd> [rows] [batch size]")
    }
    let rows = arguments.dropFirst(2).first.flatMap(Int.init) ?? 1_000_000
    let batchSize = arguments.dropFirst(3).first.flatMap(Int.init) ?? 500
    let template = try OpenWorkloads.Template(rows: rows)
    let result =
        library == "raw"
        ? try BatchWorkloads.iterateRaw(template.url)
        : try BatchWorkloads.iterateOpenCoreData(template.url, batchSize: batchSize)
    let megabytes = { (bytes: Int) in String(format: "%.1f MB", Double(bytes) / 1_048_576) }
    print(
        "batches \(library) \(result.rows) rows (batch size \(batchSize)): peak heap beyond the start "
            + "\(megabytes(result.peakHeapGrowth)), peak resident size beyond the start "
            + "\(megabytes(result.peakResidentGrowth)), \(String(format: "%.2f", result.seconds)) s, "
            + "serial sum \(result.serialSum)")

default:
    guard let name = Libraries.name(forShortName: first), let driver = Libraries.driver(named: name) else {
        fail("unknown library \(first): raw, grdb, records or ocd")
    }
    guard let workloadName = arguments.dropFirst().first, let workload = Workload(rawValue: workloadName) else {
        fail("workloads: " + Workload.allCases.map(\.rawValue).joined(separator: ", "))
    }
    let iterations = arguments.dropFirst(2).first.flatMap(Int.init) ?? 5
    var times: [Double] = []
    for _ in 0..<iterations {
        let run = try driver.prepare(workload)
        var checksum = Checksum()
        times.append(try seconds { checksum = try measuredRun(run) })
        try run.finish()
        try workload.check(checksum, library: name)
        if times.count == 1 { print("\(name) \(workload.rawValue): \(checksum)") }
    }
    let formatted = times.map { String(format: "%.4f", $0) }.joined(separator: " ")
    print("\(name) \(workload.rawValue): median \(String(format: "%.4f", median(times))) s  [\(formatted)]")
}
