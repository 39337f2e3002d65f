// Models compare by what they describe, not by identity: code compares the model an entity belongs to with a model
// it loaded again (JSQCoreDataKit's tests do), and migration code looks up a model among the versions of a bundle.
import Foundation
import Testing

#if canImport(CoreData)
import CoreData
#else
import OpenCoreData
#endif

@Suite struct ModelEqualityTests {
    @Test func modelsMadeAlikeAreEqual() {
        let first = LibraryModel.make()
        let second = LibraryModel.make()
        #expect(first !== second)
        #expect(first == second)
        #expect(first.hash == second.hash)
        #expect(Set([first, second]).count == 1)
    }

    @Test func modelsThatStoreDifferentDataDiffer() {
        let original = LibraryModel.make()
        let changed = LibraryModel.make()
        let extra = NSAttributeDescription()
        extra.name = "isbn"
        extra.attributeType = .stringAttributeType
        changed.entitiesByName["Book"]?.properties.append(extra)
        #expect(original != changed)
        #expect(original != NSManagedObjectModel())
    }
}
