import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL
import StoreConformance
import Testing

/// What the PostgreSQL store adds to the conformance suite: bad URLs and servers, several coordinators as several
/// processes on one database, a schema made for another model.
@Suite struct PostgreSQLStoreTests {
    static func coordinator(_ model: NSManagedObjectModel = ConformanceModel.shared) -> NSPersistentStoreCoordinator {
        NSPersistentStoreCoordinator(managedObjectModel: model)
    }

    /// The Core Data error of adding a store at `url`.
    static func addError(_ url: URL) -> NSError? {
        do {
            try coordinator().addPersistentStore(
                ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: nil)
            return nil
        } catch {
            return error as NSError
        }
    }

    // MARK: Without a server

    @Test func aURLOfAnotherSchemeIsRefusedWithAnOpenError() throws {
        let error = try #require(Self.addError(URL(string: "mysql://user@host/db")!))
        #expect(error.domain == NSCocoaErrorDomain)
        #expect(error.code == NSPersistentStoreOpenError)
        #expect(error.localizedDescription.contains("postgres://"))
    }

    @Test func aRefusedConnectionGivesTheServersMessageWithoutThePassword() throws {
        // Port 1 on the loopback address: nothing listens there, so the connection is refused at once.
        let url = URL(string: "postgres://someone:s3cret-word@127.0.0.1:1/db?connect_timeout=2")!
        let error = try #require(Self.addError(url))
        #expect(error.domain == NSCocoaErrorDomain)
        #expect(error.code == NSPersistentStoreOpenError)
        let message = error.localizedDescription
        #expect(message.contains("127.0.0.1"))
        #expect(message.localizedCaseInsensitiveContains("refused") || message.contains("connect"))
        #expect(!message.contains("s3cret-word"))
        #expect(!"\(error)".contains("s3cret-word"))
    }

    @Test func aSchemaNameTooLongForPostgreSQLIsRefused() throws {
        let long = String(repeating: "s", count: 64)
        let error = try #require(Self.addError(URL(string: "postgres://127.0.0.1:1/db?schema=\(long)")!))
        #expect(error.code == NSPersistentStoreOpenError)
        #expect(error.localizedDescription.contains("schema"))
    }

    @Test func theStoreTypeIsRegistered() throws {
        #expect(PostgreSQLStoreType == "PostgreSQL")
        let description = NSPersistentStoreDescription(url: URL(string: "postgres:///db")!)
        description.type = PostgreSQLStoreType
        #expect(description.type == "PostgreSQL")
    }

    // MARK: With a server

