import Foundation
import OpenCoreData
import Testing

/// Store URLs may carry a password (a PostgreSQL store's); Core Data's errors are what programs log, so none of them
/// shows it — neither in the message nor in the URL under `NSURLErrorKey`.
@Suite struct CredentialRedactionTests {
    static let password = "s3cret-pw"

    static func model() -> NSManagedObjectModel {
        let entity = NSEntityDescription()
        entity.name = "Thing"
        entity.managedObjectClassName = "NSManagedObject"
        let model = NSManagedObjectModel()
        model.entities = [entity]
        return model
    }

    static func expectNoPassword(_ error: Error) {
        let error = error as NSError
        #expect(error.domain == NSCocoaErrorDomain)
        #expect(!"\(error)".contains(password))
        #expect(!"\(error.userInfo)".contains(password))
        #expect(!error.localizedDescription.contains(password))
    }

    @Test(arguments: [
        "postgres://app:\(password)@db.invalid:5432/inventory?schema=stock",
        "postgres://db.invalid/inventory?user=app&password=\(password)",
    ])
    func aStoreThatCannotBeAddedKeepsItsPasswordOutOfTheError(_ address: String) throws {
        let url = try #require(URL(string: address))
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.model())
        var caught: Error?
        do {
            try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
        } catch {
            caught = error
        }
        Self.expectNoPassword(try #require(caught))
    }

    @Test func metadataOfAStoreThatCannotBeReadKeepsItsPasswordOutOfTheError() throws {
        let url = try #require(URL(string: "postgres://app:\(Self.password)@db.invalid/inventory"))
        var caught: Error?
        do {
            _ = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        } catch {
            caught = error
        }
        Self.expectNoPassword(try #require(caught))
    }
}
