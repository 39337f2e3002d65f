import OpenCoreDataShim
import Testing

/// A fetch returns its objects as the request's result type: the entity's own class, a superclass of the objects'
/// classes, `NSManagedObject`, or the `NSFetchRequestResult` existential — each an array the caller may go on to
/// change.
@Suite struct FetchResultTypingTests {
    private static func model() -> NSManagedObjectModel {
        let animal = NSEntityDescription()
        animal.name = "Animal"
        animal.managedObjectClassName = String(reflecting: TypedAnimal.self)
        let dog = NSEntityDescription()
        dog.name = "Dog"
        dog.managedObjectClassName = String(reflecting: TypedDog.self)
        animal.subentities = [dog]
        animal.properties = [CompanyModel.attribute("name", .stringAttributeType)]
        let model = NSManagedObjectModel()
        model.entities = [animal, dog]
        return model
    }

    /// A context holding two animals, one of them a dog.
    private static func filledContext() throws -> NSManagedObjectContext {
        let context = CompanyModel.context(model: model())
        try context.performAndWait {
            let cat = TypedAnimal(context: context)
            cat.name = "Tom"
            let dog = TypedDog(context: context)
            dog.name = "Rex"
            try context.save()
        }
        return context
    }

    @Test func objectsOfTheRequestedClassComeAsThatClass() throws {
        let context = try Self.filledContext()
        try context.performAndWait {
            var dogs = try context.fetch(NSFetchRequest<TypedDog>(entityName: "Dog"))
            #expect(dogs.map(\.name) == ["Rex"])
            dogs.append(TypedDog(context: context))
            #expect(dogs.count == 2)
            #expect(dogs.allSatisfy { type(of: $0) == TypedDog.self })
        }
    }

    @Test func objectsOfSubclassesComeAsTheRequestedSuperclass() throws {
        let context = try Self.filledContext()
        try context.performAndWait {
            let request = NSFetchRequest<TypedAnimal>(entityName: "Animal")
            request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            var animals = try context.fetch(request)
            #expect(animals.map(\.name) == ["Rex", "Tom"])
            #expect(animals.map { $0 is TypedDog } == [true, false])
            animals.append(TypedAnimal(context: context))
            #expect(animals.count == 3)
        }
    }

    @Test func objectsComeAsManagedObjects() throws {
        let context = try Self.filledContext()
        try context.performAndWait {
            var objects = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Animal"))
            #expect(objects.count == 2)
            objects.append(NSEntityDescription.insertNewObject(forEntityName: "Dog", into: context))
            #expect(Set(objects.map { $0.entity.name ?? "" }) == ["Animal", "Dog"])
        }
    }

    @Test func objectsComeAsFetchRequestResults() throws {
        let context = try Self.filledContext()
        try context.performAndWait {
            let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Animal")
            request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            var results = try context.fetch(request)
            #expect(results.compactMap { ($0 as? TypedAnimal)?.name } == ["Rex", "Tom"])
            let dog = try #require(results.first as? TypedDog)
            results.append(dog.objectID)
            results.append(["name": "Rex"] as NSDictionary)
            #expect(results.count == 4)
            #expect(results[2] as? NSManagedObjectID == dog.objectID)
            #expect((results[3] as? NSDictionary)?["name"] as? String == "Rex")
        }
    }

    /// Each model's entity makes objects of the class it names, though another model's entity of the same name
    /// names another class: fetches of the two, one after the other, each give their own.
    @Test func entitiesOfTheSameNameInTwoModelsMakeObjectsOfTheirOwnClasses() throws {
        let dogs = try Self.filledContext()
        let copy = try #require(dogs.persistentStoreCoordinator?.managedObjectModel.copy() as? NSManagedObjectModel)
        copy.entitiesByName["Dog"]?.managedObjectClassName = String(reflecting: TypedAnimal.self)
        let plain = CompanyModel.context(model: copy)
        try plain.performAndWait {
            NSEntityDescription.insertNewObject(forEntityName: "Dog", into: plain).setValue("Rex", forKey: "name")
            try plain.save()
        }
        for _ in 0..<2 {
            let fetchedDogs = try dogs.performAndWait {
                try dogs.fetch(NSFetchRequest<TypedAnimal>(entityName: "Dog")).map { ObjectIdentifier(type(of: $0)) }
            }
            #expect(fetchedDogs == [ObjectIdentifier(TypedDog.self)])
            let plainDogs = try plain.performAndWait {
                plain.reset()
                return try plain.fetch(NSFetchRequest<TypedAnimal>(entityName: "Dog")).map {
                    ObjectIdentifier(type(of: $0))
                }
            }
            #expect(plainDogs == [ObjectIdentifier(TypedAnimal.self)])
            let inserted = plain.performAndWait {
                ObjectIdentifier(type(of: NSEntityDescription.insertNewObject(forEntityName: "Dog", into: plain)))
            }
            #expect(inserted == ObjectIdentifier(TypedAnimal.self))
        }
    }

    @Test func objectsOfAnotherClassThanRequestedStopTheFetch() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let context = try Self.filledContext()
            try context.performAndWait {
                _ = try context.fetch(NSFetchRequest<TypedDog>(entityName: "Animal"))
            }
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("not a TypedDog"))
    }

    /// As above when every object fetched is of one class, and not the requested one: from a SQLite store, whose
    /// fetches note the class of their objects as they make them, in a context that has not seen them before.
    @Test func objectsAllOfAnotherClassThanRequestedStopTheFetch() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let directory = SQLiteTestDirectory()
            let coordinator = try SQLiteStack.coordinator(Self.model(), at: directory.store())
            let writer = SQLiteStack.context(coordinator)
            try writer.performAndWait {
                TypedAnimal(context: writer).name = "Tom"
                TypedAnimal(context: writer).name = "Felix"
                try writer.save()
            }
            let reader = SQLiteStack.context(coordinator)
            try reader.performAndWait {
                _ = try reader.fetch(NSFetchRequest<TypedDog>(entityName: "Animal"))
            }
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("returned a TypedAnimal, not a TypedDog"))
    }

    @Test func noObjectsComeAsAnEmptyArrayOfEachType() throws {
        let context = try Self.filledContext()
        try context.performAndWait {
            func none<T>(_ type: T.Type) throws -> [T] {
                let request = NSFetchRequest<T>(entityName: "Animal")
                request.predicate = NSPredicate(value: false)
                return try context.fetch(request)
            }
            var results = try none(NSFetchRequestResult.self)
            #expect(results.isEmpty)
            results.append(["name": "Rex"] as NSDictionary)
            results.append(try none(NSManagedObject.self).first ?? TypedDog(context: context))
            #expect(results.count == 2)
            #expect(try none(TypedAnimal.self).isEmpty)
            #expect(try none(TypedDog.self).isEmpty)
        }
    }
}

class TypedAnimal: NSManagedObject {
    @Managed var name: String?
}

final class TypedDog: TypedAnimal {}
