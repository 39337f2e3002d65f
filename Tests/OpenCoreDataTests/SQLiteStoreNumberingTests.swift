import Foundation
import OpenCoreDataShim
import Testing

final class NumberingPuppy: NSManagedObject {}

/// An existing store's entity numbers are its own: `Z_PRIMARYKEY` says which `Z_ENT` belongs to which entity, and
/// names that embed numbers (to-one entity columns `Z<n>_<NAME>`, join tables `Z_<n><NAME>`) follow them. Stores
/// written by older Xcode versions, or by models that gained entities in later versions, are numbered in other
/// orders than a new store's; they must open with every row as its own entity.
@Suite struct SQLiteStoreNumberingTests {
    /// Animal > Dog > Puppy, Animal > Cat; Keeper ⟷ Tag (many-to-many); Keeper → favorite Animal (to-one into a
    /// hierarchy, so with an entity column); Animal → keeper (to-one) ⟷ Keeper.animals.
    static func model() -> NSManagedObjectModel {
        let model = SQLiteCorpusModels.model([
            .init(
                name: "Animal",
                properties: [
                    .attribute("name", .stringAttributeType), .toOne("keeper", "Keeper", inverse: "animals"),
                    .toMany("fans", "Keeper", inverse: "favorite"),
                ]),
            .init(
                name: "Cat", parent: "Animal",
                properties: [.attribute("lives", .integer16AttributeType), .attribute("size", .stringAttributeType)]),
            .init(
                name: "Dog", parent: "Animal",
                properties: [.attribute("breed", .stringAttributeType), .attribute("size", .stringAttributeType)]),
            .init(name: "Puppy", parent: "Dog", properties: [.attribute("weeks", .integer16AttributeType)]),
            .init(
                name: "Keeper",
                properties: [
                    .attribute("name", .stringAttributeType), .toMany("animals", "Animal", inverse: "keeper"),
                    .toOne("favorite", "Animal", inverse: "fans"), .toMany("tags", "Tag", inverse: "keepers"),
                ]),
            .init(
                name: "Tag",
                properties: [.attribute("label", .stringAttributeType), .toMany("keepers", "Keeper", inverse: "tags")]
            ),
        ])
        model.entitiesByName["Puppy"]?.managedObjectClassName = String(reflecting: NumberingPuppy.self)
        return model
    }

    static let sharedModel = model()

    /// The numbering a new store gives: depth first, siblings by name.
    static let newStoreNumbers = ["Animal": 1, "Cat": 2, "Dog": 3, "Puppy": 4, "Keeper": 5, "Tag": 6]
    /// Another numbering, as an older store might have: hierarchies interleaved, so that Animal's kinds are
    /// {2, 3, 5, 6} and Dog's {3, 6}.
    static let storeNumbers = ["Keeper": 1, "Animal": 2, "Dog": 3, "Tag": 4, "Cat": 5, "Puppy": 6]

