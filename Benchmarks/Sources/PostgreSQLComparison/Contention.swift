import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL

/// Several processes updating the same rows of one PostgreSQL store at once, each through its own coordinator and
/// context, as workers of a service on several hosts would.
///
/// The store holds `rows` counters; counter `p` of every row belongs to process `p`. Each process fetches the rows
/// once, then makes `updates` saves, each adding one to its own counter of one row (the rows taken in turn). Its
/// snapshots go stale as the others save, so that most saves find the row changed underneath them: the context's
/// merge policy (`NSMergeByPropertyObjectTrumpMergePolicy`) keeps the process's counter and takes the others' from
/// the store. No update may be lost: at the end, each process's counters add up to `updates`.
enum Contention {
    static let workerArgument = "contention-worker"

    /// The model: one entity, `Counter`, with a `slot` and one integer attribute per process.
    static func model(processes: Int) -> NSManagedObjectModel {
        func attribute(_ name: String) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = .integer64AttributeType
            attribute.defaultValue = 0
            return attribute
        }
        let counter = NSEntityDescription()
        counter.name = "Counter"
        counter.managedObjectClassName = "NSManagedObject"
        counter.properties = [attribute("slot")] + (0..<processes).map { attribute(counterName($0)) }
        let model = NSManagedObjectModel()
        model.entities = [counter]
        return model
    }

    static func counterName(_ process: Int) -> String { "count\(process)" }

    /// The merge policy of the workers, counting the conflicts it resolves.
    final class CountingMergePolicy: NSMergePolicy, @unchecked Sendable {
        // @unchecked: used by the one context of one worker, on its queue.
        var conflicts = 0

        override func resolve(optimisticLockingConflicts list: [NSMergeConflict]) throws {
            conflicts += list.count
            try super.resolve(optimisticLockingConflicts: list)
        }
    }

    /// Makes the store, starts the workers together, waits for them, checks the sums and prints the throughput.
    static func run(processes: Int, updates: Int, rows: Int) throws {
        let schema = newSchema("contention")
        let storeURL = url(schema: schema)
        defer { try? PostgreSQLStore.dropSchema(at: storeURL) }
        let model = model(processes: processes)
        try withContext(model: model, url: storeURL) { context in
            for slot in 0..<rows {
                let counter = NSEntityDescription.insertNewObject(forEntityName: "Counter", into: context)
                counter.setValue(slot, forKey: "slot")
            }
            try context.save()
        }
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var workers: [(process: Process, input: Pipe, output: Pipe)] = []
        for index in 0..<processes {
            let process = Process()
            process.executableURL = executable
            process.arguments = [workerArgument, schema, String(index), String(processes), String(updates)]
            let input = Pipe()
            let output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            try process.run()
            workers.append((process, input, output))
        }
        // Each worker says "ready" once it has its rows; then all start at once.
        for worker in workers {
            var said = Data()
            while !String(decoding: said, as: UTF8.self).contains("ready") {
                let more = worker.output.fileHandleForReading.availableData
                guard !more.isEmpty else { throw BenchmarkFailure("a worker exited before it was ready") }
                said += more
            }
        }
        let start = DispatchTime.now().uptimeNanoseconds
        for worker in workers {
            worker.input.fileHandleForWriting.write(Data("go\n".utf8))
        }
        var conflicts = 0
        for worker in workers {
            let rest = worker.output.fileHandleForReading.readDataToEndOfFile()
            worker.process.waitUntilExit()
            guard worker.process.terminationStatus == 0,
                let line = String(decoding: rest, as: UTF8.self).split(separator: "\n").last(where: {
                    $0.hasPrefix("done ")
                }), let resolved = Int(line.dropFirst(5))
            else { throw BenchmarkFailure("a worker failed (status \(worker.process.terminationStatus))") }
            conflicts += resolved
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let sums = try withContext(model: model, url: storeURL) { context in
            let counters = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Counter"))
            return (0..<processes).map { process in
                counters.reduce(0) { $0 + (($1.value(forKey: counterName(process)) as? NSNumber)?.intValue ?? 0) }
            }
        }
        guard sums.allSatisfy({ $0 == updates }) else {
            throw BenchmarkFailure("lost updates: the processes' counters add up to \(sums), not \(updates) each")
        }
        let total = processes * updates
        print("| processes × updates | rows | time | updates/s | conflicts resolved by the merge policy | lost |")
        print("|:--|--:|--:|--:|--:|--:|")
        print(
            "| \(processes) × \(updates) | \(rows) | \(String(format: "%.2f", seconds)) s | "
                + "\(String(format: "%.0f", Double(total) / seconds)) | \(conflicts) | 0 |")
    }

    /// One worker: `schema index processes updates`.
    static func work(_ arguments: [String]) throws {
        guard arguments.count == 4, let index = Int(arguments[1]), let processes = Int(arguments[2]),
            let updates = Int(arguments[3])
        else { throw BenchmarkFailure("usage: \(workerArgument) schema index processes updates") }
        let model = model(processes: processes)
        let policy = CountingMergePolicy(merge: .mergeByPropertyObjectTrumpMergePolicyType)
        try withContext(model: model, url: url(schema: arguments[0])) { context in
            context.mergePolicy = policy
            let request = NSFetchRequest<NSManagedObject>(entityName: "Counter")
            request.sortDescriptors = [NSSortDescriptor(key: "slot", ascending: true)]
            let counters = try context.fetch(request)
            FileHandle.standardOutput.write(Data("ready\n".utf8))
            _ = readLine()
            let name = counterName(index)
            for update in 0..<updates {
                let counter = counters[(update + index) % counters.count]
                counter.setValue(((counter.value(forKey: name) as? NSNumber)?.intValue ?? 0) + 1, forKey: name)
                try context.save()
            }
        }
        FileHandle.standardOutput.write(Data("done \(policy.conflicts)\n".utf8))
    }

    /// Runs `body` in a private-queue context of a new coordinator with the store at `url`.
    static func withContext<T>(model: NSManagedObjectModel, url: URL, _ body: (NSManagedObjectContext) throws -> T)
        throws -> T
    {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(
            ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: nil)
        defer { try? coordinator.remove(store) }
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return try context.performAndWait { try body(context) }
    }
}
