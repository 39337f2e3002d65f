import Foundation
import OpenCoreDataShim
import Testing

/// objc.io's policy for its Moody 5 → 6 mapping: each country's `isoContinent` code becomes a Continent object, one
/// per code, found among the objects the destination context already has.
final class Country5ToCountry6Policy: NSEntityMigrationPolicy {
    override func createDestinationInstances(
        forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager
    ) throws {
        try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
        guard let code = sInstance.value(forKey: "isoContinent") as? NSNumber,
            let country = manager.destinationInstances(forEntityMappingName: mapping.name, sourceInstances: [sInstance])
                .first, let context = country.managedObjectContext
        else { return }
        let existing = context.registeredObjects.first {
            $0.entity.name == "Continent" && ($0.value(forKey: "numericISO3166Code") as? NSNumber) == code
        }
        let continent = existing ?? NSEntityDescription.insertNewObject(forEntityName: "Continent", into: context)
        continent.setValue(code, forKey: "numericISO3166Code")
        country.setValue(continent, forKey: "continent")
    }
}

/// objc.io's Moody model through versions 2 to 6 with the project's four Xcode mapping models (the expectations
/// are those of the project's MigrationsTests): a relationship made from a key path through another
/// (`$source.countries.@distinctUnionOfSets.moods`), an abstract parent entity dissolved, an entity folded into an
/// attribute (`$source.continent.numericISO3166Code`) and brought back by a policy.
@Suite(.enabled(if: SQLiteCorpus.isAvailable)) struct MoodyMigrationTests {
    /// Two continents, three countries, four moods, written with Moody 2.
    static func writeVersion2(_ model: NSManagedObjectModel, to url: URL) throws {
        let coordinator = try SQLiteStack.coordinator(model, at: url)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            @discardableResult func insert(_ entity: String, _ values: [String: Any]) -> NSManagedObject {
                let object = NSEntityDescription.insertNewObject(forEntityName: entity, into: context)
                for (key, value) in values { object.setValue(value, forKey: key) }
                return object
            }
            let now = Date(timeIntervalSinceReferenceDate: 464_684_661)
            let africa = insert("Continent", ["numericISO3166Code": 10_004, "updatedAt": now])
            let asia = insert("Continent", ["numericISO3166Code": 10_005, "updatedAt": now])
            let countries = [(231, africa), (710, africa), (704, asia)].map { code, continent in
                insert("Country", ["numericISO3166Code": code, "updatedAt": now, "continent": continent])
            }
            for (index, country) in [countries[0], countries[1], countries[1], countries[2]].enumerated() {
                insert("Mood", ["date": now, "remoteID": "mood-\(index)", "country": country])
            }
            try context.save()
        }
        try SQLiteStack.close(coordinator)
    }

    /// Each object's entity, a key attribute and its relationships' sizes.
    static func summary(_ url: URL, _ model: NSManagedObjectModel) throws -> [String] {
        let coordinator = try SQLiteStack.coordinator(model, at: url)
        defer { try? SQLiteStack.close(coordinator) }
        let context = SQLiteStack.context(coordinator)
        return try context.performAndWait {
            var lines: [String] = []
            for entity in model.entities where !entity.isAbstract {
                let request = NSFetchRequest<NSManagedObject>(entityName: entity.name!)
                request.includesSubentities = false
                for object in try context.fetch(request) {
                    var line = entity.name!
                    for key in ["numericISO3166Code", "isoContinent", "remoteID"]
                    where entity.propertiesByName[key] != nil {
                        line += " \(key)=\(object.value(forKey: key).map { "\($0)" } ?? "nil")"
                    }
                    for (name, relationship) in entity.relationshipsByName.sorted(by: { $0.key < $1.key }) {
                        let value = object.value(forKey: name)
                        let count =
                            relationship.isToMany
                            ? (value as? Set<NSManagedObject>)?.count ?? -1 : (value == nil ? 0 : 1)
                        line += " \(name)=\(count)"
                    }
                    lines.append(line)
                }
            }
            return lines.sorted()
        }
    }

    @Test func moodyMigratesThroughItsFourMappingModels() throws {
        let models = try MigrationCorpus.Moody.models()
        let bundle = try #require(Bundle(url: MigrationCorpus.Moody.folder))
        let directory = SQLiteTestDirectory()
        var current = directory.store("Moody2.sqlite")
        try Self.writeVersion2(models[1], to: current)
        var summaries: [Int: [String]] = [:]
        for version in 2...5 {
            let mapping = try #require(
                NSMappingModel(from: [bundle], forSourceModel: models[version - 1], destinationModel: models[version]))
            let next = directory.store("Moody\(version + 1).sqlite")
            try NSMigrationManager(sourceModel: models[version - 1], destinationModel: models[version]).migrateStore(
                from: current, type: .sqlite, mapping: mapping, to: next, type: .sqlite)
            summaries[version + 1] = try Self.summary(next, models[version])
            current = next
        }
        // 3: moods reach their continent directly, through their country.
        #expect(
            summaries[3] == [
                "Continent numericISO3166Code=10004 countries=2 moods=3",
                "Continent numericISO3166Code=10005 countries=1 moods=1",
                "Country numericISO3166Code=231 continent=1 moods=1",
                "Country numericISO3166Code=704 continent=1 moods=1",
                "Country numericISO3166Code=710 continent=1 moods=2",
                "Mood remoteID=mood-0 continent=1 country=1", "Mood remoteID=mood-1 continent=1 country=1",
                "Mood remoteID=mood-2 continent=1 country=1", "Mood remoteID=mood-3 continent=1 country=1",
            ])
        // 4: without their abstract parent, the same objects.
        #expect(summaries[4] == summaries[3])
        // 5: continents are gone; each country keeps its continent's code.
        #expect(
            summaries[5]?.filter { $0.hasPrefix("Country") } == [
                "Country numericISO3166Code=231 isoContinent=10004 moods=1",
                "Country numericISO3166Code=704 isoContinent=10005 moods=1",
                "Country numericISO3166Code=710 isoContinent=10004 moods=2",
            ])
        // 6: the policy makes one continent per code again.
        #expect(
            summaries[6]?.filter { !$0.hasPrefix("Mood") } == [
                "Continent numericISO3166Code=10004 countries=2", "Continent numericISO3166Code=10005 countries=1",
                "Country numericISO3166Code=231 continent=1 moods=1",
                "Country numericISO3166Code=704 continent=1 moods=1",
                "Country numericISO3166Code=710 continent=1 moods=2",
            ])
    }
}