    /// Writes a store: two keepers, two tags, one animal of each kind.
    static func write(_ url: URL) throws {
        let coordinator = try SQLiteStack.coordinator(sharedModel, at: url)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            func insert(_ entity: String, _ values: [String: Any]) -> NSManagedObject {
                let object = NSEntityDescription.insertNewObject(forEntityName: entity, into: context)
                for (key, value) in values { object.setValue(value, forKey: key) }
                return object
            }
            let anna = insert("Keeper", ["name": "Anna"])
            let ben = insert("Keeper", ["name": "Ben"])
            let wild = insert("Tag", ["label": "wild"])
            let tame = insert("Tag", ["label": "tame"])
            let rex = insert("Dog", ["name": "Rex", "breed": "collie", "size": "large", "keeper": anna])
            _ = insert("Cat", ["name": "Tom", "lives": 9, "size": "small", "keeper": ben])
            let bit = insert("Puppy", ["name": "Bit", "breed": "pug", "weeks": 8, "keeper": anna])
            _ = insert("Animal", ["name": "Blob"])
            anna.setValue(bit, forKey: "favorite")
            ben.setValue(rex, forKey: "favorite")
            anna.setValue(Set([wild, tame]), forKey: "tags")
            ben.setValue(Set([wild]), forKey: "tags")
            try context.save()
        }
        try SQLiteStack.close(coordinator)
    }

    /// Renumbers the store at `url` consistently, as Apple's framework would have written it with `numbers`:
    /// `Z_PRIMARYKEY`, every `Z_ENT`, the `Z<n>_<NAME>` entity columns (names and values) and the join tables
    /// `Z_<n><NAME>` with their columns.
    static func renumber(_ url: URL, to numbers: [String: Int]) throws {
        let old = try RawSQLite.query(url, "SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY WHERE Z_ENT < 16000")
        var map: [Int64: Int64] = [:]
        for row in old {
            guard let number = row[0].integer, let name = row[1].text, let new = numbers[name] else { continue }
            map[number] = Int64(new)
        }
        func mapped(_ expression: String) -> String {
            "CASE \(expression) " + map.map { "WHEN \($0.key) THEN \($0.value)" }.joined(separator: " ") + " END"
        }
        func renamed(_ name: String, prefix: String, suffix: String = "") -> String? {
            // `<prefix><n><suffix><REST>` with n an old number: the same with the new number.
            guard name.hasPrefix(prefix) else { return nil }
            let digits = name.dropFirst(prefix.count).prefix(while: \.isNumber)
            guard let number = Int64(digits), let new = map[number],
                name.dropFirst(prefix.count + digits.count).hasPrefix(suffix)
            else { return nil }
            return prefix + String(new) + name.dropFirst(prefix.count + digits.count)
        }
        var sql = [
            "UPDATE Z_PRIMARYKEY SET Z_ENT = Z_ENT + 100000 WHERE Z_ENT < 16000",
            "UPDATE Z_PRIMARYKEY SET Z_ENT = \(mapped("Z_ENT - 100000")), Z_SUPER = \(mapped("Z_SUPER"))"
                + " WHERE Z_ENT >= 100000",
        ]
        let tables = try RawSQLite.query(url, "SELECT name FROM sqlite_master WHERE type = 'table'").compactMap {
            $0[0].text
        }
        for table in tables where table.hasPrefix("Z") && !table.hasPrefix("Z_") {
            sql.append("UPDATE \(table) SET Z_ENT = \(mapped("Z_ENT"))")
            for column in try RawSQLite.query(url, "PRAGMA table_info(\(table))").compactMap({ $0[1].text }) {
                guard let new = renamed(column, prefix: "Z", suffix: "_") else { continue }
                sql.append("ALTER TABLE \(table) RENAME COLUMN \(column) TO \(new)_RENUMBERED")
                sql.append("UPDATE \(table) SET \(new)_RENUMBERED = \(mapped("\(new)_RENUMBERED"))")
            }
        }
        var columnsToFinish: [(table: String, column: String)] = []
        for table in tables where table.hasPrefix("Z_") {
            guard let new = renamed(table, prefix: "Z_") else { continue }
            sql.append("ALTER TABLE \(table) RENAME TO \(new)_RENUMBERED")
            for column in try RawSQLite.query(url, "PRAGMA table_info(\(table))").compactMap({ $0[1].text }) {
                guard let newColumn = renamed(column, prefix: "Z_") else { continue }
                sql.append("ALTER TABLE \(new)_RENUMBERED RENAME COLUMN \(column) TO \(newColumn)_RENUMBERED")
                columnsToFinish.append(("\(new)", "\(newColumn)"))
            }
            sql.append("ALTER TABLE \(new)_RENUMBERED RENAME TO \(new)")
        }
        for (table, column) in columnsToFinish {
            sql.append("ALTER TABLE \(table) RENAME COLUMN \(column)_RENUMBERED TO \(column)")
        }
        for table in tables where table.hasPrefix("Z") && !table.hasPrefix("Z_") {
            for column in try RawSQLite.query(url, "PRAGMA table_info(\(table))").compactMap({ $0[1].text }) {
                guard let new = renamed(column, prefix: "Z", suffix: "_") else { continue }
                sql.append("ALTER TABLE \(table) RENAME COLUMN \(new)_RENUMBERED TO \(new)")
            }
        }
        try RawSQLite.execute(url, "BEGIN; " + sql.joined(separator: "; ") + "; COMMIT")
    }

    /// Every object of the store, by name: its entity's name and class, and its relationships' names.
    /// Writes the store at `url`, reads what it holds, then renumbers it with `storeNumbers`; returns what it held.
    static func writeRenumbered(_ url: URL) throws -> [String: String] {
        try write(url)
        let expected = try SQLiteStack.releasingObjects {
            let coordinator = try SQLiteStack.coordinator(sharedModel, at: url)
            defer { try? SQLiteStack.close(coordinator) }
            return try contents(coordinator)
        }
        try renumber(url, to: storeNumbers)
        return expected
    }

    static func contents(_ coordinator: NSPersistentStoreCoordinator) throws -> [String: String] {
        let context = SQLiteStack.context(coordinator)
        func name(_ object: NSManagedObject) -> String {
            object.value(forKey: object.entity.name == "Tag" ? "label" : "name") as? String ?? "?"
        }
        return try context.performAndWait {
            var contents: [String: String] = [:]
            for entity in ["Animal", "Keeper", "Tag"] {
                for object in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: entity)) {
                    var parts = [object.entity.name ?? "?", String(describing: type(of: object))]
                    for key in object.entity.relationshipsByName.keys.sorted() {
                        let value = object.value(forKey: key)
                        let names: [String]
                        if let set = value as? Set<NSManagedObject> {
                            names = set.map(name)
                        } else if let single = value as? NSManagedObject {
                            names = [name(single)]
                        } else {
                            names = []
                        }
                        parts.append("\(key)=\(names.sorted().joined(separator: ","))")
                    }
                    contents[name(object)] = parts.joined(separator: " ")
                }
            }
            return contents
        }
    }

    @Test func aNewStoreIsNumberedDepthFirstWithSiblingsByNameAsApplesAre() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        try Self.write(url)
        let rows = try RawSQLite.query(url, "SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY ORDER BY Z_ENT")
        #expect(
            rows.map { "\($0[0]) \($0[1].text ?? "") \($0[2])" } == [
                "1 Animal 0", "2 Cat 1", "3 Dog 1", "4 Puppy 3", "5 Keeper 0", "6 Tag 0",
            ])
        let tables = Set(
            try RawSQLite.query(url, "SELECT name FROM sqlite_master WHERE type = 'table'").compactMap {
                $0[0].text
            })
        #expect(tables.contains("Z_5TAGS"))
        let keeperColumns = try RawSQLite.query(url, "PRAGMA table_info(ZKEEPER)").compactMap { $0[1].text }
        #expect(keeperColumns.contains("Z1_FAVORITE"))
    }

    @Test func aStoreNumberedOtherwiseOpensWithEveryRowAsItsOwnEntity() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let expected = try Self.writeRenumbered(url)
        // What Apple's framework would have written with that numbering.
        let tables = Set(
            try RawSQLite.query(url, "SELECT name FROM sqlite_master WHERE type = 'table'").compactMap {
                $0[0].text
            })
        #expect(tables.contains("Z_1TAGS") && !tables.contains("Z_5TAGS"))
        #expect(
            try RawSQLite.query(url, "PRAGMA table_info(ZKEEPER)").compactMap { $0[1].text }.contains("Z2_FAVORITE"))
        #expect(try RawSQLite.query(url, "SELECT Z_ENT FROM ZANIMAL WHERE ZNAME = 'Bit'") == [[.integer(6)]])

        let coordinator = try SQLiteStack.coordinator(Self.sharedModel, at: url)
        defer { try? SQLiteStack.close(coordinator) }
        let contents = try Self.contents(coordinator)
        #expect(contents == expected)
        #expect(contents["Bit"]?.hasPrefix("Puppy NumberingPuppy") == true)
        #expect(contents["Anna"] == "Keeper NSManagedObject animals=Bit,Rex favorite=Bit tags=tame,wild")

        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            // Subentity fetches select the store's numbers, which are not contiguous here.
            let dogs = NSFetchRequest<NSManagedObject>(entityName: "Dog")
            #expect(Set(try context.fetch(dogs).compactMap { $0.value(forKey: "name") as? String }) == ["Rex", "Bit"])
            dogs.includesSubentities = false
            #expect(try context.fetch(dogs).compactMap { $0.value(forKey: "name") as? String } == ["Rex"])
            #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Animal")) == 4)
            let cats = NSFetchRequest<NSManagedObject>(entityName: "Cat")
            #expect(try context.fetch(cats).compactMap { $0.value(forKey: "name") as? String } == ["Tom"])
            // A predicate through the to-one into the hierarchy.
            let fans = NSFetchRequest<NSManagedObject>(entityName: "Keeper")
            fans.predicate = NSPredicate(format: "favorite.name == %@", "Bit")
            #expect(try context.fetch(fans).compactMap { $0.value(forKey: "name") as? String } == ["Anna"])

            // New rows get the store's numbers, and keys past the store's Z_MAX of their root entity.
            let keeper = NSEntityDescription.insertNewObject(forEntityName: "Keeper", into: context)
            keeper.setValue("Cleo", forKey: "name")
            let puppy = NSEntityDescription.insertNewObject(forEntityName: "Puppy", into: context)
            puppy.setValue("Dot", forKey: "name")
            keeper.setValue(puppy, forKey: "favorite")
            let tags = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Tag"))
            keeper.setValue(Set(tags), forKey: "tags")
            try context.save()
        }
        #expect(
            try RawSQLite.query(url, "SELECT Z_ENT, Z_PK FROM ZANIMAL WHERE ZNAME = 'Dot'") == [
                [.integer(6), .integer(5)]
            ])
        #expect(
            try RawSQLite.query(url, "SELECT Z_ENT, Z2_FAVORITE FROM ZKEEPER WHERE ZNAME = 'Cleo'") == [
                [.integer(1), .integer(6)]
            ])
        #expect(
            try RawSQLite.query(url, "SELECT Z_ENT, Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT IN (1, 2) ORDER BY Z_ENT") == [
                [.integer(1), .integer(3)], [.integer(2), .integer(5)],
            ])
        #expect(try RawSQLite.query(url, "SELECT COUNT(*) FROM Z_1TAGS WHERE Z_1KEEPERS = 3") == [[.integer(2)]])

        // Another coordinator reads the new rows back as they were written.
        let again = try SQLiteStack.coordinator(Self.sharedModel, at: url)
        defer { try? SQLiteStack.close(again) }
        let reread = try Self.contents(again)
        #expect(reread["Dot"]?.hasPrefix("Puppy NumberingPuppy") == true)
        #expect(reread["Cleo"] == "Keeper NSManagedObject animals= favorite=Dot tags=tame,wild")
    }

    @Test func aStoreNumberedOtherwiseMigratesWithEveryRowAsItsOwnEntity() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let expected = try Self.writeRenumbered(url)
        // The next model version gives Dog an attribute: lightweight migration moves the rows to a new table.
        let next = Self.model()
        let age = NSAttributeDescription()
        age.name = "age"
        age.attributeType = .integer16AttributeType
        age.isOptional = true
        let dog = try #require(next.entitiesByName["Dog"])
        dog.properties = dog.properties.filter { $0.entity === dog } + [age]
        let coordinator = try SQLiteStack.coordinator(
            next, at: url,
            options: [NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true])
        defer { try? SQLiteStack.close(coordinator) }
        #expect(try Self.contents(coordinator) == expected)
    }

    @Test func aRowMayNameItsEntityByItsRenamingIdentifier() throws {
        // Apple's in-place migration renames an entity without renaming its Z_PRIMARYKEY row.
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        try Self.write(url)
        try RawSQLite.execute(url, "UPDATE Z_PRIMARYKEY SET Z_NAME = 'Kitten' WHERE Z_NAME = 'Cat'")
        let renamed = Self.model()
        renamed.entitiesByName["Cat"]?.renamingIdentifier = "Kitten"
        let coordinator = try SQLiteStack.coordinator(renamed, at: url)
        defer { try? SQLiteStack.close(coordinator) }
        #expect(try Self.contents(coordinator)["Tom"]?.hasPrefix("Cat NSManagedObject") == true)
    }

    @Test func sameNamedColumnsOfSiblingsAreTheStoresOwn() throws {
        // Cat and Dog both have `size`: a new store gives Cat (first by name) ZSIZE and Dog ZSIZE1. A store that
        // numbers Dog before Cat was made visiting Dog first, so there Dog's column is ZSIZE.
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        try Self.write(url)
        #expect(
            try RawSQLite.query(url, "SELECT ZSIZE, ZSIZE1 FROM ZANIMAL WHERE ZNAME = 'Tom'") == [
                [.text("small"), .null]
            ])
        try Self.renumber(url, to: Self.storeNumbers)
        try RawSQLite.execute(
            url,
            """
            ALTER TABLE ZANIMAL RENAME COLUMN ZSIZE TO ZSIZE_SWAP; ALTER TABLE ZANIMAL RENAME COLUMN ZSIZE1 TO ZSIZE; \
            ALTER TABLE ZANIMAL RENAME COLUMN ZSIZE_SWAP TO ZSIZE1
            """)
        let coordinator = try SQLiteStack.coordinator(Self.sharedModel, at: url)
        defer { try? SQLiteStack.close(coordinator) }
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            var sizes: [String: String] = [:]
            for animal in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Animal")) {
                guard let size = animal.entity.attributesByName["size"] != nil ? animal.value(forKey: "size") : nil
                else { continue }
                sizes[animal.value(forKey: "name") as? String ?? "?"] = size as? String
            }
            #expect(sizes == ["Tom": "small", "Rex": "large"])
        }
    }

    @Test func aStoreThatNumbersAnEntityTheModelLacksIsRefusedUntouched() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        try Self.write(url)
        try RawSQLite.execute(url, "INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (7, 'Ghost', 0, 0)")
        let before = try Data(contentsOf: url)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.sharedModel)
        #expect {
            try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
        } throws: { error in
            let error = error as NSError
            return error.domain == NSCocoaErrorDomain && error.code == NSPersistentStoreIncompatibleVersionHashError
                && error.localizedDescription.contains("Ghost") && error.userInfo["metadata"] is [String: Any]
        }
        #expect(coordinator.persistentStores.isEmpty)
        #expect(try Data(contentsOf: url) == before)
    }

    @Test func aStoreWhoseNumberingGivesAnotherSuperentityIsRefused() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        try Self.write(url)
        // Puppy (4) under Cat (2) instead of Dog (3): its rows would be read with the wrong inheritance.
        try RawSQLite.execute(url, "UPDATE Z_PRIMARYKEY SET Z_SUPER = 2 WHERE Z_NAME = 'Puppy'")
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.sharedModel)
        #expect {
            try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
        } throws: { error in
            (error as NSError).code == NSPersistentStoreIncompatibleVersionHashError
                && (error as NSError).localizedDescription.contains("Puppy")
        }
    }

    @Test func aRowWhoseEntityNumberNamesNoEntityFailsTheFetchNamingTheRow() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        try Self.write(url)
        try RawSQLite.execute(url, "UPDATE ZANIMAL SET Z_ENT = 9 WHERE ZNAME = 'Tom'")
        let coordinator = try SQLiteStack.coordinator(Self.sharedModel, at: url)
        defer { try? SQLiteStack.close(coordinator) }
        let context = SQLiteStack.context(coordinator)
        _ = context.performAndWait {
            #expect {
                try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Animal"))
            } throws: { error in
                (error as NSError).code == CocoaError.Code.fileReadCorruptFile.rawValue
                    && (error as NSError).localizedDescription.contains("Z_ENT 9")
            }
        }
    }
}
