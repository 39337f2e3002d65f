import Foundation
import OpenCoreData
import StoreConformance
import Testing

@testable import OpenCoreDataCore
@testable import OpenCoreDataPostgreSQL

/// A to-many fault brings its destinations with their values, in the relationship's order: reading a destination's
/// attribute then asks the server nothing more. Each test changes the destinations behind the store's back after the
/// relationship fired, so that the value read tells whether it came with the relationship.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, Comment(rawValue: PostgreSQLTestServer.skipMessage)))
struct PostgreSQLToManyRowsTests {
    /// Sets `column` of every row of `table` in the store at `url`, past the store.
    func changeBehindTheStore(_ url: URL, table: String, column: String, to value: String) throws {
        let schema = try #require(
            URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "schema" }?.value)
        let connection = try PostgreSQLConnection(
            PostgreSQLConfiguration(url: try #require(PostgreSQLTestServer.url)))
        try connection.query(
            "UPDATE \"\(schema)\".\"\(table)\" SET \"\(column)\" = $1, \"Z_OPT\" = \"Z_OPT\" + 1", [value])
    }

    @Test func anOrderedToManyFaultBringsItsDestinationsValuesInOrder() throws {
        let url = try #require(PostgreSQLTestServer.newURL())
        defer { PostgreSQLTestServer.drop(url) }
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: ConformanceModel.shared)
        try coordinator.addPersistentStore(ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: nil)
        let writer = NSManagedObjectContext.conformance(coordinator)
        try writer.run {
            let department = writer.make("Department", ["name": "Research"])
            let projects = ["Zeta", "Alpha", "Mu"].map { writer.make("Project", ["title": $0]) }
            department.setValue(NSOrderedSet(array: projects), forKey: "projects")
            try writer.save()
        }
        let reader = NSManagedObjectContext.conformance(coordinator)
        try reader.run {
            let department = try #require(try reader.objects("Department").first)
            let projects = try #require(department.value(forKey: "projects") as? NSOrderedSet)
            #expect(projects.count == 3)
            try changeBehindTheStore(url, table: "ZPROJECT", column: "ZTITLE", to: "changed")
            let titles = projects.array.compactMap { ($0 as? NSManagedObject)?.value(forKey: "title") as? String }
            #expect(titles == ["Zeta", "Alpha", "Mu"])
        }
    }

    @Test func aManyToManyFaultBringsItsDestinationsValues() throws {
        let url = try #require(PostgreSQLTestServer.newURL())
        defer { PostgreSQLTestServer.drop(url) }
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: ConformanceModel.shared)
        try coordinator.addPersistentStore(ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: nil)
        let writer = NSManagedObjectContext.conformance(coordinator)
        try writer.run {
            let project = writer.make("Project", ["title": "Apollo"])
            let people = ["Ada", "Grace"].map { writer.make("Person", ["name": $0, "age": 40]) }
            project.setValue(NSSet(array: people), forKey: "members")
            try writer.save()
        }
        let reader = NSManagedObjectContext.conformance(coordinator)
        try reader.run {
            let project = try #require(try reader.objects("Project").first)
            let members = try #require(project.value(forKey: "members") as? NSSet)
            #expect(members.count == 2)
            try changeBehindTheStore(url, table: "ZPERSON", column: "ZNAME", to: "changed")
            let names = members.allObjects.compactMap { ($0 as? NSManagedObject)?.value(forKey: "name") as? String }
            #expect(names.sorted() == ["Ada", "Grace"])
        }
    }

    /// The string values of `rows`, in order.
    func strings(_ rows: [StoreRow]) -> [String] {
        rows.flatMap { row in row.values.compactMap { if case .string(let text) = $0 { text } else { nil } } }
    }

    /// The rows of every `entityName` object, fetched from `store` itself with `relationshipKeyPathsForPrefetching`.
    func fetchRows(_ entityName: String, prefetching keyPaths: [String], from store: PostgreSQLStore) throws
        -> [StoreRow]
    {
        let request = NSFetchRequest<NSFetchRequestResult>(entityName: entityName)
        request.entity = ConformanceModel.shared.entitiesByName[entityName]
        request.relationshipKeyPathsForPrefetching = keyPaths
        guard case .rows(let rows) = try store.fetchRows(request) else {
            Issue.record("The fetch of \(entityName) gave no rows")
            return []
        }
        return rows
    }

    /// A store at a new schema with two departments of three ordered projects each, and two projects of two members.
    func departmentsAndProjects() throws -> (URL, NSPersistentStoreCoordinator) {
        let url = try #require(PostgreSQLTestServer.newURL())
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: ConformanceModel.shared)
        try coordinator.addPersistentStore(ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: nil)
        let writer = NSManagedObjectContext.conformance(coordinator)
        try writer.run {
            for name in ["Research", "Sales"] {
                let department = writer.make("Department", ["name": name])
                let projects = ["Zeta", "Alpha", "Mu"].map { writer.make("Project", ["title": "\(name) \($0)"]) }
                department.setValue(NSOrderedSet(array: projects), forKey: "projects")
                let people = ["Ada", "Grace"].map { writer.make("Person", ["name": "\(name) \($0)", "age": 40]) }
                projects[0].setValue(NSSet(array: people), forKey: "members")
            }
            try writer.save()
        }
        return (url, coordinator)
    }

    @Test func prefetchingGivesEachObjectItsOwnDestinationsInOrder() throws {
        let (url, coordinator) = try departmentsAndProjects()
        defer { PostgreSQLTestServer.drop(url) }
        let reader = NSManagedObjectContext.conformance(coordinator)
        try reader.run {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Department")
            request.relationshipKeyPathsForPrefetching = ["projects.members"]
            var titles: [String: [String]] = [:]
            var members: [String: [String]] = [:]
            for department in try reader.fetch(request) {
                let projects = try #require(department.value(forKey: "projects") as? NSOrderedSet)
                let name = department.value(forKey: "name") as? String ?? ""
                titles[name] = projects.array.compactMap { ($0 as? NSManagedObject)?.value(forKey: "title") as? String }
                let first = try #require(projects.firstObject as? NSManagedObject)
                members[name] = ((first.value(forKey: "members") as? NSSet)?.allObjects ?? [])
                    .compactMap { ($0 as? NSManagedObject)?.value(forKey: "name") as? String }.sorted()
            }
            #expect(
                titles == [
                    "Research": ["Research Zeta", "Research Alpha", "Research Mu"],
                    "Sales": ["Sales Zeta", "Sales Alpha", "Sales Mu"],
                ])
            #expect(
                members == ["Research": ["Research Ada", "Research Grace"], "Sales": ["Sales Ada", "Sales Grace"]])
        }
    }

    /// Prefetching reads the destinations of all sources in one query, which the faults then answer from: values
    /// changed behind the store afterwards are not seen, as no fault asks the server again.
    @Test func prefetchedDestinationsAnswerTheFaultsOnce() throws {
        let (url, coordinator) = try departmentsAndProjects()
        defer { PostgreSQLTestServer.drop(url) }
        let store = try #require(coordinator.persistentStores.first as? PostgreSQLStore)
        let relationship = try #require(
            ConformanceModel.shared.entitiesByName["Department"]?.relationshipsByName["projects"])
        let reader = NSManagedObjectContext.conformance(coordinator)
        var departments: [NSManagedObjectID] = []
        try reader.run {
            departments = try reader.objects("Department").map(\.objectID)
        }
        try store.prefetchDestinations(of: relationship, from: departments)
        try changeBehindTheStore(url, table: "ZPROJECT", column: "ZTITLE", to: "changed")
        for department in departments {
            let prefetched = strings(try store.destinationRows(of: relationship, from: department))
            #expect(prefetched.count == 3)
            #expect(!prefetched.contains("changed"))
            // Handed out once: the next fault reads the server.
            #expect(
                strings(try store.destinationRows(of: relationship, from: department)) == [
                    "changed", "changed", "changed",
                ])
        }
    }

    /// A fetch with `relationshipKeyPathsForPrefetching` reads each relationship of all fetched objects in one query,
    /// which the faults then answer from: a change behind the store afterwards is not seen by them.
    @Test func aFetchWithPrefetchingReadsTheDestinationsAhead() throws {
        let (url, coordinator) = try departmentsAndProjects()
        defer { PostgreSQLTestServer.drop(url) }
        let store = try #require(coordinator.persistentStores.first as? PostgreSQLStore)
        let projects = try #require(
            ConformanceModel.shared.entitiesByName["Department"]?.relationshipsByName["projects"])
        let members = try #require(ConformanceModel.shared.entitiesByName["Project"]?.relationshipsByName["members"])
        let departments = try fetchRows("Department", prefetching: ["projects.members"], from: store)
        #expect(departments.count == 2)
        try changeBehindTheStore(url, table: "ZPROJECT", column: "ZTITLE", to: "changed")
        try changeBehindTheStore(url, table: "ZPERSON", column: "ZNAME", to: "changed")
        for department in departments {
            let projectRows = try store.destinationRows(of: projects, from: department.objectID)
            #expect(projectRows.count == 3)
            #expect(!strings(projectRows).contains("changed"))
            let first = try #require(projectRows.first)
            let memberRows = try store.destinationRows(of: members, from: first.objectID)
            #expect(memberRows.count == 2)
            #expect(!strings(memberRows).contains("changed"))
        }
    }

    /// A to-one step of a prefetch reads the destinations the row cache lacks in one query, and keeps them there: a
    /// fault of one of them then answers from the cache.
    @Test func aFetchWithPrefetchingReadsToOneDestinationsIntoTheRowCache() throws {
        let (url, coordinator) = try departmentsAndProjects()
        defer { PostgreSQLTestServer.drop(url) }
        let store = try #require(coordinator.persistentStores.first as? PostgreSQLStore)
        let projects = try fetchRows("Project", prefetching: ["department"], from: store)
        let departments = Set(
            projects.flatMap { row in
                row.values.compactMap { value -> NSManagedObjectID? in
                    if case .objectID(let id) = value, id.entity.name == "Department" { id } else { nil }
                }
            })
        #expect(departments.count == 2)
        try changeBehindTheStore(url, table: "ZDEPARTMENT", column: "ZNAME", to: "changed")
        for department in departments {
            let row = try #require(try store.row(for: department, stalenessInterval: -1))
            #expect(!strings([row]).contains("changed"))
        }
    }
}

/// The store's registration notices do nothing, so contexts do not send them (a call, an array and the store's lock
/// for every object registered and unregistered); a store of another kind still hears them. No server needed.
struct PostgreSQLRegistrationNoticeTests {
    @Test func contextsDoNotTellThePostgreSQLStoreOfEachObject() throws {
        let url = try #require(URL(string: "postgres://nobody@127.0.0.1:1/none"))
        let store = PostgreSQLStore(persistentStoreCoordinator: nil, configurationName: nil, at: url, options: nil)
        #expect(!ObjectIDStoreReference(store: store, identifier: nil).tracksRegistration)
        let other = NSIncrementalStore(persistentStoreCoordinator: nil, configurationName: nil, at: url, options: nil)
        #expect(ObjectIDStoreReference(store: other, identifier: nil).tracksRegistration)
    }
}
