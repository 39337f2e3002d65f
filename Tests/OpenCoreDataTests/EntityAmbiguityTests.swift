import Foundation
import Testing

@testable import OpenCoreDataCore

final class AmbiguityShelf: NSManagedObject {}

// Serialized: the registry sees every live model, and each test makes its own.
@Suite(.serialized) struct EntityAmbiguityTests {
    private func model(attribute: String) -> NSManagedObjectModel {
        let entity = NSEntityDescription()
        entity.name = "Shelf"
        entity.managedObjectClassName = NSStringFromClass(AmbiguityShelf.self)
        let property = NSAttributeDescription()
        property.name = attribute
        property.attributeType = .stringAttributeType
        entity.properties = [property]
        let model = NSManagedObjectModel()
        model.entities = [entity]
        return model
    }

    @Test func copiesOfOneModelAreNotAmbiguous() throws {
        let first = NSPersistentStoreCoordinator(managedObjectModel: model(attribute: "label"))
        let second = NSPersistentStoreCoordinator(managedObjectModel: model(attribute: "label"))
        #expect(ManagedObjectClassRegistry.ambiguityWarning(for: AmbiguityShelf.self) == nil)
        #expect(AmbiguityShelf.entity().name == "Shelf")
        withExtendedLifetime((first, second)) {}
    }

    @Test func modelsThatDescribeAClassDifferentlyAreReportedByName() throws {
        let first = NSPersistentStoreCoordinator(managedObjectModel: model(attribute: "label"))
        let second = NSPersistentStoreCoordinator(managedObjectModel: model(attribute: "colour"))
        let warning = try #require(ManagedObjectClassRegistry.ambiguityWarning(for: AmbiguityShelf.self))
        #expect(warning.contains("Multiple NSEntityDescriptions claim the NSManagedObject subclass"))
        #expect(warning.contains("Shelf"))
        withExtendedLifetime((first, second)) {}
    }
}
