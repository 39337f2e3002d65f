import Foundation
import OpenCoreData

/// Opening a large store and reading its first row: OpenCoreData adding the SQLite store (metadata, model check, entity
/// numbering) and fetching one object, against raw SQLite opening the file and reading the same row. The store holds
/// `rows` items of the migration benchmark's version-1 model; the operating system's page cache is warm, as on a
/// second launch of an app.
public enum OpenWorkloads {
    public final class Template: @unchecked Sendable {
        let scratch = ScratchDirectory("open")
        public let url: URL
        public let rows: Int

        /// Makes the store: 100,000 items saved through OpenCoreData, then copied by SQL until there are `rows`.
        public init(rows: Int) throws {
            self.rows = rows
            let migration = try MigrationWorkloads.Template()
            url = scratch.file("items-\(rows).sqlite")
            try DatabaseFiles.copy(migration.template, to: url)
            let connection = try SQLiteConnection(url: url)
            let columns = try MigrationWorkloads.strings("PRAGMA table_info(ZITEM)", column: 1, in: connection)
                .filter { $0 != "Z_PK" }
            let list = columns.joined(separator: ", ")
            let base = Fixture.itemCount
            try connection.execute("BEGIN IMMEDIATE")
            for _ in 1..<max(1, rows / base) {
                try connection.execute(
                    "INSERT INTO ZITEM (\(list)) SELECT \(list) FROM ZITEM WHERE Z_PK <= \(base)")
            }
            try connection.execute(
                "UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT MAX(Z_PK) FROM ZITEM) WHERE Z_NAME = 'Item'")
            try connection.execute("COMMIT")
            let count = try MigrationWorkloads.strings("SELECT COUNT(*) FROM ZITEM", column: 0, in: connection)
            guard count == [String(max(rows, base) / base * base)] else {
                throw WorkloadMismatch(description: "open: the store holds \(count) rows, not \(rows)")
            }
            try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            try connection.close()
        }
    }

    /// Opens the store with the SQLite C API and reads the first item's serial and name; returns the serial.
    @inline(never)
    public static func openRaw(_ url: URL) throws -> Int64 {
        let connection = try SQLiteConnection(url: url)
        let serial: Int64 = try {
            let statement = try connection.prepare("SELECT ZSERIAL, ZNAME FROM ZITEM ORDER BY Z_PK LIMIT 1")
            guard try statement.step() else { throw WorkloadMismatch(description: "open raw: no row") }
            _ = statement.string(1)
            return statement.int64(0)
        }()
        try connection.close()
        return serial
    }

    /// Adds the store to a new coordinator and fetches the first item, reading its serial and name; returns the
    /// serial. The store is removed afterwards (outside what a caller times, if it times `open` alone).
    @inline(never)
    public static func openOpenCoreData(_ url: URL) throws -> (serial: Int64, close: () throws -> Void) {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: MigrationWorkloads.version1)
        let store = try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: MigrationWorkloads.pragmas)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let serial: Int64 = try context.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
            request.fetchLimit = 1
            guard let item = try context.fetch(request).first else {
                throw WorkloadMismatch(description: "open ocd: no object")
            }
            _ = item.value(forKey: "name")
            return (item.value(forKey: "serial") as? Int64) ?? -1
        }
        return (serial, { try coordinator.remove(store) })
    }
}
