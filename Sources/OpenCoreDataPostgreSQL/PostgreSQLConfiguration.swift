import Foundation

/// Where a PostgreSQL store lives, read from the store's URL:
///
/// ```
/// postgres://user:password@host:5432/database?schema=inventory&sslmode=require
/// postgres:///database?host=/var/run/postgresql&schema=inventory     (a Unix socket: its folder in `host`)
/// postgresql://user@%2Fvar%2Frun%2Fpostgresql/database               (the same, the folder percent-encoded)
/// ```
///
/// `schema` names the PostgreSQL schema that holds the store's tables (`public` if not given), so that several
/// stores share one database; `pool_size` bounds the connections that serve the store's requests at once (see
/// `PostgreSQLConnectionPool`). Every other query item goes to libpq as a connection keyword (`sslmode`,
/// `sslrootcert`, `connect_timeout`, `application_name`, `host`, `password`…); a keyword libpq does not know fails
/// the connection with libpq's message. What is not in the URL comes from libpq's environment variables (`PGHOST`,
/// `PGUSER`, `PGPASSWORD`…) and `~/.pgpass`, as for `psql`.
///
/// The password is used to connect and nowhere else: `redactedURL` — the form errors and descriptions show — replaces
/// it, and a `password` query item, with `***`.
struct PostgreSQLConfiguration: Equatable {
    /// libpq's keywords and values, in order.
    let connectionParameters: [(key: String, value: String)]
    /// The schema of the store's tables.
    let schema: String
    /// The URL's `pool_size`, if it has one.
    let poolSize: Int?
    /// The URL without its password, for messages.
    let redactedURL: String

    static func == (lhs: PostgreSQLConfiguration, rhs: PostgreSQLConfiguration) -> Bool {
        lhs.schema == rhs.schema && lhs.poolSize == rhs.poolSize && lhs.redactedURL == rhs.redactedURL
            && lhs.connectionParameters.elementsEqual(rhs.connectionParameters) { $0 == $1 }
    }

    /// The longest identifier PostgreSQL keeps (longer ones are cut, so that two schemas could become one).
    static let maximumIdentifierLength = 63

    /// Reads `url`; throws `PostgreSQLConfiguration.Invalid` naming what is wrong (never the password).
    init(url: URL) throws(Invalid) {
        let redacted = Self.redact(url)
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            throw Invalid(url: redacted, reason: "it is not a URL")
        }
        guard let scheme = components.scheme?.lowercased(), scheme == "postgres" || scheme == "postgresql" else {
            throw Invalid(
                url: redacted, reason: "its scheme must be postgres:// or postgresql:// (postgres://user@host/db)")
        }
        var parameters: [(key: String, value: String)] = []
        if let host = components.percentEncodedHost, !host.isEmpty {
            guard let decoded = host.removingPercentEncoding else {
                throw Invalid(url: redacted, reason: "its host is not percent-encoded correctly")
            }
            // An IPv6 address comes bracketed.
            let bare =
                decoded.hasPrefix("[") && decoded.hasSuffix("]") ? String(decoded.dropFirst().dropLast()) : decoded
            parameters.append(("host", bare))
        }
        if let port = components.port {
            guard (1...65_535).contains(port) else {
                throw Invalid(url: redacted, reason: "its port \(port) is not one")
            }
            parameters.append(("port", String(port)))
        }
        if let user = components.percentEncodedUser, !user.isEmpty {
            parameters.append(("user", user.removingPercentEncoding ?? user))
        }
        if let password = components.percentEncodedPassword {
            parameters.append(("password", password.removingPercentEncoding ?? password))
        }
        let path = components.percentEncodedPath
        let database = (path.hasPrefix("/") ? String(path.dropFirst()) : path).removingPercentEncoding ?? ""
        guard !database.contains("/") else {
            throw Invalid(url: redacted, reason: "its path must name one database (postgres://host/database)")
        }
        if !database.isEmpty { parameters.append(("dbname", database)) }
        var schema = "public"
        var poolSize: Int?
        for item in components.queryItems ?? [] {
            let value = item.value ?? ""
            if item.name == "schema" {
                schema = value
                continue
            }
            if item.name == "pool_size" {
                guard let size = Int(value), size >= 1 else {
                    throw Invalid(url: redacted, reason: "its pool_size must be a whole number of at least 1")
                }
                poolSize = size
                continue
            }
            guard !item.name.isEmpty else { throw Invalid(url: redacted, reason: "a query item has no name") }
            parameters.removeAll { $0.key == item.name }
            parameters.append((item.name, value))
        }
        guard !schema.isEmpty, schema.utf8.count <= Self.maximumIdentifierLength, !schema.contains("\u{0}") else {
            throw Invalid(
                url: redacted,
                reason: "its schema must be 1 to \(Self.maximumIdentifierLength) bytes long, without NUL characters")
        }
        // Values come back in the forms PostgreSQLValueCoding reads: bytea in hexadecimal, doubles to the last bit.
        let settings = "-c bytea_output=hex -c extra_float_digits=1"
        if let index = parameters.firstIndex(where: { $0.key == "options" }) {
            parameters[index].value += " " + settings
        } else {
            parameters.append(("options", settings))
        }
        if !parameters.contains(where: { $0.key == "application_name" }) {
            parameters.append(("application_name", "OpenCoreData"))
        }
        connectionParameters = parameters
        self.schema = schema
        self.poolSize = poolSize
        redactedURL = redacted
    }

    /// `url` with its password, and the value of a `password` query item, replaced by `***`.
    static func redact(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return "(a URL that cannot be read)"
        }
        if components.percentEncodedPassword != nil { components.percentEncodedPassword = "***" }
        if let items = components.percentEncodedQueryItems {
            components.percentEncodedQueryItems = items.map { item in
                item.name.lowercased() == "password" ? URLQueryItem(name: item.name, value: "***") : item
            }
        }
        return components.string ?? "(a URL that cannot be read)"
    }

    /// Why a URL names no PostgreSQL store.
    struct Invalid: Error, CustomStringConvertible {
        let url: String
        let reason: String
        var description: String { "The URL \(url) does not name a PostgreSQL store: \(reason)" }
    }
}
