import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL
import SystemLibPQ

// The same workloads through the PostgreSQL store and through libpq directly, against the server of
// OPENCOREDATA_POSTGRES_URL (scripts/postgres-dev start; eval "$(scripts/postgres-dev env)"): median of 3 runs, wall
// clock, with the store's time as a ratio of libpq's. libpq is driven with PQexecParams, one statement per row, in one
// transaction; the store prepares its statements, and makes, tracks and saves managed objects.

let count = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1])! : 20_000
let lookups = 1_000
let base = ProcessInfo.processInfo.environment["OPENCOREDATA_POSTGRES_URL"]!

func url(schema: String) -> URL {
    var components = URLComponents(string: base)!
    components.queryItems = (components.queryItems ?? []) + [URLQueryItem(name: "schema", value: schema)]
    return components.url!
}

func time(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
}

func model() -> NSManagedObjectModel {
    func attribute(_ name: String, _ type: NSAttributeType) -> NSAttributeDescription {
        let attribute = NSAttributeDescription()
        attribute.name = name
        attribute.attributeType = type
        attribute.isOptional = true
        return attribute
    }
    let value = attribute("value", .integer64AttributeType)
    let item = NSEntityDescription()
    item.name = "Item"
    item.managedObjectClassName = "NSManagedObject"
    item.properties = [attribute("name", .stringAttributeType), value, attribute("score", .doubleAttributeType)]
    item.indexes = [
        NSFetchIndexDescription(
            name: "byValue", elements: [NSFetchIndexElementDescription(property: value, collationType: .binary)])
    ]
    let model = NSManagedObjectModel()
    model.entities = [item]
    return model
}
let sharedModel = model()

func storeRun() throws -> [String: Double] {
    let schema = "bench_store_" + UUID().uuidString.prefix(8).lowercased()
    let storeURL = url(schema: schema)
    defer { try? PostgreSQLStore.dropSchema(at: storeURL) }
    let coordinator = NSPersistentStoreCoordinator(managedObjectModel: sharedModel)
    try coordinator.addPersistentStore(ofType: PostgreSQLStoreType, configurationName: nil, at: storeURL, options: nil)
    var result: [String: Double] = [:]
    let writer = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
    writer.persistentStoreCoordinator = coordinator
    try writer.performAndWait {
        result["insert"] = try time {
            for index in 0..<count {
                let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: writer)
                item.setValue("item \(index)", forKey: "name")
                item.setValue(index, forKey: "value")
                item.setValue(Double(index) / 3, forKey: "score")
            }
            try writer.save()
        }
    }
    let reader = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
    reader.persistentStoreCoordinator = coordinator
    try reader.performAndWait {
        var items: [NSManagedObject] = []
        result["fetch"] = try time {
            items = try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item"))
            var total = 0.0
            for item in items {
                total += Double((item.value(forKey: "name") as? String)?.utf8.count ?? 0)
                total += (item.value(forKey: "value") as? NSNumber)?.doubleValue ?? 0
                total += (item.value(forKey: "score") as? NSNumber)?.doubleValue ?? 0
            }
            precondition(items.count == count && total > 0)
        }
        result["update"] = try time {
            for item in items {
                item.setValue(((item.value(forKey: "value") as? NSNumber)?.int64Value ?? 0) + 1, forKey: "value")
            }
            try reader.save()
        }
        result["lookup"] = try time {
            for index in 0..<lookups {
                let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
                request.predicate = NSPredicate(format: "value == %lld", Int64(index * 7 % count + 1))
                let found = try reader.fetch(request)
                precondition(found.count == 1)
            }
        }
    }
    return result
}

final class Raw {
    let connection: OpaquePointer

    init() {
        connection = PQconnectdb(base)
        precondition(PQstatus(connection) == CONNECTION_OK)
    }

    deinit { PQfinish(connection) }

