import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL
import StoreConformance
import Testing

/// The server the tests use, named by `OPENCOREDATA_POSTGRES_URL` (`scripts/postgres-dev start` makes one; `.ci/run`
/// does too). Without it the tests that need a server are skipped with a message saying so — unless
/// `OPENCOREDATA_REQUIRE_POSTGRES=1`, as in CI, where a missing server fails them.
enum PostgreSQLTestServer {
    static let environment = ProcessInfo.processInfo.environment

    /// The server's URL, without a schema.
    static let url: URL? = environment["OPENCOREDATA_POSTGRES_URL"].flatMap { URL(string: $0) }

    static var isRequired: Bool { environment["OPENCOREDATA_REQUIRE_POSTGRES"] == "1" }

    /// Whether the tests that need a server run: skipped without one, or failing if one is required.
    static var isAvailable: Bool { url != nil || isRequired }

    static let skipMessage =
        "no PostgreSQL server: set OPENCOREDATA_POSTGRES_URL (scripts/postgres-dev start; eval \"$(scripts/postgres-dev env)\")"

    /// The server's URL with a new schema of its own, for one store.
    static func newURL() -> URL? {
        guard let url else {
            Issue.record("OPENCOREDATA_REQUIRE_POSTGRES=1, but OPENCOREDATA_POSTGRES_URL names no server")
            return nil
        }
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        let schema = "test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(20)
        components.queryItems =
            (components.queryItems ?? []).filter { $0.name != "schema" }
            + [URLQueryItem(name: "schema", value: String(schema))]
        return components.url
    }

    /// Drops the schema of a store made by `newURL()`, with `psql`-free means: a store of the schema's own.
    static func drop(_ url: URL?) {
        guard let url,
            let schema = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?
                .first(where: { $0.name == "schema" })?.value, schema.hasPrefix("test_")
        else { return }
        try? PostgreSQLStore.dropSchema(at: url)
    }

    static let fixture = StoreFixture(
        name: "PostgreSQL", storeType: PostgreSQLStoreType, persists: true, sharesLiveChanges: true,
        makeURL: { newURL() }, destroy: { drop($0) }, prepare: { PostgreSQLStore.register() })
}
