#if !canImport(CoreData)
import Foundation
import OpenCoreDataShim
import Testing

/// The hostile-input harness: predicates from the grammar and mutated from it, mutated model files and mutated store
/// files, each run through the public API. A crash fails the run (the test process dies); a property broken
/// without a crash counts as failed. Each fuzzer prints "tried N, failed M".
///
/// `swift test` runs a short pass. The long pass runs by hand with larger counts:
///
/// ```
/// OPENCOREDATA_FUZZ_PREDICATES=1000000 OPENCOREDATA_FUZZ_MODELS=100000 OPENCOREDATA_FUZZ_STORES=10000 \
///     OPENCOREDATA_FUZZ_KILLS=1000 swift test --filter FuzzHarnessTests
/// ```
///
/// `OPENCOREDATA_FUZZ_SEED` changes the seed (default 1), so that a long pass can go on where another stopped.
@Suite struct FuzzHarnessTests {
    static func count(_ variable: String, default value: Int) -> Int {
        ProcessInfo.processInfo.environment[variable].flatMap(Int.init) ?? value
    }

    static let seed = UInt64(count("OPENCOREDATA_FUZZ_SEED", default: 1))

    static func report(_ fuzzer: String, tried: Int, failed: [String]) {
        print("fuzz \(fuzzer): tried \(tried), failed \(failed.count)")
        for failure in failed.prefix(10) { print("  \(failure)") }
    }

    // MARK: Predicates

