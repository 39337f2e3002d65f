// swift-tools-version: 6.1
import CompilerPluginSupport
import PackageDescription

let package = Package(
    name: "OpenCoreData",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        // Each product names OpenCoreDataCore too: SwiftPM recompiles a client when a module it depends on changes,
        // not when a module re-exported through one does (measured with Swift 6.3), so a client that depends only
        // on the re-exporting module would keep code compiled against an older OpenCoreDataCore.
        .library(name: "OpenCoreData", targets: ["OpenCoreData", "OpenCoreDataCore"]),
        .library(name: "OpenCoreDataShim", targets: ["OpenCoreDataShim", "OpenCoreData", "OpenCoreDataCore"]),
        // The PostgreSQL store, a product of its own so that SQLite-only clients do not link libpq.
        .library(
            name: "OpenCoreDataPostgreSQL", targets: ["OpenCoreDataPostgreSQL", "OpenCoreData", "OpenCoreDataCore"]),
        .executable(name: "coredata", targets: ["coredata"]),
        .plugin(name: "CoreDataModelCodeGenerator", targets: ["CoreDataModelCodeGenerator"]),
        .plugin(name: "OpenCoreDataFoundationNames", targets: ["OpenCoreDataFoundationNames"]),
    ],
    dependencies: [
        .package(url: "https://github.com/swiftlang/swift-syntax.git", "600.0.0"..<"700.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        // The ecosystem's logging API: the SQL and migration debug logs go through it (see CoreDataLogging).
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        // `swift package generate-documentation`: the DocC catalog, built in CI (.ci/run), where a broken symbol link
        // fails the run.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite3"])]
        ),
        // Raw DEFLATE, the compression of the model Apple's SQLite stores cache in Z_MODELCACHE.
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
        // libpq, PostgreSQL's C client: synchronous like the store calls (docs/ARCHITECTURE.md says why not postgres-nio).
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"]), .brew(["libpq"])]
        ),
        .macro(
            name: "OpenCoreDataMacros",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
            ]
        ),
        // Reads Xcode model files (.xcdatamodeld/.xcdatamodel XML) into plain values; shared by the library and the
        // code generator, which must not depend on the whole library.
        .target(name: "XCDataModelFormat"),
        // The framework. Clients import `OpenCoreData`, which re-exports it so that Apple's names win over
        // Foundation's in every import order (see Sources/OpenCoreData/OpenCoreData.swift).
        .target(
            name: "OpenCoreDataCore",
            dependencies: [
                "CSQLite", "CZlib", "OpenCoreDataMacros", "XCDataModelFormat",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(name: "OpenCoreData", dependencies: ["OpenCoreDataCore"]),
        .target(name: "OpenCoreDataShim", dependencies: ["OpenCoreData", "OpenCoreDataCore", "OpenCoreDataMacros"]),
        // Writes the NSManagedObject subclasses of a model's entities; run by the build plugin below.
        .executableTarget(name: "CoreDataModelGenerator", dependencies: ["XCDataModelFormat"]),
        // Compiles a model into the .momd/.mom that Xcode's momc writes; run by the build plugin below.
        .executableTarget(name: "CoreDataModelCompiler", dependencies: ["OpenCoreDataCore"]),
        .plugin(
            name: "CoreDataModelCodeGenerator",
            capability: .buildTool(),
            dependencies: ["CoreDataModelGenerator", "CoreDataModelCompiler"]
        ),
        // Names OpenCoreData's NSPredicate & co. for files of a target that import only Foundation.
        .plugin(
            name: "OpenCoreDataFoundationNames",
            capability: .buildTool(),
            dependencies: ["CoreDataModelGenerator"]
        ),
        // An app using a model bundle and the classes the plugin generates from it.
        .executableTarget(
            name: "CompanyExample",
            dependencies: ["OpenCoreData", "OpenCoreDataCore"],
            path: "Examples/CompanyExample",
            resources: [.copy("Company.xcdatamodeld")],
            plugins: ["CoreDataModelCodeGenerator"]
        ),
        .executableTarget(
            name: "coredata",
            dependencies: [
                "OpenCoreDataShim",
                // The model tools read Xcode files, which only OpenCoreData does (also on Apple platforms).
                "OpenCoreData",
                "OpenCoreDataCore",
                "XCDataModelFormat",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            // The demo's model, found by NSPersistentContainer(name: "Company"). A model bundle is a folder that
            // must reach the resource bundle as it is, so it is copied rather than processed.
            resources: [.copy("Resources/Company.xcdatamodeld")]
        ),
        .testTarget(
            name: "OpenCoreDataTests",
            dependencies: [
                "OpenCoreDataShim", "OpenCoreData", "OpenCoreDataCore", "XCDataModelFormat", "StoreConformance",
                .product(name: "Logging", package: "swift-log"),
            ],
            // The build plugin compiles the model bundle into Inventory.momd and the mapping model into
            // Inventory1to2.cdm; both are also copied as they are, for the tests that read Xcode's formats.
            resources: [
                .copy("Resources/Inventory.xcdatamodeld"), .copy("Resources/Inventory1to2.xcmappingmodel"),
                // Three versions and the two mapping models between them, for migration through versions.
                .copy("Resources/Shelf.xcdatamodeld"), .copy("Resources/Shelf1to2.xcmappingmodel"),
                .copy("Resources/Shelf2to3.xcmappingmodel"),
            ],
            plugins: ["CoreDataModelCodeGenerator"]
        ),
        // Unqualified Apple names resolve to OpenCoreData's classes whatever the import order: one target per order,
        // because imports are per file but a target's files share one module. (OpenCoreDataCore is listed so that
        // they are recompiled when it changes; see the products.)
        .testTarget(
            name: "ImportFoundationFirstTests",
            dependencies: ["FoundationOnlyLibrary", "OpenCoreData", "OpenCoreDataCore"]),
        .testTarget(
            name: "ImportOpenCoreDataFirstTests",
            dependencies: ["FoundationOnlyLibrary", "OpenCoreData", "OpenCoreDataCore"]),
        .testTarget(name: "ImportShimTests", dependencies: ["OpenCoreDataShim", "OpenCoreDataCore"]),
        .testTarget(
            name: "FoundationOnlyImportTests",
            dependencies: ["FoundationOnlyLibrary", "OpenCoreData", "OpenCoreDataCore"],
            plugins: ["OpenCoreDataFoundationNames"]),
        // A library whose files import only Foundation and whose public API uses NSPredicate & co., built with the
        // plugin; the import-order test targets call it, so that its interface is checked from every client.
        .target(
            name: "FoundationOnlyLibrary", dependencies: ["OpenCoreData", "OpenCoreDataCore"],
            path: "Tests/FoundationOnlyLibrary", plugins: ["OpenCoreDataFoundationNames"]),
        // Patterns found in public Core Data code ported to Linux, in Apple's spelling, in files that import
        // Foundation first (as real files do), so that they could run unchanged against Apple's Core Data.
        .testTarget(
            name: "CompatibilityTests", dependencies: ["OpenCoreData", "OpenCoreDataShim", "OpenCoreDataCore"]),
        // The store conformance suite: one body of tests that every store must pass, with the sample stores that
        // exercise the public store API. A library rather than a test target, so that the test target of each store
        // — here, and in packages with stores of their own (the PostgreSQL store) — runs the same cases against its
        // store; it uses only OpenCoreData's public API.
        .target(
            name: "StoreConformance",
            dependencies: ["OpenCoreData", "OpenCoreDataCore"],
            path: "Tests/StoreConformance"
        ),
        .testTarget(
            name: "StoreConformanceTests", dependencies: ["StoreConformance", "OpenCoreData", "OpenCoreDataCore"]),
        // The PostgreSQL store: Apple's SQLite layout in a PostgreSQL schema, through libpq.
        .target(name: "OpenCoreDataPostgreSQL", dependencies: ["CLibPQ", "OpenCoreData", "OpenCoreDataCore"]),
        // Against a real server named by OPENCOREDATA_POSTGRES_URL (scripts/postgres-dev starts one).
        .testTarget(
            name: "OpenCoreDataPostgreSQLTests",
            dependencies: ["OpenCoreDataPostgreSQL", "StoreConformance", "OpenCoreData", "OpenCoreDataCore"]),
        .testTarget(
            name: "OpenCoreDataMacrosTests",
            dependencies: [
                "OpenCoreDataMacros",
                .product(name: "SwiftSyntaxMacrosTestSupport", package: "swift-syntax"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
