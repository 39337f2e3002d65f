import Foundation
import OpenCoreData
import Testing

extension StoreConformanceCase {
    static let crud: [StoreConformanceCase] = [
        StoreConformanceCase("Objects are created, read, updated and deleted") { fixture in
            let stack = try ConformanceStack(fixture)
            let writer = stack.newContext()
            try writer.run {
                writer.make("Department", ["name": "R&D"])
                writer.make("Department", ["name": "Sales"])
                try writer.save()
                #expect(try writer.objects("Department").allSatisfy { !$0.objectID.isTemporaryID })
            }
            let reader = stack.newContext()
            try reader.run {
                #expect(try reader.values("Department", "name") == ["R&D", "Sales"])
                let sales = try ConformanceData.one(reader, "Department", "name", "Sales")
                sales.setValue("Marketing", forKey: "name")
                try reader.save()
            }
            try writer.run {
                writer.refreshAllObjects()
                #expect(try writer.values("Department", "name") == ["Marketing", "R&D"])
                writer.delete(try ConformanceData.one(writer, "Department", "name", "R&D"))
                try writer.save()
                #expect(try writer.values("Department", "name") == ["Marketing"])
            }
            let fresh = stack.newContext()
            try fresh.run {
                let names = try fresh.values("Department", "name")
                #expect(names == ["Marketing"])
            }
            if fixture.persists {
                let context = NSManagedObjectContext.conformance(try stack.reopen())
                try context.run {
                    let names = try context.values("Department", "name")
                    #expect(names == ["Marketing"])
                }
            }
        },
        StoreConformanceCase("Saved objects have permanent IDs whose URIs lead back to them") { fixture in
            let stack = try ConformanceStack(fixture)
            let context = stack.newContext()
            try context.run {
                let early = context.make("Project", ["title": "Early"])
                #expect(early.objectID.isTemporaryID)
                try context.obtainPermanentIDs(for: [early])
                #expect(!early.objectID.isTemporaryID)
                let earlyID = early.objectID
                let late = context.make("Project", ["title": "Late"])
                try context.save()
                #expect(early.objectID == earlyID)
                #expect(!late.objectID.isTemporaryID)
                #expect(late.objectID.persistentStore === stack.store)
                #expect(late.objectID != early.objectID)
                let uri = late.objectID.uriRepresentation()
                #expect(uri.scheme == "x-coredata")
                #expect(uri.host == stack.store.identifier)
                let found = try #require(stack.coordinator.managedObjectID(forURIRepresentation: uri))
                #expect(found == late.objectID)
                let other = NSManagedObjectContext.conformance(stack.coordinator)
                try other.run {
                    let object = try other.existingObject(with: found)
                    #expect(object.value(forKey: "title") as? String == "Late")
                }
            }
        },
        StoreConformanceCase("A deleted object can no longer be found") { fixture in
            let stack = try ConformanceStack(fixture)
            let context = stack.newContext()
            try context.run {
                let project = context.make("Project", ["title": "Gone"])
                try context.save()
                let id = project.objectID
                context.delete(project)
                try context.save()
                let other = NSManagedObjectContext.conformance(stack.coordinator)
                try other.run {
                    #expect(throws: (any Error).self) { try other.existingObject(with: id) }
                    let count = try other.count(for: NSFetchRequest<NSManagedObject>(entityName: "Project"))
                    #expect(count == 0)
                }
            }
        },
    ]
}
