import Foundation
import OpenCoreData
import Testing

extension StoreConformanceCase {
    static let metadata: [StoreConformanceCase] = [
        StoreConformanceCase("Metadata names the store and the model, and keeps the user's keys") { fixture in
            let stack = try ConformanceStack(fixture)
            let store = stack.store
            let metadata = stack.coordinator.metadata(for: store)
            let uuid = try #require(metadata[NSStoreUUIDKey] as? String)
            #expect(!uuid.isEmpty)
            #expect(store.identifier == uuid)
            #expect(metadata[NSStoreTypeKey] as? String == fixture.storeType)
            #expect(store.type == fixture.storeType)
            #expect(stack.model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
            var changed = metadata
            changed["ConformanceKey"] = "kept"
            stack.coordinator.setMetadata(changed, for: store)
            let context = stack.newContext()
            try context.run {
                context.make("Note", ["text": "saved with the metadata"])
                try context.save()
            }
            #expect(stack.coordinator.metadata(for: store)["ConformanceKey"] as? String == "kept")
            if fixture.persists {
                let again = try stack.reopen()
                let reopened = again.metadata(for: again.persistentStores[0])
                #expect(reopened["ConformanceKey"] as? String == "kept")
                #expect(reopened[NSStoreUUIDKey] as? String == uuid)
                #expect(again.persistentStores[0].identifier == uuid)
            }
        },
        StoreConformanceCase("Metadata set on the store between saves goes with each save that follows") { fixture in
            let stack = try ConformanceStack(fixture)
            let store = stack.store
            let context = stack.newContext()
            // Set on the store itself, not through the coordinator: written with the next save of objects. Each
            // value is saved once and then replaced, the last by the value the first save wrote.
            for (index, token) in ["first", "second", "first"].enumerated() {
                var metadata = store.metadata ?? [:]
                metadata["ConformanceToken"] = token
                store.metadata = metadata
                try context.run {
                    context.make("Note", ["text": "note \(index)"])
                    try context.save()
                }
                if fixture.persists {
                    let reopened = try stack.reopen()
                    #expect(
                        reopened.metadata(for: reopened.persistentStores[0])["ConformanceToken"] as? String == token,
                        "after save \(index)")
                }
            }
            #expect(store.metadata["ConformanceToken"] as? String == "first")
        },
    ]

    static let multipleStores: [StoreConformanceCase] = [
        StoreConformanceCase("Configurations route each entity to its own store") { fixture in
            let stack = try ConformanceStack(fixture, configuration: "Main")
            let notes = try stack.addStore(configuration: "Notes")
            let context = stack.newContext()
            try context.run {
                let note = context.make("Note", ["text": "hello"])
                let project = context.make("Project", ["title": "Routed"])
                try context.save()
                #expect(note.objectID.persistentStore === notes)
                #expect(project.objectID.persistentStore === stack.store)
            }
            let reader = stack.newContext()
            try reader.run {
                let texts = try reader.values("Note", "text")
                #expect(texts == ["hello"])
                let titles = try reader.values("Project", "title")
                #expect(titles == ["Routed"])
            }
        },
        StoreConformanceCase("One entity in two stores: fetches, sorts, limits and counts span both") { fixture in
            let stack = try ConformanceStack(fixture)
            let second = try stack.addStore()
            let context = stack.newContext()
            try context.run {
                for (index, age) in [40, 10, 30, 20, 50, 60].enumerated() {
                    let person = context.make("Person", ["name": "P\(index)", "age": age])
                    if index % 2 == 1 { context.assign(person, to: second) }
                }
                try context.save()
            }
            let reader = stack.newContext()
            try reader.run {
                let people = try reader.objects("Person", sortedBy: ["age"])
                #expect(people.map { ($0.value(forKey: "age") as? NSNumber)?.intValue } == [10, 20, 30, 40, 50, 60])
                #expect(Set(people.map { $0.objectID.persistentStore?.identifier }).count == 2)
                let page = try reader.objects("Person", "age > 15", sortedBy: ["-age"]) {
                    $0.fetchOffset = 1
                    $0.fetchLimit = 3
                }
                #expect(page.map { ($0.value(forKey: "age") as? NSNumber)?.intValue } == [50, 40, 30])
                let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
                request.predicate = NSPredicate(format: "age >= 30")
                #expect(try reader.count(for: request) == 4)
                request.fetchLimit = 3
                #expect(try reader.count(for: request) == 3)
                request.affectedStores = [second]
                request.fetchLimit = 0
                #expect(try reader.count(for: request) == 1)
            }
        },
        StoreConformanceCase("Fetches follow the coordinator's stores as they are added and removed") { fixture in
            let stack = try ConformanceStack(fixture)
            let first = stack.store
            let context = stack.newContext()
            try context.run {
                context.make("Person", ["name": "in the first", "age": 1])
                try context.save()
                let names = try context.values("Person", "name")
                #expect(names == ["in the first"])
            }
            let second = try stack.addStore()
            try context.run {
                let person = context.make("Person", ["name": "in the second", "age": 2])
                context.assign(person, to: second)
                try context.save()
            }
            let both = stack.newContext()
            try both.run {
                let people = try both.objects("Person", sortedBy: ["age"])
                #expect(people.count == 2)
            }
            try stack.coordinator.remove(first)
            let remaining = stack.newContext()
            try remaining.run {
                let names = try remaining.values("Person", "name")
                #expect(names == ["in the second"])
            }
        },
    ]

    static let concurrency: [StoreConformanceCase] = [
        StoreConformanceCase("Contexts on several queues insert, fetch and save at once") { fixture in
            let stack = try ConformanceStack(fixture)
            let workers = 4
            let perWorker = 25
            let failures = LockedValue<[String]>([])
            let coordinator = stack.coordinator
            DispatchQueue.concurrentPerform(iterations: workers) { worker in
                let context = NSManagedObjectContext.conformance(coordinator)
                context.performAndWait {
                    do {
                        for index in 0..<perWorker {
                            context.make("Person", ["name": "w\(worker)-\(index)", "age": worker])
                            if index % 5 == 4 {
                                try context.save()
                                let mine = try context.objects("Person", "age == %@", [worker])
                                if mine.count != index + 1 {
                                    failures.withLock {
                                        $0.append("worker \(worker) saw \(mine.count) of \(index + 1)")
                                    }
                                }
                            }
                        }
                    } catch {
                        failures.withLock { $0.append("worker \(worker): \(error)") }
                    }
                }
            }
            #expect(failures.withLock { $0 } == [])
            let reader = stack.newContext()
            try reader.run {
                let count = try reader.count(for: NSFetchRequest<NSManagedObject>(entityName: "Person"))
                #expect(count == workers * perWorker)
                let names = Set(try reader.values("Person", "name"))
                #expect(names.count == workers * perWorker)
            }
        }
    ]
}
