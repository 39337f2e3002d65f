import Foundation
import OpenCoreData

/// Filtering in SQL: an OpenCoreData fetch with a predicate against raw SQLite running the query a developer would
/// write for the same filter, on the same file (Core Data's layout, so both read the same tables and indexes). Each
/// side reads the matching rows' serial and name (or title), in the order of their serial.
public enum FilterWorkloads {
    public enum Kind: String, CaseIterable, Sendable {
        /// `name BEGINSWITH %@` over 100,000 items (about 1,000 match).
        case beginsWith
        /// `serial IN %@` with 1,000 serials over 100,000 items.
        case inThousand
        /// `ANY children.serial < %lld` over 1,000 parents of 100 children (50 match).
        case anyToMany
        /// `SUBQUERY(children, $c, $c.serial < %lld AND $c.value >= 50).@count >= 10` over the same (50 match).
        case subquery
    }

    /// The store both sides read: the items, and the parents with their children.
    public final class Template: @unchecked Sendable {
        let scratch = ScratchDirectory("filter")
        public let url: URL

        public init() throws {
            let template = try TemplateFiles.url(named: "OpenCoreData-filter", in: scratch) { building in
                let library = try OpenCoreDataLibrary(url: building)
                try library.insertItems(Fixture.items)
                try library.insertParents(Fixture.walkedParents, childrenEach: Fixture.childrenPerWalkedParent)
                try library.close()
            }
            url = scratch.file("filter.sqlite")
            try DatabaseFiles.copy(template, to: url)
        }
    }

    static let prefix = "Delta kitchen 00"
    static let serials: [Int64] = (0..<1_000).map { Int64($0 * 97) }
    static let childSerialLimit: Int64 = 5_050

    /// The OpenCoreData side: a fetch in a new context; returns how many objects matched and a checksum of them.
    @inline(never)
    public static func openCoreData(_ kind: Kind, in library: OpenCoreDataLibrary) throws -> Checksum {
        try library.withContext { context in
            var checksum = Checksum()
            switch kind {
            case .beginsWith, .inThousand:
                let request = NSFetchRequest<Item>(entityName: "Item")
                request.predicate =
                    kind == .beginsWith
                    ? NSPredicate(format: "name BEGINSWITH %@", prefix)
                    : NSPredicate(format: "serial IN %@", serials)
                request.sortDescriptors = [NSSortDescriptor(key: "serial", ascending: true)]
                for item in try context.fetch(request) {
                    checksum.add(item.serial)
                    checksum.add(item.name)
                    checksum.object()
                }
            case .anyToMany, .subquery:
                let request = NSFetchRequest<Parent>(entityName: "Parent")
                request.predicate =
                    kind == .anyToMany
                    ? NSPredicate(format: "ANY children.serial < %lld", childSerialLimit)
                    : NSPredicate(
                        format: "SUBQUERY(children, $c, $c.serial < %lld AND $c.value >= 50).@count >= 10",
                        childSerialLimit)
                request.sortDescriptors = [NSSortDescriptor(key: "serial", ascending: true)]
                for parent in try context.fetch(request) {
                    checksum.add(parent.serial)
                    checksum.add(parent.title)
                    checksum.object()
                }
            }
            return checksum
        }
    }

    /// The raw SQLite side: the query prepared, bound and stepped through on an open connection.
    @inline(never)
    static func raw(_ kind: Kind, in connection: SQLiteConnection) throws -> Checksum {
        var checksum = Checksum()
        let statement: SQLiteStatement
        switch kind {
        case .beginsWith:
            statement = try connection.prepare("SELECT ZSERIAL, ZNAME FROM ZITEM WHERE ZNAME GLOB ? ORDER BY ZSERIAL")
            statement.bind(1, prefix + "*")
        case .inThousand:
            let placeholders = Array(repeating: "?", count: serials.count).joined(separator: ", ")
            statement = try connection.prepare(
                "SELECT ZSERIAL, ZNAME FROM ZITEM WHERE ZSERIAL IN (\(placeholders)) ORDER BY ZSERIAL")
            for (index, serial) in serials.enumerated() { statement.bind(Int32(index + 1), serial) }
        case .anyToMany:
            statement = try connection.prepare(
                "SELECT p.ZSERIAL, p.ZTITLE FROM ZPARENT p WHERE EXISTS "
                    + "(SELECT 1 FROM ZCHILD c WHERE c.ZPARENT = p.Z_PK AND c.ZSERIAL < ?) ORDER BY p.ZSERIAL")
            statement.bind(1, childSerialLimit)
        case .subquery:
            statement = try connection.prepare(
                "SELECT p.ZSERIAL, p.ZTITLE FROM ZPARENT p WHERE (SELECT COUNT(*) FROM ZCHILD c "
                    + "WHERE c.ZPARENT = p.Z_PK AND c.ZSERIAL < ? AND c.ZVALUE >= 50) >= 10 ORDER BY p.ZSERIAL")
            statement.bind(1, childSerialLimit)
        }
        while try statement.step() {
            checksum.add(statement.int64(0))
            checksum.add(statement.string(1))
            checksum.object()
        }
        return checksum
    }

    /// Runs each side `iterations` times, alternated, checking that both read the same rows; the times in seconds and
    /// the number of rows.
    public static func compare(_ kind: Kind, in template: Template, iterations: Int) throws
        -> (raw: [Double], openCoreData: [Double], count: Int)
    {
        let library = try OpenCoreDataLibrary(url: template.url)
        defer { try? library.close() }
        let connection = try SQLiteConnection(url: template.url)
        var raw: [Double] = []
        var ocd: [Double] = []
        var count = 0
        for _ in 0..<iterations {
            var rawSum = Checksum()
            var ocdSum = Checksum()
            raw.append(try timed { rawSum = try Self.raw(kind, in: connection) })
            ocd.append(try timed { ocdSum = try openCoreData(kind, in: library) })
            guard rawSum == ocdSum else {
                throw WorkloadMismatch(description: "filter \(kind.rawValue): raw \(rawSum), OpenCoreData \(ocdSum)")
            }
            count = rawSum.count
        }
        try connection.close()
        return (raw, ocd, count)
    }

    static func timed(_ body: () throws -> Void) rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }
}
