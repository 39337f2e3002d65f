// swift-tools-version: 6.1
import PackageDescription

// The benchmarks are a package of their own, so that users of OpenCoreData never build GRDB or package-benchmark.
// Run them all with `Benchmarks/run` from the repository's root.
let package = Package(
    name: "OpenCoreDataBenchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        // Named, because a path dependency is otherwise named after its directory, which differs between clones.
        .package(name: "OpenCoreData", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // The system's libsqlite3, for the raw C API workloads (OpenCoreData's own CSQLite is not a product).
        .systemLibrary(
            name: "SystemSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite3"])]
        ),
        // The C allocator's statistics, for the memory row.
        .target(name: "CMemoryStats"),
        // The same workloads written against OpenCoreData, the raw SQLite C API and GRDB.
        .target(
            name: "PersistenceWorkloads",
            dependencies: [
                "SystemSQLite",
                "CMemoryStats",
                .product(name: "OpenCoreData", package: "OpenCoreData"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // Runs one workload once, outside the benchmark harness: for callgrind, and for the memory row (which needs
        // a process without the harness's malloc interposer, whose per-allocation header would count as overhead).
        .executableTarget(name: "WorkloadRunner", dependencies: ["PersistenceWorkloads"]),
        // Turns the harness's exported results and the memory measurements into the README's table.
        .executableTarget(name: "BenchmarkReport"),
        .executableTarget(
            name: "PersistenceBenchmarks",
            dependencies: [
                "PersistenceWorkloads",
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/Persistence",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "ModelLoadingBenchmarks",
            dependencies: [
                "PersistenceWorkloads",
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/ModelLoading",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "MigrationBenchmarks",
            dependencies: [
                "PersistenceWorkloads",
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/Migration",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "LockingBenchmarks",
            dependencies: [
                "PersistenceWorkloads",
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/Locking",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // libpq, for the PostgreSQL store's comparison with the client library driven directly.
        .systemLibrary(
            name: "SystemLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"]), .brew(["libpq"])]
        ),
        // The PostgreSQL store against libpq on the same server (OPENCOREDATA_POSTGRES_URL): the SQLite comparison's
        // workloads as ratios, and several processes updating shared rows. Run with
        // `swift run -c release --package-path Benchmarks PostgreSQLComparison [runs | contention 4 500]`.
        .executableTarget(
            name: "PostgreSQLComparison",
            dependencies: [
                "SystemLibPQ",
                "PersistenceWorkloads",
                .product(name: "OpenCoreData", package: "OpenCoreData"),
                .product(name: "OpenCoreDataPostgreSQL", package: "OpenCoreData"),
            ]
        ),
        .executableTarget(
            name: "PredicateBenchmarks",
            dependencies: [
                "PersistenceWorkloads",
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/Predicates",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
