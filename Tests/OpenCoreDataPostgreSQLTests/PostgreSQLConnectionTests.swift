import Foundation
import OpenCoreData
import Testing

@testable import OpenCoreDataPostgreSQL

/// The connection under the store: statements are prepared once per connection, and made again after the server
/// ends the session. White-box, as only the connection's own session shows what it has prepared.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, Comment(rawValue: PostgreSQLTestServer.skipMessage)))
struct PostgreSQLConnectionTests {
    func connection(_ applicationName: String) throws -> PostgreSQLConnection {
        var components = URLComponents(
            url: try #require(PostgreSQLTestServer.url), resolvingAgainstBaseURL: false)!
        components.queryItems =
            (components.queryItems ?? []) + [URLQueryItem(name: "application_name", value: applicationName)]
        return try PostgreSQLConnection(PostgreSQLConfiguration(url: try #require(components.url)))
    }

    func preparedCount(_ connection: PostgreSQLConnection) throws -> Int64? {
        try connection.query("SELECT count(*) FROM pg_prepared_statements").int64(0, 0)
    }

    @Test func aStatementWithParametersIsPreparedOnce() throws {
        let connection = try connection("prepared-" + UUID().uuidString)
        for value in 1...3 {
            let result = try connection.query("SELECT $1::bigint + 1", [String(value)])
            #expect(result.int64(0, 0) == Int64(value + 1))
        }
        #expect(try preparedCount(connection) == 1)
    }

    @Test func statementsArePreparedAgainOnANewSession() throws {
        let name = "reprepared-" + UUID().uuidString
        let connection = try connection(name)
        #expect(try connection.query("SELECT $1::text", ["before"]).text(0, 0) == "before")
        let administration = try self.connection("administration-" + UUID().uuidString)
        try administration.query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", [name])
        #expect(try connection.query("SELECT $1::text", ["after"]).text(0, 0) == "after")
    }
}
