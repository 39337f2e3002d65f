import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL
import PersistenceWorkloads

// The PostgreSQL store against libpq on the same server (OPENCOREDATA_POSTGRES_URL; scripts/postgres-dev start; eval
// "$(scripts/postgres-dev env)"), in two modes:
//
//   PostgreSQLComparison [runs]                               the SQLite benchmarks' workloads, libpq and the store
//   PostgreSQLComparison contention [processes] [updates] [rows]   processes updating shared rows at once
//
// The workloads are the SQLite comparison's (PersistenceWorkloads): the store runs the very Core Data code that
// OpenCoreDataLibrary runs on SQLite, libpq the statements of LibPQLibrary. Each run gets fresh schemas; the table
// shows the median wall-clock time of the runs and the store's time as a ratio of libpq's.

let base: String = {
    guard let url = ProcessInfo.processInfo.environment["OPENCOREDATA_POSTGRES_URL"] else {
        print("Set OPENCOREDATA_POSTGRES_URL (scripts/postgres-dev start; eval \"$(scripts/postgres-dev env)\")")
        exit(2)
    }
    return url
}()

/// `base` with a `schema` query item.
func url(schema: String) -> URL {
    var components = URLComponents(string: base)!
    components.queryItems =
        (components.queryItems ?? []).filter { $0.name != "schema" } + [
            URLQueryItem(name: "schema", value: schema)
        ]
    return components.url!
}

func newSchema(_ prefix: String) -> String {
    "bench_\(prefix)_" + UUID().uuidString.prefix(8).lowercased()
}

func milliseconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
}

/// One run of every workload of `Library`: each on fresh schemas, in the order of the SQLite table.
func runWorkloads<Library: PersistenceLibrary>(
    _ open: (URL) throws -> Library, drop: (URL) throws -> Void
) throws -> (times: [Workload: Double], fetched: Checksum) {
    var times: [Workload: Double] = [:]
    var fetched = Checksum()
    func check(_ workload: Workload, _ checksum: Checksum) throws {
        if let expected = workload.expectedCount, checksum.count != expected {
            throw BenchmarkFailure("\(Library.name) \(workload): read \(checksum.count) objects, not \(expected)")
        }
    }
    let items = url(schema: newSchema("items"))
    do {
        let library = try open(items)
        defer { try? library.close() }
        let values = Fixture.items
        times[.insert] = try milliseconds { try library.insertItems(values) }
        times[.fetch] = try milliseconds { fetched = try library.fetchAllItems() }
        try check(.fetch, fetched)
        let references = try library.references(serials: Fixture.lookedUpSerials)
        var checksum = Checksum()
        times[.lookupByID] = try milliseconds { checksum = try library.lookUp(references) }
        try check(.lookupByID, checksum)
        times[.lookupByAttribute] = try milliseconds { checksum = try library.lookUp(serials: Fixture.lookedUpSerials) }
        try check(.lookupByAttribute, checksum)
        times[.update] = try milliseconds {
            try library.updateItems(serialsBelow: Int64(Fixture.batchCount), quantity: 1_000_000)
        }
        times[.edit] = try milliseconds {
            try library.editItems(serialsBelow: Int64(Fixture.editCount), quantity: 2_000_000)
        }
    }
    try drop(items)
    let cascade = url(schema: newSchema("cascade"))
    do {
        let library = try open(cascade)
        defer { try? library.close() }
        try library.insertParents(Fixture.batchCount, childrenEach: Fixture.childrenPerDeletedParent)
        times[.delete] = try milliseconds { try library.deleteParents(serialsBelow: Int64(Fixture.batchCount)) }
    }
    try drop(cascade)
    let tree = url(schema: newSchema("tree"))
    do {
        let library = try open(tree)
        defer { try? library.close() }
        try library.insertParents(Fixture.walkedParents, childrenEach: Fixture.childrenPerWalkedParent)
        var checksum = Checksum()
        times[.walk] = try milliseconds { checksum = try library.walkParents() }
        try check(.walk, checksum)
    }
    try drop(tree)
    return (times, fetched)
}

func dropLibPQSchema(_ url: URL) throws {
    let library = try LibPQLibrary(url: url)
    try library.connection.execute("DROP SCHEMA \(library.schema) CASCADE")
}

func compare(runs: Int) throws {
    var libpq: [[Workload: Double]] = []
    var store: [[Workload: Double]] = []
    for run in 1...runs {
        let raw = try runWorkloads({ try LibPQLibrary(url: $0) }, drop: dropLibPQSchema)
        libpq.append(raw.times)
        let ours = try runWorkloads(
            { try OpenCoreDataLibrary(storeType: PostgreSQLStoreType, url: $0, options: nil) },
            drop: { try PostgreSQLStore.dropSchema(at: $0) })
        store.append(ours.times)
        guard raw.fetched == ours.fetched else {
            throw BenchmarkFailure("the store read \(ours.fetched), libpq \(raw.fetched): not the same values")
        }
        FileHandle.standardError.write(Data("run \(run) of \(runs) done\n".utf8))
    }
    func median(_ runs: [[Workload: Double]], _ workload: Workload) -> Double {
        let values = runs.compactMap { $0[workload] }.sorted()
        return values[values.count / 2]
    }
    func format(_ milliseconds: Double) -> String {
        milliseconds < 100 ? String(format: "%.1f ms", milliseconds) : String(format: "%.0f ms", milliseconds)
    }
    print("Median of \(runs) runs; the store's time as a ratio of libpq's (lower is faster).")
    print("")
    print("| Workload | libpq | PostgreSQL store | ratio |")
    print("|:--|--:|--:|--:|")
    for workload in Workload.allCases where workload != .search {
        let raw = median(libpq, workload)
        let ours = median(store, workload)
        print("| \(workload.title) | \(format(raw)) | \(format(ours)) | \(String(format: "%.2f", ours / raw))× |")
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
do {
    switch arguments.first {
    case "contention":
        let numbers = arguments.dropFirst().compactMap { Int($0) }
        try Contention.run(
            processes: numbers.count > 0 ? numbers[0] : 4, updates: numbers.count > 1 ? numbers[1] : 500,
            rows: numbers.count > 2 ? numbers[2] : 10)
    case Contention.workerArgument:
        try Contention.work(Array(arguments.dropFirst()))
    default:
        try compare(runs: arguments.first.flatMap { Int($0) } ?? 3)
    }
} catch {
    FileHandle.standardError.write(Data("PostgreSQLComparison failed: \(error)\n".utf8))
    exit(1)
}
