import Foundation
import OpenCoreData
import StoreConformance
import Testing

@testable import OpenCoreDataPostgreSQL

/// Uniqueness constraints and fetch indexes as the database's own indexes, and a container set up by description.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, Comment(rawValue: PostgreSQLTestServer.skipMessage)))
struct PostgreSQLSchemaTests {
    static func tagModel() -> NSManagedObjectModel {
        let name = NSAttributeDescription()
        name.name = "name"
        name.attributeType = .stringAttributeType
        name.isOptional = true
        let tag = NSEntityDescription()
        tag.name = "Tag"
        tag.managedObjectClassName = "NSManagedObject"
        tag.properties = [name]
        tag.uniquenessConstraints = [["name"]]
        tag.indexes = [
            NSFetchIndexDescription(
                name: "byName", elements: [NSFetchIndexElementDescription(property: name, collationType: .binary)])
        ]
        let model = NSManagedObjectModel()
        model.entities = [tag]
        return model
    }

    @Test func aContainerAddsTheStoreItsDescriptionNames() throws {
        let url = try #require(PostgreSQLTestServer.newURL())
        defer { PostgreSQLTestServer.drop(url) }
        let container = NSPersistentContainer(name: "Tags", managedObjectModel: Self.tagModel())
        let description = NSPersistentStoreDescription(url: url)
        description.type = PostgreSQLStoreType
        container.persistentStoreDescriptions = [description]
        var loadError: Error?
        container.loadPersistentStores { _, error in loadError = error }
        #expect(loadError == nil)
        #expect(container.persistentStoreCoordinator.persistentStores.first?.type == PostgreSQLStoreType)
        let context = container.newBackgroundContext()
        try context.run {
            context.make("Tag", ["name": "swift"])
            try context.save()
        }
    }

    @Test func twoWritersOfOneConstrainedValueSaveItOnce() throws {
        let url = try #require(PostgreSQLTestServer.newURL())
        defer { PostgreSQLTestServer.drop(url) }
        let model = Self.tagModel()
        let coordinators = [
            NSPersistentStoreCoordinator(managedObjectModel: model),
            NSPersistentStoreCoordinator(managedObjectModel: model),
        ]
        for coordinator in coordinators {
            try coordinator.addPersistentStore(
                ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: nil)
        }
        let first = NSManagedObjectContext.conformance(coordinators[0])
        let second = NSManagedObjectContext.conformance(coordinators[1])
        try first.run { first.make("Tag", ["name": "swift"]) }
        try second.run { second.make("Tag", ["name": "swift"]) }
        try first.run { try first.save() }
        try second.run {
            #expect {
                try second.save()
            } throws: { error in
                (error as NSError).code == NSManagedObjectConstraintMergeError
            }
        }
        let reader = NSManagedObjectContext.conformance(coordinators[0])
        try reader.run {
            let names = try reader.values("Tag", "name")
            #expect(names == ["swift"])
        }
        // The database holds the constraint itself, for writers that race past the context's check.
        let schema = try #require(
            URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "schema" }?.value)
        let indexes = try PostgreSQLConnection(PostgreSQLConfiguration(url: url)).query(
            "SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = 'ZTAG' ORDER BY indexdef", [schema])
        let definitions = (0..<indexes.rowCount).compactMap { indexes.text($0, 0) }
        #expect(definitions.contains { $0.hasPrefix("CREATE UNIQUE INDEX") && $0.contains("(\"ZNAME\")") })
        #expect(definitions.filter { $0.contains("(\"ZNAME\")") }.count == 2)
    }
}
