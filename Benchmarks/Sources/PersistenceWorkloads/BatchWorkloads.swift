import CMemoryStats
import Foundation
import OpenCoreData

/// Iterating a large store a batch at a time: OpenCoreData fetching every item with `fetchBatchSize` and reading
/// each one's attributes in order, against raw SQLite stepping through the same rows. What is measured is memory:
/// the largest heap in use beyond what it was just before the fetch (sampled as the iteration goes), and the peak
/// resident size beyond the resident size there. The store is the one of `OpenWorkloads` (`rows` items).
public enum BatchWorkloads {
    /// What one iteration over the store cost.
    public struct Measurement: Sendable {
        public var rows: Int
        /// The largest heap in use beyond the heap before the fetch, in bytes.
        public var peakHeapGrowth: Int
        /// The peak resident size beyond the resident size before the fetch, in bytes.
        public var peakResidentGrowth: Int
        public var seconds: Double
        /// The sum of the serials read, to check that both read the same rows.
        public var serialSum: Int64
    }

    /// Samples the heap every `interval` rows and keeps the largest.
    struct HeapWatch {
        let baseline = Int(ocd_benchmark_heap_bytes_in_use())
        let interval = 5_000
        var largest = 0
        var seen = 0

        mutating func row() {
            seen += 1
            if seen % interval == 0 { sample() }
        }

        mutating func sample() {
            largest = max(largest, Int(ocd_benchmark_heap_bytes_in_use()) - baseline)
        }
    }

    /// Steps through every item with the SQLite C API, reading every column of each into Swift values.
    @inline(never)
    public static func iterateRaw(_ url: URL) throws -> Measurement {
        let connection = try SQLiteConnection(url: url)
        // The statement is finalized (at the end of the closure) before the connection closes.
        let measurement = try {
            let statement = try connection.prepare(
                "SELECT ZSERIAL, ZQUANTITY, ZFLAGS, ZPRICE, ZRATIO, ZNAME, ZCATEGORY, ZPAYLOAD, ZRANK FROM ZITEM")
            return try measure { watch in
                var sum: Int64 = 0
                var rows = 0
                while try statement.step() {
                    let values = (
                        statement.int64(0), statement.int64(1), statement.int64(2), statement.double(3),
                        statement.double(4), statement.string(5), statement.string(6), statement.data(7),
                        statement.optionalInt64(8)
                    )
                    sum &+= values.0
                    rows += 1
                    watch.row()
                }
                return (rows, sum)
            }
        }()
        try connection.close()
        return measurement
    }

    /// Fetches every item with `fetchBatchSize` set and reads each one's attributes in order, as an app iterating a
    /// large result does.
    @inline(never)
    public static func iterateOpenCoreData(_ url: URL, batchSize: Int) throws -> Measurement {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: MigrationWorkloads.version1)
        let store = try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: MigrationWorkloads.pragmas)
        defer { try? coordinator.remove(store) }
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let keys = ["serial", "quantity", "flags", "price", "ratio", "name", "category", "payload", "rank"]
        return try context.performAndWait {
            try measure { watch in
                let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
                request.fetchBatchSize = batchSize
                let items = try context.fetch(request)
                watch.sample()
                var sum: Int64 = 0
                for item in items {
                    for key in keys { _ = item.value(forKey: key) }
                    sum &+= (item.value(forKey: "serial") as? Int64) ?? 0
                    watch.row()
                }
                watch.sample()
                return (items.count, sum)
            }
        }
    }

    private static func measure(_ body: (inout HeapWatch) throws -> (rows: Int, sum: Int64)) throws -> Measurement {
        MemorySnapshot.resetPeakResidentSize()
        let before = MemorySnapshot.now()
        var watch = HeapWatch()
        var result = (rows: 0, sum: Int64(0))
        let seconds = try FilterWorkloads.timed { result = try body(&watch) }
        let (rows, sum) = result
        watch.sample()
        let after = MemorySnapshot.now()
        return Measurement(
            rows: rows, peakHeapGrowth: watch.largest,
            peakResidentGrowth: after.peakResidentBytes - before.residentBytes, seconds: seconds, serialSum: sum)
    }
}
