import Foundation

// Prints the README's tables from one run, and checks the run against the thresholds:
//
//   BenchmarkReport <results directory> [--thresholds <thresholds.json>]
//
// The directory holds what `Benchmarks/run` gathered: package-benchmark's `histogramPercentiles` export (the
// wall-clock percentiles of every benchmark), `memory-*.json` (WorkloadRunner's memory row per library) and
// `machine.txt`. With `--thresholds`, OpenCoreData's ratio to raw SQLite on each workload and its heap bytes per
// object are compared with the limits the file sets (see Benchmarks/README.md); any excess is listed and the exit
// status is 1.

struct MemoryMeasurement: Decodable {
    var library: String
    var heapBytesPerObject: Double
    var peakResidentBytesPerObject: Double
    var peakResidentBytes: Int
    var attributeBytesPerObject: Double
}

/// The limits a run must keep: OpenCoreData's median divided by raw SQLite's, per workload key, and heap bytes per
/// object held.
struct Thresholds: Decodable {
    var ratios: [String: Double]
    var memoryBytesPerObject: Double?
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 1 || (arguments.count == 3 && arguments[1] == "--thresholds") else {
    FileHandle.standardError.write(
        Data("usage: BenchmarkReport <results directory> [--thresholds <thresholds.json>]\n".utf8))
    exit(2)
}
let directory = URL(fileURLWithPath: arguments[0], isDirectory: true)
let thresholds =
    try arguments.count == 3
    ? JSONDecoder().decode(Thresholds.self, from: Data(contentsOf: URL(fileURLWithPath: arguments[2])))
    : nil
let files = (try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)) ?? []

/// Median wall-clock time in milliseconds, by benchmark name (`insert.ocd`, `parse.…`), from package-benchmark's
/// `histogramPercentiles` export: `<baseline>.<target>.<name>.wallClock.histogram.percentiles.tsv`, one line per
/// percentile, the unit in the header.
var medians: [String: Double] = [:]
let suffix = ".wallClock.histogram.percentiles.tsv"
for file in files where file.lastPathComponent.hasSuffix(suffix) {
    let parts = file.lastPathComponent.dropLast(suffix.count).split(separator: ".", maxSplits: 2)
    guard parts.count == 3 else { continue }
    let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
    guard let header = lines.first, let median = lines.first(where: { $0.hasPrefix("50\t") }),
        let value = Double(median.split(separator: "\t")[1])
    else { continue }
    let scale: Double =
        header.contains("(ns)") ? 1e-6 : header.contains("(μs)") ? 1e-3 : header.contains("(ms)") ? 1 : 1_000
    medians[String(parts[2])] = value * scale
}
var memory: [String: MemoryMeasurement] = [:]
for file in files where file.lastPathComponent.hasPrefix("memory-") && file.pathExtension == "json" {
    let measurement = try JSONDecoder().decode(MemoryMeasurement.self, from: Data(contentsOf: file))
    memory[measurement.library] = measurement
}

func format(_ milliseconds: Double) -> String {
    if milliseconds >= 100 { return String(format: "%.0f ms", milliseconds) }
    if milliseconds >= 10 { return String(format: "%.1f ms", milliseconds) }
    if milliseconds >= 1 { return String(format: "%.2f ms", milliseconds) }
    return String(format: "%.1f µs", milliseconds * 1_000)
}

let libraries = [
    ("raw", "raw SQLite"), ("grdb", "GRDB statements"), ("records", "GRDB records"), ("ocd", "OpenCoreData"),
]
let workloads = [
    ("insert", "insert 100,000 + save"),
    ("fetch", "fetch 100,000 + read all attributes"),
    ("lookupByID", "10,000 lookups by ID"),
    ("lookupByAttribute", "10,000 lookups by indexed attribute"),
    ("update", "update 10,000 + save"),
    ("edit", "1,000 edits, each saved"),
    ("delete", "delete 10,000 with 10 children each + save"),
    ("walk", "walk to-many, 1,000 parents × 100 children"),
    ("search", "fetch `name CONTAINS[cd]` over 100,000"),
]

if let machine = try? String(contentsOf: directory.appendingPathComponent("machine.txt"), encoding: .utf8) {
    print(machine.trimmingCharacters(in: .whitespacesAndNewlines))
    print()
}

print("Median wall-clock time; in parentheses, the ratio to raw SQLite (lower is faster).")
print()
print("| Workload | " + libraries.map(\.1).joined(separator: " | ") + " |")
print("|:--|" + libraries.map { _ in "--:" }.joined(separator: "|") + "|")
for (key, title) in workloads {
    let baseline = medians["\(key).raw"]
    var cells: [String] = []
    for (short, _) in libraries {
        guard let result = medians["\(key).\(short)"] else {
            cells.append("—")
            continue
        }
        var cell = format(result)
        if short != "raw", let baseline, baseline > 0 {
            cell += String(format: " (%.2f×)", result / baseline)
        }
        cells.append(cell)
    }
    print("| \(title) | " + cells.joined(separator: " | ") + " |")
}

