import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL
import StoreConformance
import Testing

/// Every case of the store conformance suite against the PostgreSQL store, each in a schema of its own.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, Comment(rawValue: PostgreSQLTestServer.skipMessage)))
struct PostgreSQLConformanceTests {
    @Test(arguments: StoreConformanceCase.all)
    func conformance(_ testCase: StoreConformanceCase) throws {
        try testCase.run(PostgreSQLTestServer.fixture)
    }
}
