import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL
import StoreConformance
import Testing

/// Processes — real ones, each a child of the test run (Swift Testing's exit tests) — incrementing one row of one
/// store at once: optimistic locking across processes loses no update.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, Comment(rawValue: PostgreSQLTestServer.skipMessage)))
struct PostgreSQLMultiProcessTests {
    static let processes = 4
    static let updatesPerProcess = 25
    /// Where the children find the shared store: they inherit the test run's environment.
    static let storeVariable = "OPENCOREDATA_POSTGRES_SHARED_STORE"

    @Test func incrementsFromFourProcessesAreAllKept() async throws {
        let url = try #require(PostgreSQLTestServer.newURL())
        defer { PostgreSQLTestServer.drop(url) }
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: ConformanceModel.shared)
        try coordinator.addPersistentStore(ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: nil)
        let context = NSManagedObjectContext.conformance(coordinator)
        try context.run {
            context.make("Item", ["int64": 0, "string": "shared"])
            try context.save()
        }
        setenv(Self.storeVariable, url.absoluteString, 1)
        let start = Date()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<Self.processes {
                group.addTask {
                    await #expect(processExitsWith: .success) {
                        try PostgreSQLMultiProcessTests.incrementSharedItem()
                    }
                }
            }
        }
        let seconds = Date().timeIntervalSince(start)
        var conflicts = 0
        try context.run {
            context.refreshAllObjects()
            let total = try context.objects("Item", "string == 'shared'").first?.value(forKey: "int64") as? NSNumber
            #expect(total?.intValue == Self.processes * Self.updatesPerProcess)
            conflicts = try context.objects("Item", "string == 'conflicts'").reduce(0) {
                $0 + (($1.value(forKey: "int64") as? NSNumber)?.intValue ?? 0)
            }
        }
        let saves = Self.processes * Self.updatesPerProcess
        print(
            """
            PostgreSQL multi-process: \(Self.processes) processes × \(Self.updatesPerProcess) increments of one row: \
            \(saves) saves, \(conflicts) conflicts retried, in \(String(format: "%.2f", seconds)) s (process launches \
            included)
            """)
    }

    /// In a child process: adds the shared store and increments its item, reading again after each conflict.
    static func incrementSharedItem() throws {
        guard let text = ProcessInfo.processInfo.environment[storeVariable], let url = URL(string: text) else {
            exit(2)
        }
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: ConformanceModel.shared)
        try coordinator.addPersistentStore(ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: nil)
        let context = NSManagedObjectContext.conformance(coordinator)
        try context.run {
            guard let item = try context.objects("Item", "string == 'shared'").first else { exit(3) }
            var conflicts = 0
            for _ in 0..<updatesPerProcess {
                while true {
                    let value = (item.value(forKey: "int64") as? NSNumber)?.int64Value ?? 0
                    item.setValue(value + 1, forKey: "int64")
                    do {
                        try context.save()
                        break
                    } catch let error as NSError where error.code == NSManagedObjectMergeError {
                        conflicts += 1
                        context.refresh(item, mergeChanges: false)
                    }
                }
            }
            // Each process's count in a row of its own, which no other process writes.
            context.make("Item", ["string": "conflicts", "int64": conflicts])
            try context.save()
        }
    }
}
