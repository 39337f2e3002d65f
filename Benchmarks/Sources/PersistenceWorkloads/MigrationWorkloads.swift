import Foundation
import OpenCoreData
import SystemSQLite

/// Migrating a store of 100,000 items (issue 20) from version 1 of a model to version 2, which adds an attribute
/// (`rating`, default 0) and renames one (`note` becomes `remark`, through its renaming identifier):
///
/// - `lightweight`: adding the store with `NSMigratePersistentStoresAutomaticallyOption` and
///   `NSInferMappingModelAutomaticallyOption`, as an app does; the SQLite store migrates in place with SQL.
/// - `mapping`: `NSMigrationManager` with a mapping model built in code (every attribute copied, `remark` from `note`,
///   `rating` computed as `$source.quantity * 2`), object by object into a new store.
/// - `copy`: the reference, SQLite's own copy of the table through the C API — `INSERT INTO new SELECT … FROM old` in
///   one transaction, the old table dropped and the new one renamed, its index made again.
///
/// Every run starts from a copy of the same version-1 store (made once per process, not measured) and includes opening
/// and closing the database, whose WAL is checkpointed on close.
public enum MigrationWorkloads {
    public enum Kind: String, CaseIterable, Sendable {
        case lightweight
        case mapping
        case copy
    }

    /// The version-1 store and a directory for the copies the runs migrate.
    public final class Template: @unchecked Sendable {
        let scratch = ScratchDirectory("migration")
        let template: URL
        var runs = 0

        public init() throws {
            template = scratch.file("items-v1.sqlite")
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: MigrationWorkloads.version1)
            try coordinator.addPersistentStore(
                ofType: NSSQLiteStoreType, configurationName: nil, at: template, options: MigrationWorkloads.pragmas)
            let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            try context.performAndWait {
                for values in Fixture.items {
                    let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
                    item.setValue(values.serial, forKey: "serial")
                    item.setValue(values.quantity, forKey: "quantity")
                    item.setValue(values.flags, forKey: "flags")
                    item.setValue(values.price, forKey: "price")
                    item.setValue(values.ratio, forKey: "ratio")
                    item.setValue(values.name, forKey: "name")
                    item.setValue(values.category, forKey: "category")
                    item.setValue(values.note, forKey: "note")
                    item.setValue(values.payload, forKey: "payload")
                    item.setValue(values.rank, forKey: "rank")
                }
                try context.save()
            }
            for store in coordinator.persistentStores { try coordinator.remove(store) }
        }

