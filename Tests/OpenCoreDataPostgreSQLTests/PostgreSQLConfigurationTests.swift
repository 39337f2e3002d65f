import Foundation
import OpenCoreData
import Testing

@testable import OpenCoreDataPostgreSQL

/// Reading store URLs into libpq's connection keywords: white-box, as the keywords are what libpq is given and no
/// public API shows them.
@Suite struct PostgreSQLConfigurationTests {
    func parameters(_ url: String) throws -> [String: String] {
        let configuration = try PostgreSQLConfiguration(url: URL(string: url)!)
        return Dictionary(configuration.connectionParameters.map { ($0.key, $0.value) }, uniquingKeysWith: { $1 })
    }

    @Test func aTCPURLNamesHostPortUserPasswordDatabaseAndSchema() throws {
        let configuration = try PostgreSQLConfiguration(
            url: URL(string: "postgres://app:p%40ss@db.example:6543/inventory?schema=stock&sslmode=require")!)
        let values = Dictionary(configuration.connectionParameters.map { ($0.key, $0.value) }, uniquingKeysWith: { $1 })
        #expect(values["host"] == "db.example")
        #expect(values["port"] == "6543")
        #expect(values["user"] == "app")
        #expect(values["password"] == "p@ss")
        #expect(values["dbname"] == "inventory")
        #expect(values["sslmode"] == "require")
        #expect(values["schema"] == nil)
        #expect(configuration.schema == "stock")
        #expect(
            configuration.redactedURL == "postgres://app:***@db.example:6543/inventory?schema=stock&sslmode=require")
    }

    @Test func aUnixSocketIsNamedByAHostQueryItemOrAPercentEncodedHost() throws {
        let query = try parameters("postgres:///store?host=/var/run/postgresql&user=me")
        #expect(query["host"] == "/var/run/postgresql")
        #expect(query["dbname"] == "store")
        #expect(query["user"] == "me")
        let encoded = try parameters("postgresql://me@%2Fvar%2Frun%2Fpostgresql/store")
        #expect(encoded["host"] == "/var/run/postgresql")
        #expect(encoded["user"] == "me")
    }

    @Test func theSchemaIsPublicUnlessNamed() throws {
        #expect(try PostgreSQLConfiguration(url: URL(string: "postgres://h/db")!).schema == "public")
    }

    @Test func aPasswordQueryItemIsRedactedToo() throws {
        let configuration = try PostgreSQLConfiguration(url: URL(string: "postgres://h/db?password=hunter2")!)
        #expect(!configuration.redactedURL.contains("hunter2"))
        #expect(configuration.connectionParameters.contains { $0.key == "password" && $0.value == "hunter2" })
    }

    @Test func settingsTheStoreReadsByAreAddedToTheUsersOptions() throws {
        let values = try parameters("postgres://h/db?options=-c%20statement_timeout%3D5000")
        #expect(values["options"]?.hasPrefix("-c statement_timeout=5000 ") == true)
        #expect(values["options"]?.contains("bytea_output=hex") == true)
    }

    @Test(arguments: [
        "http://h/db", "postgres://h/db/extra", "postgres://h/db?schema=", "postgres://h:0/db",
    ])
    func badURLsAreRefusedWithTheirReason(_ url: String) throws {
        #expect(throws: PostgreSQLConfiguration.Invalid.self) { try PostgreSQLConfiguration(url: URL(string: url)!) }
    }
}