    @discardableResult
    func run(_ sql: String, _ parameters: [String?] = []) -> OpaquePointer {
        let copies = parameters.map { $0.map { strdup($0) } ?? nil }
        defer { copies.forEach { free($0) } }
        let pointers: [UnsafePointer<CChar>?] = copies.map { $0.map { UnsafePointer($0) } }
        let result = pointers.withUnsafeBufferPointer {
            PQexecParams(connection, sql, Int32(parameters.count), nil, $0.baseAddress, nil, nil, 0)
        }!
        let status = PQresultStatus(result)
        precondition(
            status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK, String(cString: PQerrorMessage(connection)))
        return result
    }
}

func rawRun() -> [String: Double] {
    let raw = Raw()
    let schema = "bench_raw_" + UUID().uuidString.prefix(8).lowercased()
    PQclear(raw.run("CREATE SCHEMA \(schema)"))
    defer { PQclear(raw.run("DROP SCHEMA \(schema) CASCADE")) }
    PQclear(
        raw.run("CREATE TABLE \(schema).items (id bigint PRIMARY KEY, name text, value bigint, score double precision)")
    )
    PQclear(raw.run("CREATE INDEX ON \(schema).items (value)"))
    var result: [String: Double] = [:]
    result["insert"] = time {
        PQclear(raw.run("BEGIN"))
        for index in 0..<count {
            PQclear(
                raw.run(
                    "INSERT INTO \(schema).items (id, name, value, score) VALUES ($1, $2, $3, $4)",
                    [String(index + 1), "item \(index)", String(index), "\(Double(index) / 3)"]))
        }
        PQclear(raw.run("COMMIT"))
    }
    struct Row { let id: Int64; let name: String; var value: Int64; let score: Double }
    var rows: [Row] = []
    result["fetch"] = time {
        let result = raw.run("SELECT id, name, value, score FROM \(schema).items ORDER BY id")
        var total = 0.0
        for index in 0..<PQntuples(result) {
            let row = Row(
                id: Int64(String(cString: PQgetvalue(result, index, 0)))!,
                name: String(cString: PQgetvalue(result, index, 1)),
                value: Int64(String(cString: PQgetvalue(result, index, 2)))!,
                score: Double(String(cString: PQgetvalue(result, index, 3)))!)
            total += Double(row.name.utf8.count) + Double(row.value) + row.score
            rows.append(row)
        }
        PQclear(result)
        precondition(rows.count == count && total > 0)
    }
    result["update"] = time {
        PQclear(raw.run("BEGIN"))
        for index in rows.indices {
            rows[index].value += 1
            PQclear(
                raw.run(
                    "UPDATE \(schema).items SET value = $1 WHERE id = $2",
                    [String(rows[index].value), String(rows[index].id)]))
        }
        PQclear(raw.run("COMMIT"))
    }
    result["lookup"] = time {
        for index in 0..<lookups {
            let result = raw.run(
                "SELECT id, name, value, score FROM \(schema).items WHERE value = $1", [String(index * 7 % count + 1)])
            precondition(PQntuples(result) == 1)
            PQclear(result)
        }
    }
    return result
}

func median(_ runs: [[String: Double]], _ key: String) -> Double {
    let values = runs.map { $0[key]! }.sorted()
    return values[values.count / 2]
}

var storeRuns: [[String: Double]] = []
var rawRuns: [[String: Double]] = []
for _ in 0..<3 {
    rawRuns.append(rawRun())
    storeRuns.append(try storeRun())
}
print("| Workload (\(count) rows) | libpq | PostgreSQL store | ratio |")
print("|:--|--:|--:|--:|")
for (key, label) in [
    ("insert", "insert \(count) + save"), ("fetch", "fetch \(count) + read all attributes"),
    ("update", "update \(count) + save"), ("lookup", "\(lookups) lookups by indexed attribute"),
] {
    let raw = median(rawRuns, key)
    let store = median(storeRuns, key)
    print(
        "| \(label) | \(String(format: "%.0f", raw)) ms | \(String(format: "%.0f", store)) ms | \(String(format: "%.2f", store / raw))× |"
    )
}