        /// A fresh copy of the version-1 store, and where a run that writes a new store puts it.
        func prepare() throws -> (source: URL, destination: URL) {
            runs += 1
            let source = scratch.file("run-\(runs).sqlite")
            let destination = scratch.file("run-\(runs)-migrated.sqlite")
            try DatabaseFiles.copy(template, to: source)
            DatabaseFiles.remove(destination)
            return (source, destination)
        }
    }

    /// One prepared run: call `run()` (the measured part), then `finish()`, which checks the result and removes the
    /// files.
    public struct Run {
        let kind: Kind
        let source: URL
        let destination: URL

        @inline(never)
        public func run() throws {
            switch kind {
            case .lightweight: try MigrationWorkloads.migrateLightweight(source)
            case .mapping: try MigrationWorkloads.migrateWithMappingModel(source, to: destination)
            case .copy: try MigrationWorkloads.copyTable(source)
            }
        }

        /// Checks that every row came through with the new attribute and the renamed one, and removes the files.
        public func finish() throws {
            defer {
                DatabaseFiles.remove(source)
                DatabaseFiles.remove(destination)
            }
            let migrated = kind == .mapping ? destination : source
            let (rows, rating, remarks, remarkLength) = try MigrationWorkloads.summary(of: migrated) { statement in
                (statement.int64(0), statement.int64(1), statement.int64(2), statement.int64(3))
            }
            let items = Fixture.items
            let expectedRating = kind == .mapping ? items.reduce(0) { $0 + $1.quantity * 2 } : 0
            let expectedLength = Int64(items.reduce(0) { $0 + $1.note.utf8.count })
            guard rows == items.count, remarks == items.count, rating == expectedRating,
                remarkLength == expectedLength
            else {
                throw WorkloadMismatch(
                    description: "\(kind.rawValue): \(rows) rows, \(remarks) remarks of \(remarkLength) bytes, rating "
                        + "sum \(rating); expected \(items.count) rows, remarks of \(expectedLength) bytes, rating sum "
                        + "\(expectedRating)")
            }
        }
    }

    public static func prepare(_ kind: Kind, in template: Template) throws -> Run {
        let (source, destination) = try template.prepare()
        return Run(kind: kind, source: source, destination: destination)
    }

    /// WAL with `synchronous=NORMAL`, as for the other workloads.
    static var pragmas: [AnyHashable: Any] {
        [NSSQLitePragmasOption: ["journal_mode": "WAL", "synchronous": "NORMAL"] as [String: NSObject]]
    }

    // MARK: Models

    /// Version 1: the benchmark's item, as a plain `NSManagedObject` entity with an index on `serial`.
    public static let version1 = model(version: 1)
    /// Version 2: `rating` added (default 0), `note` renamed `remark`.
    public static let version2 = model(version: 2)

    static func model(version: Int) -> NSManagedObjectModel {
        func attribute(_ name: String, _ type: NSAttributeType, optional: Bool = false) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.isOptional = optional
            return attribute
        }
        let serial = attribute("serial", .integer64AttributeType)
        let note = attribute(version == 1 ? "note" : "remark", .stringAttributeType)
        var properties = [
            serial,
            attribute("quantity", .integer64AttributeType),
            attribute("flags", .integer64AttributeType),
            attribute("price", .doubleAttributeType),
            attribute("ratio", .doubleAttributeType),
            attribute("name", .stringAttributeType),
            attribute("category", .stringAttributeType),
            note,
            attribute("payload", .binaryDataAttributeType),
            attribute("rank", .integer64AttributeType, optional: true),
        ]
        if version == 2 {
            note.renamingIdentifier = "note"
            let rating = attribute("rating", .integer64AttributeType)
            rating.defaultValue = 0
            properties.append(rating)
        }
        let item = NSEntityDescription()
        item.name = "Item"
        item.properties = properties
        item.indexes = [
            NSFetchIndexDescription(
                name: "bySerial",
                elements: [NSFetchIndexElementDescription(property: serial, collationType: .binary)])
        ]
        let model = NSManagedObjectModel()
        model.entities = [item]
        return model
    }

    /// Version 1 to 2 as a mapping model: every attribute copied from the source, `remark` from `note`, and `rating`
    /// computed from `quantity`.
    public static let mappingModel: NSMappingModel = {
        let item = NSEntityMapping()
        item.name = "ItemToItem"
        item.mappingType = .customEntityMappingType
        item.sourceEntityName = "Item"
        item.destinationEntityName = "Item"
        item.sourceExpression = NSExpression(
            format: #"FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Item", "#
                + #""TRUEPREDICATE"), $manager.sourceContext, NO)"#)
        var attributes: [NSPropertyMapping] = []
        for name in ["serial", "quantity", "flags", "price", "ratio", "name", "category", "payload", "rank"] {
            attributes.append(propertyMapping(name, "$source.\(name)"))
        }
        attributes.append(propertyMapping("remark", "$source.note"))
        attributes.append(propertyMapping("rating", "$source.quantity * 2"))
        item.attributeMappings = attributes
        let mapping = NSMappingModel()
        mapping.entityMappings = [item]
        return mapping
    }()

    static func propertyMapping(_ name: String, _ expression: String) -> NSPropertyMapping {
        let mapping = NSPropertyMapping()
        mapping.name = name
        mapping.valueExpression = NSExpression(format: expression)
        return mapping
    }

    // MARK: Workloads

    @inline(never)
    static func migrateLightweight(_ url: URL) throws {
        var options = pragmas
        options[NSMigratePersistentStoresAutomaticallyOption] = true
        options[NSInferMappingModelAutomaticallyOption] = true
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: version2)
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: options)
        for store in coordinator.persistentStores { try coordinator.remove(store) }
    }

    @inline(never)
    static func migrateWithMappingModel(_ source: URL, to destination: URL) throws {
        let manager = NSMigrationManager(sourceModel: version1, destinationModel: version2)
        try manager.migrateStore(
            from: source, sourceType: NSSQLiteStoreType, options: pragmas, with: mappingModel,
            toDestinationURL: destination, destinationType: NSSQLiteStoreType, destinationOptions: pragmas)
    }

    /// The table copied by SQLite itself into a table of version 2's shape, in one transaction.
    @inline(never)
    static func copyTable(_ url: URL) throws {
        let connection = try SQLiteConnection(url: url)
        try connection.execute("PRAGMA synchronous = NORMAL")
        let columns = try strings("PRAGMA table_info(ZITEM)", column: 1, in: connection)
        let indexSQL = try strings(
            "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'ZITEM' AND sql IS NOT NULL", column: 0,
            in: connection)
        let newColumns = columns.map { $0 == "ZNOTE" ? "ZREMARK" : $0 } + ["ZRATING"]
        let definitions = newColumns.map { $0 == "Z_PK" ? "Z_PK INTEGER PRIMARY KEY" : $0 }
        try connection.execute("BEGIN IMMEDIATE")
        try connection.execute("CREATE TABLE ZITEM_NEW (\(definitions.joined(separator: ", ")))")
        try connection.execute(
            "INSERT INTO ZITEM_NEW (\(newColumns.joined(separator: ", "))) SELECT \(columns.joined(separator: ", ")), 0 "
                + "FROM ZITEM")
        try connection.execute("DROP TABLE ZITEM")
        try connection.execute("ALTER TABLE ZITEM_NEW RENAME TO ZITEM")
        for sql in indexSQL { try connection.execute(sql) }
        try connection.execute("COMMIT")
        try connection.close()
    }

    /// A column of every row of `sql`'s result, the statement finalized before returning (a connection with a
    /// statement still open does not close).
    static func strings(_ sql: String, column: Int32, in connection: SQLiteConnection) throws -> [String] {
        let statement = try connection.prepare(sql)
        var values: [String] = []
        while try statement.step() { values.append(statement.string(column)) }
        return values
    }

    /// The rows, the sum of `rating`, and the count and total length of `remark` in the migrated store at `url`.
    static func summary<Row>(of url: URL, read: (SQLiteStatement) -> Row) throws -> Row {
        let connection = try SQLiteConnection(url: url)
        let row: Row = try {
            let statement = try connection.prepare(
                "SELECT COUNT(*), SUM(ZRATING), COUNT(ZREMARK), SUM(length(ZREMARK)) FROM ZITEM")
            guard try statement.step() else { throw WorkloadMismatch(description: "no result") }
            return read(statement)
        }()
        try connection.close()
        return row
    }
}
