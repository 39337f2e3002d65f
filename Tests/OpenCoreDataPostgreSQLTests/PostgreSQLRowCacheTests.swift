import Foundation
import OpenCoreData
import StoreConformance
import Testing

@testable import OpenCoreDataPostgreSQL

/// The row cache: a fault of an object fetched moments ago is fulfilled from the row the fetch read, while the asking
/// context's `stalenessInterval` allows; saves of the coordinator, batch requests and commits announced by the server
/// (LISTEN/NOTIFY) make the store read again.
///
/// Each test changes the row behind the store's back, through a connection of its own, so that which value a fault
/// gets tells whether it read the server or the cache.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, Comment(rawValue: PostgreSQLTestServer.skipMessage)))
struct PostgreSQLRowCacheTests {
    /// A store at a new schema with one saved item whose string is "stored"; the context that fetched it keeps it.
    func stack(options: [AnyHashable: Any]? = nil) throws
        -> (NSPersistentStoreCoordinator, URL, NSManagedObjectContext, NSManagedObject)
    {
        let url = try #require(PostgreSQLTestServer.newURL())
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: ConformanceModel.shared)
        try coordinator.addPersistentStore(
            ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: options)
        let context = NSManagedObjectContext.conformance(coordinator)
        var item: NSManagedObject?
        try context.run {
            context.make("Item", ["string": "stored"])
            try context.save()
            context.reset()
            item = try context.objects("Item").first
        }
        return (coordinator, url, context, try #require(item))
    }

