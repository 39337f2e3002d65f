import Foundation
import OpenCoreData
import Testing

/// A coordinator with one store of the fixture's kind (or several), and helpers to use it from private-queue
/// contexts. The store's files go away with the stack.
public final class ConformanceStack {
    public let fixture: StoreFixture
    public let model: NSManagedObjectModel
    public let coordinator: NSPersistentStoreCoordinator
    /// Where each added store lives, in the order added.
    public private(set) var urls: [URL?] = []

    /// A stack on `model` with one store holding `configuration`'s entities (all of them, for `nil`).
    public init(
        _ fixture: StoreFixture, model: NSManagedObjectModel = ConformanceModel.shared, configuration: String? = nil
    ) throws {
        self.fixture = fixture
        self.model = model
        coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try addStore(configuration: configuration)
    }

    deinit {
        for store in coordinator.persistentStores { try? coordinator.remove(store) }
        for url in urls { fixture.destroyStore(at: url) }
    }

    /// The first store.
    public var store: NSPersistentStore { coordinator.persistentStores[0] }

    /// Adds another store of the fixture's kind, at a new place.
    @discardableResult
    public func addStore(configuration: String? = nil) throws -> NSPersistentStore {
        let url = fixture.newURL()
        urls.append(url)
        return try coordinator.addPersistentStore(
            ofType: fixture.storeType, configurationName: configuration, at: url, options: nil)
    }

    /// A new private-queue context on the coordinator.
    public func newContext() -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    /// A second coordinator with the store at the first store's place, as another launch (or process) opens it.
    public func reopen() throws -> NSPersistentStoreCoordinator {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(
            ofType: fixture.storeType, configurationName: nil, at: urls[0], options: nil)
        return coordinator
    }
}

extension NSManagedObjectContext {
    /// A new private-queue context on `coordinator`.
    public static func conformance(_ coordinator: NSPersistentStoreCoordinator) -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    /// Runs `body` on the context's queue and waits (`performAndWait`, under a name that always picks the throwing
    /// form, whatever the closure's shape).
    public func run(_ body: () throws -> Void) throws {
        try performAndWait(body)
    }

    /// Inserts an object of `entityName` with `values`.
    @discardableResult
    public func make(_ entityName: String, _ values: [String: Any?] = [:]) -> NSManagedObject {
        let object = NSEntityDescription.insertNewObject(forEntityName: entityName, into: self)
        for (key, value) in values { object.setValue(value, forKey: key) }
        return object
    }

    /// The objects of `entityName` that match `format`, sorted by `sortedBy` (ascending; `-key` descending).
    public func objects(
        _ entityName: String, _ format: String? = nil, _ arguments: [Any] = [], sortedBy keys: [String] = [],
        configure: (NSFetchRequest<NSManagedObject>) -> Void = { _ in }
    ) throws -> [NSManagedObject] {
        let request = NSFetchRequest<NSManagedObject>(entityName: entityName)
        if let format { request.predicate = NSPredicate(format: format, argumentArray: arguments) }
        request.sortDescriptors = keys.map { key in
            key.hasPrefix("-")
                ? NSSortDescriptor(key: String(key.dropFirst()), ascending: false)
                : NSSortDescriptor(key: key, ascending: true)
        }
        configure(request)
        return try fetch(request)
    }

    /// The values of `key` of the objects of `entityName` that match `format`, sorted by `key`.
    public func values(_ entityName: String, _ key: String, _ format: String? = nil, _ arguments: [Any] = [])
        throws -> [String]
    {
        try objects(entityName, format, arguments, sortedBy: [key]).map { "\($0.value(forKey: key) ?? "nil")" }
    }
}
