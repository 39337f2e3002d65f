import Foundation
import OpenCoreDataShim
import Testing

/// Batch requests over 100,000 rows against the same statements run as raw SQL on a copy of the same file. Off by
/// default (it takes seconds); run with `OPENCOREDATA_BATCH_TIMING=1 swift test --filter SQLiteBatchTimingTests`.
/// It prints the times and fails only if a batch request takes several times as long as raw SQL, which would mean
/// it stopped being set-based.
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["OPENCOREDATA_BATCH_TIMING"] != nil))
struct SQLiteBatchTimingTests {
    static let rows = 100_000

    static func seconds(_ body: () throws -> Void) rethrows -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        try body()
        let elapsed = clock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// Copies the store file (checkpointed) to `copy`, for the raw SQL run.
    static func copy(_ url: URL, to copy: URL) throws {
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: url.path + suffix) {
            try FileManager.default.copyItem(
                at: URL(fileURLWithPath: url.path + suffix), to: URL(fileURLWithPath: copy.path + suffix))
        }
        // Read once, so that the copy's WAL is checkpointed before it is timed.
        try RawSQLite.execute(copy, "PRAGMA wal_checkpoint(TRUNCATE)")
    }

    static func report(_ name: String, batch: Double, raw: Double) {
        let ratio = batch / raw
        print(
            "\(name): batch request \(String(format: "%.1f", batch * 1000)) ms, raw SQL "
                + "\(String(format: "%.1f", raw * 1000)) ms, ratio \(String(format: "%.2f", ratio))")
        #expect(ratio < 4, "\(name) took \(ratio) times as long as raw SQL")
    }

    @Test func updateDeleteAndInsertOf100000Rows() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let coordinator = try SQLiteBatchRequestTests.fill(url, boxes: 1, items: 1)
        let context = SQLiteStack.context(coordinator)

        // Insert: the request binds each object's values into a prepared INSERT, as a program on the C API does.
        let insert = NSBatchInsertRequest(
            entityName: "BulkLog", objects: (0..<Self.rows).map { ["message": "log \($0)"] })
        let raw = directory.store("Raw.sqlite")
        try Self.copy(url, to: raw)
        let rawRows: [[RawSQLite.Value]] = (0..<Self.rows).map { [.integer(Int64($0 + 2)), .text("log \($0)")] }
        let batchInsert = try Self.seconds { try context.performAndWait { _ = try context.execute(insert) } }
        let rawInsert = try Self.seconds {
            try RawSQLite.run(
                raw, "INSERT INTO ZBULKLOG (Z_PK, Z_ENT, Z_OPT, ZMESSAGE) VALUES (?, 3, 1, ?)", rows: rawRows)
        }
        Self.report("insert \(Self.rows)", batch: batchInsert, raw: rawInsert)

        // Update: one UPDATE either way.
        let rawUpdateCopy = directory.store("RawUpdate.sqlite")
        try Self.copy(url, to: rawUpdateCopy)
        let update = NSBatchUpdateRequest(entityName: "BulkLog")
        update.propertiesToUpdate = ["message": "seen"]
        update.predicate = NSPredicate(format: "message BEGINSWITH 'log'")
        update.resultType = .updatedObjectsCountResultType
        var updated = 0
        let batchUpdate = try Self.seconds {
            try context.performAndWait {
                updated = ((try context.execute(update) as? NSBatchUpdateResult)?.result as? NSNumber)?.intValue ?? 0
            }
        }
        #expect(updated == Self.rows + 1)
        #expect(
            try RawSQLite.query(rawUpdateCopy, "SELECT COUNT(*) FROM ZBULKLOG") == [[.integer(Int64(Self.rows + 1))]])
        let rawUpdate = try Self.seconds {
            try RawSQLite.execute(
                rawUpdateCopy,
                "UPDATE ZBULKLOG SET Z_OPT = Z_OPT + 1, ZMESSAGE = 'seen' WHERE ZMESSAGE GLOB 'log*'")
        }
        Self.report("update \(Self.rows)", batch: batchUpdate, raw: rawUpdate)

        // Delete with IDs returned: the keys are selected, then deleted as a list.
        let rawDeleteCopy = directory.store("RawDelete.sqlite")
        try Self.copy(url, to: rawDeleteCopy)
        let delete = NSBatchDeleteRequest(fetchRequest: NSFetchRequest<NSFetchRequestResult>(entityName: "BulkLog"))
        delete.resultType = .resultTypeObjectIDs
        var deleted = 0
        let batchDelete = try Self.seconds {
            try context.performAndWait {
                deleted =
                    ((try context.execute(delete) as? NSBatchDeleteResult)?.result as? [NSManagedObjectID])?.count ?? 0
            }
        }
        #expect(deleted == Self.rows + 1)
        #expect(
            try RawSQLite.query(rawDeleteCopy, "SELECT COUNT(*) FROM ZBULKLOG") == [[.integer(Int64(Self.rows + 1))]])
        let rawDelete = try Self.seconds {
            _ = try RawSQLite.query(rawDeleteCopy, "SELECT Z_PK, Z_ENT FROM ZBULKLOG")
            try RawSQLite.execute(rawDeleteCopy, "DELETE FROM ZBULKLOG")
        }
        Self.report("delete \(Self.rows) returning IDs", batch: batchDelete, raw: rawDelete)
    }

    /// 100 boxes of 1,000 items each, every item tagged: deleting the boxes cascades to the items and their join rows.
    @Test func cascadingDeleteOf100000Rows() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let coordinator = try SQLiteBatchRequestTests.fill(url, boxes: 1, items: 1)
        try SQLiteStack.close(coordinator)
        // Rows made by SQL, after the one box, item and tag the fill made (box 1, item 1, tag 1).
        try RawSQLite.execute(
            url,
            """
            BEGIN IMMEDIATE;
            WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 98)
            INSERT INTO ZBULKBOX (Z_PK, Z_ENT, Z_OPT, ZLABEL) SELECT i + 2, 1, 1, 'box ' || i FROM n;
            WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < \(Self.rows - 2))
            INSERT INTO ZBULKITEM (Z_PK, Z_ENT, Z_OPT, ZNUMBER, ZBOX) SELECT i + 2, 2, 1, i, 1 + (i + 1) / 1000 FROM n;
            INSERT INTO Z_2TAGS (Z_2ITEMS, Z_4TAGS) SELECT Z_PK, 1 FROM ZBULKITEM WHERE Z_PK > 1;
            UPDATE Z_PRIMARYKEY SET Z_MAX = 100 WHERE Z_ENT = 1;
            UPDATE Z_PRIMARYKEY SET Z_MAX = \(Self.rows) WHERE Z_ENT = 2;
            COMMIT
            """)
        let raw = directory.store("Raw.sqlite")
        try Self.copy(url, to: raw)
        let reopened = try SQLiteStack.coordinator(SQLiteBatchRequestTests.model, at: url)
        let context = SQLiteStack.context(reopened)
        let delete = NSBatchDeleteRequest(fetchRequest: NSFetchRequest<NSFetchRequestResult>(entityName: "BulkBox"))
        delete.resultType = .resultTypeCount
        var deleted = 0
        let batch = try Self.seconds {
            try context.performAndWait {
                deleted = ((try context.execute(delete) as? NSBatchDeleteResult)?.result as? NSNumber)?.intValue ?? 0
            }
        }
        #expect(deleted == 100 + Self.rows)
        let rawDelete = try Self.seconds {
            try RawSQLite.execute(
                raw,
                """
                BEGIN IMMEDIATE;
                DELETE FROM Z_2TAGS WHERE Z_2ITEMS IN (SELECT Z_PK FROM ZBULKITEM WHERE ZBOX IN (SELECT Z_PK FROM ZBULKBOX));
                DELETE FROM ZBULKITEM WHERE ZBOX IN (SELECT Z_PK FROM ZBULKBOX);
                DELETE FROM ZBULKBOX;
                COMMIT
                """)
        }
        #expect(try RawSQLite.query(url, "SELECT COUNT(*) FROM Z_2TAGS") == [[.integer(0)]])
        Self.report("cascading delete of 100 boxes and \(Self.rows) items", batch: batch, raw: rawDelete)
    }
}