    /// Changes the item's string on the server, past the store.
    func changeBehindTheStore(_ url: URL, to value: String) throws {
        let schema = try #require(
            URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "schema" }?.value)
        let connection = try PostgreSQLConnection(
            PostgreSQLConfiguration(url: try #require(PostgreSQLTestServer.url)))
        let result = try connection.query(
            "UPDATE \"\(schema)\".\"ZITEM\" SET \"ZSTRING\" = $1, \"Z_OPT\" = \"Z_OPT\" + 1", [value])
        #expect(result.affectedRows == 1)
    }

    /// The item's string as a new context on `coordinator` faults it in, with `stalenessInterval`.
    func faultedString(
        _ coordinator: NSPersistentStoreCoordinator, _ objectID: NSManagedObjectID, stalenessInterval: TimeInterval = -1
    ) throws -> String? {
        let context = NSManagedObjectContext.conformance(coordinator)
        context.stalenessInterval = stalenessInterval
        var value: String?
        try context.run {
            value = try context.existingObject(with: objectID).value(forKey: "string") as? String
        }
        return value
    }

    @Test func aFaultOfAnObjectFetchedMomentsAgoDoesNotReadTheServer() throws {
        let (coordinator, url, context, item) = try stack()
        defer { PostgreSQLTestServer.drop(url) }
        try changeBehindTheStore(url, to: "changed")
        #expect(try faultedString(coordinator, item.objectID) == "stored")
        // A staleness interval of 0 reads the server every time.
        #expect(try faultedString(coordinator, item.objectID, stalenessInterval: 0) == "changed")
        withExtendedLifetime(context) {}
    }

    @Test func aRowOlderThanTheStalenessIntervalIsReadAgain() throws {
        let (coordinator, url, context, item) = try stack()
        defer { PostgreSQLTestServer.drop(url) }
        try changeBehindTheStore(url, to: "changed")
        #expect(try faultedString(coordinator, item.objectID, stalenessInterval: 60) == "stored")
        Thread.sleep(forTimeInterval: 0.2)
        #expect(try faultedString(coordinator, item.objectID, stalenessInterval: 0.1) == "changed")
        withExtendedLifetime(context) {}
    }

    @Test func aSaveOfTheCoordinatorIsReadAgain() throws {
        let (coordinator, url, context, item) = try stack()
        defer { PostgreSQLTestServer.drop(url) }
        try context.run {
            item.setValue("saved", forKey: "string")
            try context.save()
        }
        #expect(try faultedString(coordinator, item.objectID) == "saved")
    }

    @Test func aBatchUpdateIsReadAgain() throws {
        let (coordinator, url, context, item) = try stack()
        defer { PostgreSQLTestServer.drop(url) }
        try context.run {
            let update = NSBatchUpdateRequest(entityName: "Item")
            update.propertiesToUpdate = ["string": "batched"]
            _ = try context.execute(update)
        }
        #expect(try faultedString(coordinator, item.objectID) == "batched")
    }

    /// A to-many fault reads its destinations afresh: their rows replace what the cache held of the same objects — a
    /// fault by ID elsewhere sees what was read last — and are not added to it otherwise (OpenCoreData's choice, as in
    /// its SQLite store: the fault's objects are made from the rows at once, and every context reads the relationship
    /// itself).
    @Test func aToManyFaultReplacesTheRowsItReadsAndAddsNone() throws {
        let url = try #require(PostgreSQLTestServer.newURL())
        defer { PostgreSQLTestServer.drop(url) }
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: ConformanceModel.shared)
        let added = try coordinator.addPersistentStore(
            ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: nil)
        let store = try #require(added as? PostgreSQLStore)
        let writer = NSManagedObjectContext.conformance(coordinator)
        try writer.run {
            let department = writer.make("Department", ["name": "Research"])
            for name in ["Ann", "Bob", "Cy"] { writer.make("Employee", ["name": name, "department": department]) }
            try writer.save()
        }
        // A holder keeps Ann as fetched: her row is the only one in the cache.
        let holder = NSManagedObjectContext.conformance(coordinator)
        var ann: NSManagedObject?
        try holder.run { ann = try holder.objects("Employee", "name == %@", ["Ann"]).first }
        let annID = try #require(ann?.objectID)
        #expect(store.rowCache.count == 1)
        // Renamed on the server, past the store.
        let schema = try #require(
            URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "schema" }?.value)
        let connection = try PostgreSQLConnection(
            PostgreSQLConfiguration(url: try #require(PostgreSQLTestServer.url)))
        let rename = """
            UPDATE "\(schema)"."ZPERSON" SET "ZNAME" = 'Anne', "Z_OPT" = "Z_OPT" + 1 WHERE "ZNAME" = 'Ann'
            """
        let renamed = try connection.query(rename)
        #expect(renamed.affectedRows == 1)

        let faulter = NSManagedObjectContext.conformance(coordinator)
        var employees: Set<NSManagedObject> = []
        try faulter.run {
            let department = try #require(try faulter.objects("Department").first)
            let cached = store.rowCache.count
            employees = department.value(forKey: "employees") as? Set<NSManagedObject> ?? []
            #expect(Set(employees.compactMap { $0.value(forKey: "name") as? String }) == ["Anne", "Bob", "Cy"])
            // Ann's row replaced; Bob's and Cy's not added.
            #expect(store.rowCache.count == cached)
        }
        let faulted = try withExtendedLifetime(employees) { try faultedName(coordinator, annID) }
        #expect(faulted == "Anne")
        try holder.run { #expect(ann?.value(forKey: "name") as? String == "Ann") }
    }

    /// The name of the person `objectID` as a new context on `coordinator` faults it in (staleness unbounded).
    func faultedName(_ coordinator: NSPersistentStoreCoordinator, _ objectID: NSManagedObjectID) throws -> String? {
        let context = NSManagedObjectContext.conformance(coordinator)
        var value: String?
        try context.run { value = try context.existingObject(with: objectID).value(forKey: "name") as? String }
        return value
    }

    @Test func aCommitTheServerAnnouncesIsReadAgain() throws {
        let (coordinator, url, context, item) = try stack(options: [
            NSPersistentStoreRemoteChangeNotificationPostOptionKey: true
        ])
        defer { PostgreSQLTestServer.drop(url) }
        // Another process: a coordinator of its own on the same store.
        let other = NSPersistentStoreCoordinator(managedObjectModel: ConformanceModel.shared)
        try other.addPersistentStore(ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: nil)
        let announced = DispatchSemaphore(value: 0)
        let observer = NotificationCenter.default.addObserver(
            forName: .NSPersistentStoreRemoteChange, object: coordinator, queue: nil
        ) { _ in announced.signal() }
        defer { NotificationCenter.default.removeObserver(observer) }
        let writer = NSManagedObjectContext.conformance(other)
        try writer.run {
            let theirs = try #require(try writer.objects("Item").first)
            theirs.setValue("theirs", forKey: "string")
            try writer.save()
        }
        #expect(announced.wait(timeout: .now() + 10) == .success)
        #expect(try faultedString(coordinator, item.objectID) == "theirs")
        withExtendedLifetime(context) {}
    }
}