if !memory.isEmpty {
    let attributeBytes = memory.values.first!.attributeBytesPerObject
    let baseline = memory["raw SQLite"]?.heapBytesPerObject
    print()
    // Wrapped as the README is, at 120 columns.
    print("Memory while 100,000 items are held (OpenCoreData: registered in a context): heap bytes per object; the")
    print(
        "overhead beyond the attribute data (\(String(format: "%.0f", attributeBytes)) bytes per item on average, "
            + "strings as UTF-8); the overhead beyond raw SQLite's,")
    print("which holds the same values as plain Swift values (native strings and `Data` carry headers of their own);")
    print("and the process's peak resident size.")
    print()
    print("| Library | heap per object | beyond the attribute data | beyond raw SQLite | peak resident size |")
    print("|:--|--:|--:|--:|--:|")
    for (_, name) in libraries {
        guard let measurement = memory[name] else { continue }
        let beyondRaw = baseline.map { String(format: "%.0f B", measurement.heapBytesPerObject - $0) } ?? "—"
        print(
            "| \(name) | \(String(format: "%.0f B", measurement.heapBytesPerObject)) | "
                + "\(String(format: "%.0f B", measurement.heapBytesPerObject - attributeBytes)) | "
                + "\(name == "raw SQLite" ? "—" : beyondRaw) | "
                + "\(String(format: "%.1f MB", Double(measurement.peakResidentBytes) / 1_048_576)) |")
    }
}

let predicateRows = [
    // The harness already reports a scaled benchmark's time per inner iteration (one parse).
    ("parse.200-characters-x1000", "parse a 200-character predicate", 1.0),
    ("evaluate.managed-objects", "five-clause predicate × 100,000 managed objects", 1.0),
    ("evaluate.plain-values", "five-clause predicate × 100,000 Swift structs (reflection)", 1.0),
    ("evaluate.dictionaries", "five-clause predicate × 100,000 dictionaries", 1.0),
]
if predicateRows.contains(where: { medians[$0.0] != nil }) {
    print()
    print("| Predicate workload | median |")
    print("|:--|--:|")
    for (key, title, divisor) in predicateRows {
        guard let result = medians[key] else { continue }
        print("| \(title) | \(format(result / divisor)) |")
    }
}

let modelRows = [
    ("model.chain-5000.load-and-add-store", "load an inheritance chain of 5,000 entities, add a new SQLite store"),
    ("model.flat-10000.load-add-and-save", "load 10,000 entities, add a new SQLite store, save an object of each"),
]
if modelRows.contains(where: { medians[$0.0] != nil }) {
    print()
    print("| Model workload | median |")
    print("|:--|--:|")
    for (key, title) in modelRows {
        guard let result = medians[key] else { continue }
        print("| \(title) | \(format(result)) |")
    }
}

// Each migration against SQLite's own copy of the table, the reference.
let migrationRows = [
    ("migration.lightweight", "lightweight migration of 100,000 rows (add attribute, rename attribute)"),
    ("migration.mapping", "mapping-model migration of 100,000 rows"),
]
if let reference = medians["migration.copy"], migrationRows.contains(where: { medians[$0.0] != nil }) {
    print()
    print("| Migration workload | SQLite's copy of the table | OpenCoreData |")
    print("|:--|--:|--:|")
    for (key, title) in migrationRows {
        guard let result = medians[key] else { continue }
        print(
            "| \(title) | \(format(reference)) | \(format(result)) (\(String(format: "%.2f×", result / reference))) |")
    }
}

// The guard: a workload that got more than its threshold slower relative to raw SQLite, or objects that take more
// memory, fail the run. Workloads the run did not measure (a `--filter`ed run) are not checked.
if let thresholds {
    var excesses: [String] = []
    var checked = 0
    for (key, limit) in thresholds.ratios.sorted(by: { $0.key < $1.key }) {
        guard let result = medians["\(key).ocd"], let baseline = medians["\(key).raw"], baseline > 0 else { continue }
        checked += 1
        let ratio = result / baseline
        if ratio > limit {
            excesses.append("\(key): " + String(format: "%.2f× raw SQLite, above the threshold of %.2f×", ratio, limit))
        }
    }
    if let limit = thresholds.memoryBytesPerObject, let measurement = memory["OpenCoreData"] {
        checked += 1
        if measurement.heapBytesPerObject > limit {
            excesses.append(
                String(
                    format: "memory: %.0f heap bytes per object, above the threshold of %.0f",
                    measurement.heapBytesPerObject, limit))
        }
    }
    print()
    if excesses.isEmpty {
        print("Thresholds: \(checked) checked, all kept.")
    } else {
        print("Thresholds: \(excesses.count) of \(checked) exceeded:")
        for excess in excesses { print("- \(excess)") }
        exit(1)
    }
}