    /// A model whose attributes have the names the grammar uses, so that generated predicates reach SQL.
    static func thingModel() -> NSManagedObjectModel {
        let thing = NSEntityDescription()
        thing.name = "Thing"
        func attribute(_ name: String, _ type: NSAttributeType) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.isOptional = true
            return attribute
        }
        let tags = NSRelationshipDescription()
        tags.name = "tags"
        tags.destinationEntity = thing
        tags.minCount = 0
        tags.maxCount = 0
        tags.isOptional = true
        let owner = NSRelationshipDescription()
        owner.name = "owner"
        owner.destinationEntity = thing
        owner.maxCount = 1
        owner.isOptional = true
        let items = NSRelationshipDescription()
        items.name = "items"
        items.destinationEntity = thing
        items.maxCount = 0
        items.isOptional = true
        owner.inverseRelationship = items
        items.inverseRelationship = owner
        thing.properties = [
            attribute("a", .integer64AttributeType), attribute("b", .stringAttributeType),
            attribute("name", .stringAttributeType), attribute("value", .doubleAttributeType),
            attribute("k0", .integer32AttributeType), attribute("date", .dateAttributeType),
            attribute("x_1", .stringAttributeType), tags, owner, items,
        ]
        let model = NSManagedObjectModel()
        model.entities = [thing]
        return model
    }

    /// Changes one to three characters of `format`: deletes, inserts a piece of the grammar's vocabulary, or
    /// replaces one with a printable ASCII character.
    static func mutate(_ format: String, _ random: inout FuzzRandom) -> String {
        var characters = Array(format)
        let pieces =
            PredicateGrammar.stringPieces + PredicateGrammar.binaryOperators + [
                "(", ")", "{", "}", "[", "]", ",", ".", "'", "\"", "\\", "$", "%", "@", "#", "==", "AND", "NOT", "ANY",
                "SUBQUERY(", "FUNCTION(", "CAST(", "TERNARY(", ":=", "[c]", "\u{0}",
            ]
        for _ in 0..<random.int(1...3) {
            let position = random.int(0...characters.count)
            switch random.int(0...2) {
            case 0 where position < characters.count: characters.remove(at: position)
            case 1: characters.insert(contentsOf: random.pick(pieces), at: position)
            default:
                if position < characters.count {
                    characters[position] = Character(Unicode.Scalar(UInt8(random.int(32...126))))
                }
            }
        }
        return String(characters)
    }

    @Test func predicates() throws {
        let total = Self.count("OPENCOREDATA_FUZZ_PREDICATES", default: 20_000)
        var random = FuzzRandom(seed: Self.seed)
        var failed: [String] = []
        let directory = SQLiteTestDirectory()
        let coordinator = try SQLiteStack.coordinator(Self.thingModel(), at: directory.store())
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            // Saved objects answer in SQL, unsaved ones in memory: a fetch exercises both.
            for index in 0..<4 {
                let thing = NSEntityDescription.insertNewObject(forEntityName: "Thing", into: context)
                thing.setValue(Int64(index), forKey: "a")
                thing.setValue("name \(index)", forKey: "name")
                if index == 2 { try context.save() }
            }
        }
        for iteration in 0..<total {
            var grammar = PredicateGrammar(seed: Self.seed &* 1_000_003 &+ UInt64(iteration))
            var format = grammar.predicate()
            if iteration % 2 == 1 { format = Self.mutate(format, &random) }
            if let failure = PredicateRoundTripTests.roundTripFailure(format) {
                failed.append(failure)
                continue
            }
            _ = try? NSExpression(validatingFormat: format, argumentArray: [])
            // Every tenth that parses is fetched: SQL generation and evaluation may throw, never stop.
            guard iteration % 10 == 0, let predicate = try? NSPredicate(validatingFormat: format, argumentArray: nil)
            else { continue }
            context.performAndWait {
                let request = NSFetchRequest<NSManagedObject>(entityName: "Thing")
                request.predicate = predicate
                do {
                    _ = try context.fetch(request)
                } catch {
                    if (error as NSError).domain != NSCocoaErrorDomain {
                        failed.append("fetching \(format) threw \(error)")
                    }
                }
            }
        }
        Self.report("predicates", tried: total, failed: failed)
        #expect(failed.isEmpty)
    }

    // MARK: Model files

    static let modelSnippets = [
        "<entity name=\"X\">", "</entity>", "<attribute name=\"y\" attributeType=\"String\"/>", " parentEntity=\"",
        " destinationEntity=\"", " inverseName=\"", " toMany=\"YES\"", " derived=\"YES\" derivationExpression=\"",
        "\"", "<", ">", "/>", "&amp;", "&#0;", "<![CDATA[", "<!--", "-->", "<!DOCTYPE x [<!ENTITY e \"e\">]>", "&e;",
        " name=\"; DROP TABLE Z_METADATA; --\"", " name=\"Z_PK\"", " attributeType=\"Transformable\"",
        " valueTransformerName=\"", " minValueString=\"", " defaultValueString=\"", "<userInfo>", "</userInfo>",
        "\u{0}", "\u{FEFF}", "é",
    ]

    /// `bytes` with a few random changes: bytes replaced, a range cut or repeated, a snippet of model XML inserted,
    /// or the end cut off.
    static func mutate(_ bytes: [UInt8], _ random: inout FuzzRandom, snippets: [String]) -> [UInt8] {
        var bytes = bytes
        for _ in 0..<random.int(1...3) where !bytes.isEmpty {
            let position = random.int(0...(bytes.count - 1))
            switch random.int(0...5) {
            case 0, 1:
                bytes[position] = UInt8(random.int(0...255))
            case 2:
                bytes.removeSubrange(position..<min(bytes.count, position + random.int(1...64)))
            case 3:
                let range = position..<min(bytes.count, position + random.int(1...256))
                bytes.insert(contentsOf: Array(bytes[range]), at: random.int(0...bytes.count))
            case 4 where !snippets.isEmpty:
                bytes.insert(contentsOf: Array(random.pick(snippets).utf8), at: position)
            default:
                bytes.removeSubrange(position..<bytes.count)
            }
        }
        return bytes
    }

    @Test func modelFiles() throws {
        let total = Self.count("OPENCOREDATA_FUZZ_MODELS", default: 600)
        let xmlSources = try ModelCorpus.modelVersions.map {
            Array(try Data(contentsOf: $0.appendingPathComponent("contents")))
        }
        let compiledSources = try ModelCorpus.compiledModels.flatMap { momd in
            try FileManager.default.contentsOfDirectory(at: momd, includingPropertiesForKeys: nil)
                .filter { $0.pathExtension == "mom" }.map { Array(try Data(contentsOf: $0)) }
        }
        try #require(!xmlSources.isEmpty && !compiledSources.isEmpty)
        var random = FuzzRandom(seed: Self.seed)
        var failed: [String] = []
        var loaded = 0
        let directory = try ModelScratchDirectory()
        let xmlURL = directory.url.appendingPathComponent("Fuzz.xcdatamodel")
        try FileManager.default.createDirectory(at: xmlURL, withIntermediateDirectories: true)
        let momURL = directory.url.appendingPathComponent("Fuzz.mom")
        let storeDirectory = SQLiteTestDirectory()
        for iteration in 0..<total {
            let compiled = iteration % 3 == 2
            let source = compiled ? random.pick(compiledSources) : random.pick(xmlSources)
            let url = compiled ? momURL : xmlURL
            try Data(Self.mutate(source, &random, snippets: compiled ? [] : Self.modelSnippets)).write(
                to: compiled ? momURL : xmlURL.appendingPathComponent("contents"))
            let model: NSManagedObjectModel
            do {
                model = try NSManagedObjectModel(validatingContentsOf: url)
            } catch {
                if (error as NSError).domain != NSCocoaErrorDomain { failed.append("loading threw \(error)") }
                continue
            }
            loaded += 1
            // A model that loads makes a store, or is refused by it with an error.
            let storeURL = storeDirectory.store("\(iteration).sqlite")
            do {
                let coordinator = try SQLiteStack.coordinator(model, at: storeURL)
                try SQLiteStack.close(coordinator)
            } catch {
                if (error as NSError).domain != NSCocoaErrorDomain { failed.append("adding a store threw \(error)") }
            }
            try? FileManager.default.removeItem(at: storeURL)
        }
        Self.report("model files", tried: total, failed: failed)
        print("  (\(loaded) of them loaded)")
        #expect(failed.isEmpty)
    }

    // MARK: Store files

    /// A store of the sample model with a few rows of every entity, in one file (rollback journal).
    static func makeStore(at url: URL) throws {
        let coordinator = try SQLiteStack.coordinator(
            SQLiteSampleModel.make(), at: url, options: [NSSQLitePragmasOption: ["journal_mode": "DELETE"]])
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            var tags: [NSManagedObject] = []
            for index in 0..<3 {
                let tag = NSEntityDescription.insertNewObject(forEntityName: "Tag", into: context)
                tag.setValue("tag \(index)", forKey: "label")
                tags.append(tag)
            }
            for index in 0..<3 {
                let owner = NSEntityDescription.insertNewObject(forEntityName: "Owner", into: context)
                owner.setValue("owner \(index)", forKey: "name")
                let dog = NSEntityDescription.insertNewObject(forEntityName: "Dog", into: context)
                dog.setValue("dog \(index)", forKey: "name")
                for number in 0..<4 {
                    let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
                    item.setValue("item \(index).\(number)", forKey: "name")
                    item.setValue(Int64(number), forKey: "int64")
                    item.setValue(Date(timeIntervalSinceReferenceDate: Double(number)), forKey: "date")
                    item.setValue(UUID(), forKey: "uuid")
                    item.setValue(owner, forKey: "owner")
                    item.setValue(dog, forKey: "pet")
                    item.setValue(Set(tags.prefix(number)), forKey: "tags")
                }
            }
            try context.save()
        }
        try SQLiteStack.close(coordinator)
    }

    static let tables = ["ZITEM", "ZOWNER", "ZANIMAL", "ZTAG", "ZLIST", "ZPROFILE"]
    static let columns = ["Z_ENT", "Z_PK", "Z_OPT", "ZNAME", "ZOWNER", "ZPET", "ZINT64", "ZDATE", "ZUUID", "ZLABEL"]
    static let values = [
        "NULL", "0", "-1", "99", "9223372036854775807", "1.5", "'text'", "x'00'", "x'0102030405060708090A0B0C0D0E0F10'",
        "'9'", "1e308", "zeroblob(100)", "''",
    ]

    /// SQL that makes the store's contents disagree with its model or with themselves.
    static func damage(_ random: inout FuzzRandom) -> String {
        switch random.int(0...5) {
        case 0, 1, 2:
            return "UPDATE \(random.pick(tables)) SET \(random.pick(columns)) = \(random.pick(values)) "
                + "WHERE Z_PK = \(random.int(1...12))"
        case 3: return "DELETE FROM \(random.pick(tables + ["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"]))"
        case 4: return "UPDATE Z_PRIMARYKEY SET Z_MAX = \(random.pick(values))"
        default: return "UPDATE Z_METADATA SET Z_PLIST = \(random.pick(values))"
        }
    }

    @Test func storeFiles() throws {
        let total = Self.count("OPENCOREDATA_FUZZ_STORES", default: 150)
        let directory = SQLiteTestDirectory()
        let original = directory.store("Original.sqlite")
        try Self.makeStore(at: original)
        let bytes = Array(try Data(contentsOf: original))
        let model = SQLiteSampleModel.make()
        var random = FuzzRandom(seed: Self.seed)
        var failed: [String] = []
        var opened = 0
        for iteration in 0..<total {
            let url = directory.store("\(iteration).sqlite")
            let change: String
            if iteration % 2 == 0 {
                change = "bytes"
                try Data(Self.mutate(bytes, &random, snippets: ["SQLite format 3\u{0}", "\u{0}\u{0}\u{0}\u{0}"])).write(
                    to: url)
            } else {
                try Data(bytes).write(to: url)
                change = (0..<random.int(1...3)).map { _ in Self.damage(&random) }.joined(separator: "; ")
                // A statement SQLite refuses (a column the table lacks) leaves the copy as it was.
                try? RawSQLite.execute(url, change)
            }
            let before = try Data(contentsOf: url)
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            do {
                try coordinator.addPersistentStore(
                    ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
            } catch {
                if (error as NSError).domain != NSCocoaErrorDomain {
                    failed.append("\(change): opening threw \(error)")
                }
                if try Data(contentsOf: url) != before { failed.append("\(change): a failed open changed the file") }
                continue
            }
            opened += 1
            let context = SQLiteStack.context(coordinator)
            context.performAndWait {
                for entity in ["Item", "Owner", "Animal", "Tag", "List", "Profile"] {
                    do {
                        for object in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: entity)) {
                            // Attributes only: firing a fault whose row is gone stops, as Apple's raise.
                            for name in object.entity.attributesByName.keys { _ = object.value(forKey: name) }
                        }
                    } catch {
                        if (error as NSError).domain != NSCocoaErrorDomain {
                            failed.append("\(change): fetching \(entity) threw \(error)")
                        }
                    }
                }
            }
            try? SQLiteStack.close(coordinator)
        }
        Self.report("store files", tried: total, failed: failed)
        print("  (\(opened) of them opened)")
        #expect(failed.isEmpty)
    }

    // MARK: Kills

    /// A child process saving in a loop, killed with SIGKILL at a random moment, in every journal mode in turn; the
    /// store must then open with every save that returned and no part of another (SQLiteCrashTests).
    @Test func kills() async throws {
        let total = Self.count("OPENCOREDATA_FUZZ_KILLS", default: 4)
        var random = FuzzRandom(seed: Self.seed &+ 4)
        var failed: [String] = []
        for index in 0..<total {
            let settings = SQLiteJournalSetting.all
            let setting = settings[index % settings.count]
            let delay = 10 + Int(random.next() % 400)
            failed += try await SQLiteCrashTests.killWhileSaving(setting, afterMilliseconds: delay)
        }
        Self.report("kills", tried: total, failed: failed)
        #expect(failed.isEmpty)
    }
}
#endif
