import OpenCoreData

/// The workloads written as a Core Data application writes them: typed `@Managed` subclasses, fetch requests with
/// predicates, a fresh context for each unit of work, `save()`.
///
/// The store is the SQLite store (`NSSQLiteStoreType`) with `journal_mode=WAL` and `synchronous=NORMAL` through
/// `NSSQLitePragmasOption`, as for the other libraries.
public final class OpenCoreDataLibrary: PersistenceLibrary {
    public static let name = "OpenCoreData"

    let url: URL
    let coordinator: NSPersistentStoreCoordinator

    public convenience init(url: URL) throws {
        let options: [AnyHashable: Any] = [
            NSSQLitePragmasOption: ["journal_mode": "WAL", "synchronous": "NORMAL"] as [String: NSObject]
        ]
        try self.init(storeType: NSSQLiteStoreType, url: url, options: options)
    }

    /// The same workloads on a store of another type (the PostgreSQL store's comparison with libpq).
    public init(storeType: String, url: URL, options: [AnyHashable: Any]?) throws {
        self.url = url
        coordinator = NSPersistentStoreCoordinator(managedObjectModel: BenchmarkModel.shared)
        _ = try coordinator.addPersistentStore(ofType: storeType, configurationName: nil, at: url, options: options)
    }

    public func close() throws {
        for store in coordinator.persistentStores {
            try coordinator.remove(store)
        }
    }

    /// Runs `body` in a new private-queue context, as a unit of work.
    func withContext<T>(_ body: (NSManagedObjectContext) throws -> T) throws -> T {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return try context.performAndWait { try body(context) }
    }

    // MARK: Writing

    public func insertItems(_ items: [ItemValues]) throws {
        try withContext { context in
            for values in items { Self.insertItem(values, into: context) }
            try context.save()
        }
    }

    public func insertParents(_ parents: Int, childrenEach children: Int) throws {
        try withContext { context in
            Self.insertParents(parents, childrenEach: children, into: context)
            try context.save()
        }
    }

    /// Makes the item `values` describe (also used by the locking and predicate workloads).
    @discardableResult
    static func insertItem(_ values: ItemValues, into context: NSManagedObjectContext) -> Item {
        let item = Item(context: context)
        item.serial = values.serial
        item.quantity = values.quantity
        item.flags = values.flags
        item.price = values.price
        item.ratio = values.ratio
        item.name = values.name
        item.category = values.category
        item.note = values.note
        item.payload = values.payload
        item.rank = values.rank
        return item
    }

    /// Makes `parents` parents with `children` children each (also used by the locking workloads).
    static func insertParents(_ parents: Int, childrenEach children: Int, into context: NSManagedObjectContext) {
        for serial in 0..<parents {
            let parent = Parent(context: context)
            parent.serial = Int64(serial)
            parent.title = "parent \(serial)"
            for index in 0..<children {
                let child = Child(context: context)
                child.serial = Int64(serial * children + index)
                child.value = Int64(index)
                child.label = "child \(index)"
                child.parent = parent
            }
        }
    }

    public func updateItems(serialsBelow serialLimit: Int64, quantity: Int64) throws {
        try withContext { context in
            for item in try items(serialsBelow: serialLimit, in: context) {
                item.quantity = quantity
            }
            try context.save()
        }
    }

    public func editItems(serialsBelow serialLimit: Int64, quantity: Int64) throws {
        try withContext { context in
            for item in try items(serialsBelow: serialLimit, in: context) {
                item.quantity = quantity
                try context.save()
            }
        }
    }

    func items(serialsBelow serialLimit: Int64, in context: NSManagedObjectContext) throws -> [Item] {
        let request = NSFetchRequest<Item>(entityName: "Item")
        request.predicate = NSPredicate(format: "serial < %lld", serialLimit)
        return try context.fetch(request)
    }

    public func deleteParents(serialsBelow serialLimit: Int64) throws {
        try withContext { context in
            let request = NSFetchRequest<Parent>(entityName: "Parent")
            request.predicate = NSPredicate(format: "serial < %lld", serialLimit)
            for parent in try context.fetch(request) {
                context.delete(parent)
            }
            try context.save()
        }
    }

    // MARK: Reading

    public func fetchAllItems() throws -> Checksum {
        try withContext { context in
            var checksum = Checksum()
            for item in try context.fetch(NSFetchRequest<Item>(entityName: "Item")) {
                item.add(to: &checksum)
            }
            return checksum
        }
    }

    public func references(serials: [Int64]) throws -> [NSManagedObjectID] {
        try withContext { context in
            try serials.map { serial in
                let request = NSFetchRequest<NSManagedObjectID>(entityName: "Item")
                request.resultType = .managedObjectIDResultType
                request.predicate = NSPredicate(format: "serial == %lld", serial)
                guard let id = try context.fetch(request).first else {
                    throw WorkloadMismatch(description: "no item \(serial)")
                }
                return id
            }
        }
    }

    public func lookUp(_ references: [NSManagedObjectID]) throws -> Checksum {
        try withContext { context in
            // The store keeps the rows it read (the row cache) across contexts; a staleness interval of 0 makes every
            // lookup read its row from SQLite, as the other libraries do, instead of from the previous run's cache.
            context.stalenessInterval = 0
            var checksum = Checksum()
            for id in references {
                let item = try context.existingObject(with: id) as! Item
                item.add(to: &checksum)
            }
            return checksum
        }
    }

    public func lookUp(serials: [Int64]) throws -> Checksum {
        try withContext { context in
            var checksum = Checksum()
            for serial in serials {
                let request = NSFetchRequest<Item>(entityName: "Item")
                request.predicate = NSPredicate(format: "serial == %lld", serial)
                request.fetchLimit = 1
                try context.fetch(request).first?.add(to: &checksum)
            }
            return checksum
        }
    }

    public func walkParents() throws -> Checksum {
        try withContext { context in
            var checksum = Checksum()
            for parent in try context.fetch(NSFetchRequest<Parent>(entityName: "Parent")) {
                for child in parent.children {
                    checksum.add(child.value)
                    checksum.object()
                }
            }
            return checksum
        }
    }

    public func searchNames(containing text: String) throws -> Checksum {
        try withContext { context in
            let request = NSFetchRequest<Item>(entityName: "Item")
            request.predicate = NSPredicate(format: "name CONTAINS[cd] %@", text)
            var checksum = Checksum()
            for item in try context.fetch(request) {
                item.add(to: &checksum)
            }
            return checksum
        }
    }

    public func loadAllItems() throws -> (checksum: Checksum, keepAlive: Any) {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let (checksum, items) = try context.performAndWait {
            let items = try context.fetch(NSFetchRequest<Item>(entityName: "Item"))
            var checksum = Checksum()
            for item in items { item.add(to: &checksum) }
            return (checksum, items)
        }
        return (checksum, (context, items))
    }
}
