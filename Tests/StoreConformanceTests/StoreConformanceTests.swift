import Foundation
import OpenCoreData
import StoreConformance
import Testing

/// Every case of the store conformance suite against every store of this package: SQLite, in-memory, the sample
/// atomic store and the sample incremental store (the last two written with the public API only).
@Suite struct StoreConformanceTests {
    @Test(arguments: StoreFixture.all, StoreConformanceCase.all)
    func conformance(_ fixture: StoreFixture, _ testCase: StoreConformanceCase) throws {
        try testCase.run(fixture)
    }

    /// The persistent history cases, against the store of this package that records history.
    @Test(arguments: StoreConformanceCase.persistentHistory)
    func persistentHistory(_ testCase: StoreConformanceCase) throws {
        try testCase.run(.sqlite)
    }
}