    @Test(.enabled(if: PostgreSQLTestServer.isAvailable, Comment(rawValue: PostgreSQLTestServer.skipMessage)))
    func twoCoordinatorsUpdatingOneRowConflict() throws {
        let url = try #require(PostgreSQLTestServer.newURL())
        defer { PostgreSQLTestServer.drop(url) }
        // Two coordinators stand for two processes: they share nothing but the server.
        let first = Self.coordinator()
        try first.addPersistentStore(ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: nil)
        let second = Self.coordinator()
        try second.addPersistentStore(ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: nil)
        #expect(first.persistentStores[0].identifier == second.persistentStores[0].identifier)

        let writer = NSManagedObjectContext.conformance(first)
        try writer.run {
            writer.make("Person", ["name": "Ada", "age": 36])
            try writer.save()
        }
        let a = NSManagedObjectContext.conformance(first)
        let b = NSManagedObjectContext.conformance(second)
        var personInA: NSManagedObject?
        try a.run { personInA = try a.objects("Person").first }
        var personInB: NSManagedObject?
        try b.run { personInB = try b.objects("Person").first }
        try a.run {
            personInA?.setValue(37, forKey: "age")
            try a.save()
        }
        try b.run {
            personInB?.setValue(40, forKey: "age")
            #expect(throws: (any Error).self) { try b.save() }
            do {
                try b.save()
            } catch let error as NSError {
                #expect(error.domain == NSCocoaErrorDomain)
                #expect(error.code == NSManagedObjectMergeError)
                let conflicts = error.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSMergeConflict]
                #expect(conflicts?.count == 1)
            }
            // The merge policy resolves it: this context's change wins, and the row is the store's next version.
            b.mergePolicy = NSMergePolicy(merge: .mergeByPropertyObjectTrumpMergePolicyType)
            try b.save()
        }
        let reader = NSManagedObjectContext.conformance(first)
        try reader.run {
            let ages = try reader.objects("Person").map { ($0.value(forKey: "age") as? NSNumber)?.intValue }
            #expect(ages == [40])
        }
    }

    @Test(.enabled(if: PostgreSQLTestServer.isAvailable, Comment(rawValue: PostgreSQLTestServer.skipMessage)))
    func keysFromTwoCoordinatorsNeverCollide() throws {
        let url = try #require(PostgreSQLTestServer.newURL())
        defer { PostgreSQLTestServer.drop(url) }
        let coordinators = [Self.coordinator(), Self.coordinator()]
        for coordinator in coordinators {
            try coordinator.addPersistentStore(
                ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: nil)
        }
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            let context = NSManagedObjectContext.conformance(coordinators[worker % 2])
            context.performAndWait {
                for index in 0..<20 {
                    context.make("Person", ["name": "w\(worker)-\(index)"])
                    if index % 5 == 4 { try? context.save() }
                }
            }
        }
        let reader = NSManagedObjectContext.conformance(coordinators[0])
        try reader.run {
            let people = try reader.objects("Person")
            #expect(people.count == 80)
            #expect(Set(people.map(\.objectID)).count == 80)
        }
    }

    /// A model that shares no entity with the conformance model.
    static func unrelatedModel() -> NSManagedObjectModel {
        let entity = NSEntityDescription()
        entity.name = "Unrelated"
        entity.managedObjectClassName = "NSManagedObject"
        let model = NSManagedObjectModel()
        model.entities = [entity]
        return model
    }

    @Test(.enabled(if: PostgreSQLTestServer.isAvailable, Comment(rawValue: PostgreSQLTestServer.skipMessage)))
    func aSchemaOfAnotherModelIsRefused() throws {
        let url = try #require(PostgreSQLTestServer.newURL())
        defer { PostgreSQLTestServer.drop(url) }
        try Self.coordinator().addPersistentStore(
            ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: nil)
        let other = Self.unrelatedModel()
        #expect {
            try Self.coordinator(other).addPersistentStore(
                ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: nil)
        } throws: { error in
            (error as NSError).code == NSPersistentStoreIncompatibleVersionHashError
        }
    }

    @Test(.enabled(if: PostgreSQLTestServer.isAvailable, Comment(rawValue: PostgreSQLTestServer.skipMessage)))
    func aRefusalNeverShowsThePasswordOfTheURL() throws {
        // The test server trusts local connections, so the password is sent and ignored; the framework's own error
        // (a schema of another model) must not show it, in its message or in the URL it carries.
        let base = try #require(PostgreSQLTestServer.newURL())
        defer { PostgreSQLTestServer.drop(base) }
        var components = try #require(URLComponents(url: base, resolvingAgainstBaseURL: false))
        components.queryItems = (components.queryItems ?? []) + [URLQueryItem(name: "password", value: "s3cret-pw")]
        let url = try #require(components.url)
        try Self.coordinator().addPersistentStore(
            ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: nil)
        let other = Self.unrelatedModel()
        var caught: NSError?
        do {
            try Self.coordinator(other).addPersistentStore(
                ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: nil)
        } catch {
            caught = error as NSError
        }
        let error = try #require(caught)
        #expect(error.code == NSPersistentStoreIncompatibleVersionHashError)
        #expect(!"\(error)".contains("s3cret-pw"))
        #expect(!"\(error.userInfo)".contains("s3cret-pw"))
        #expect(!error.localizedDescription.contains("s3cret-pw"))
    }

    @Test(.enabled(if: PostgreSQLTestServer.isAvailable, Comment(rawValue: PostgreSQLTestServer.skipMessage)))
    func aWrongDatabaseGivesTheServersMessage() throws {
        let base = try #require(PostgreSQLTestServer.url)
        var components = try #require(URLComponents(url: base, resolvingAgainstBaseURL: false))
        components.path = "/no_such_database_here"
        let url = try #require(components.url)
        let error = try #require(Self.addError(url))
        #expect(error.code == NSPersistentStoreOpenError)
        #expect(error.localizedDescription.contains("no_such_database_here"))
        #expect(error.localizedDescription.contains("does not exist"))
    }
}
