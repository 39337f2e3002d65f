// Mapping models compare by what they describe: JSQCoreDataKit checks which mapping model a migration step found by
// comparing it with the one it loads itself.
import Foundation
import Testing

#if canImport(CoreData)
import CoreData
#else
import OpenCoreData
#endif

@Suite struct MappingModelEqualityTests {
    private func mapping(renaming name: String) -> NSMappingModel {
        let property = NSPropertyMapping()
        property.name = name
        property.valueExpression = NSExpression(format: "$source.name")
        let entity = NSEntityMapping()
        entity.name = "AuthorToAuthor"
        entity.mappingType = .transformEntityMappingType
        entity.sourceEntityName = "Author"
        entity.destinationEntityName = "Author"
        entity.attributeMappings = [property]
        let model = NSMappingModel()
        model.entityMappings = [entity]
        return model
    }

    @Test func mappingModelsMadeAlikeAreEqual() {
        #expect(mapping(renaming: "fullName") == mapping(renaming: "fullName"))
        #expect(mapping(renaming: "fullName").hash == mapping(renaming: "fullName").hash)
        #expect(mapping(renaming: "fullName") != mapping(renaming: "displayName"))
    }
}
