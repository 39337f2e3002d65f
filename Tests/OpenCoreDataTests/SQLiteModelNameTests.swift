import Foundation
import OpenCoreDataShim
import Testing

@testable import OpenCoreDataCore

/// Model names become SQL identifiers, and models are data a user may download: a name that is not a plain
/// identifier is refused — by the SQLite store before it touches a file, for a model built in code; by the model
/// readers, for a model file — and SQL is prepared one statement at a time, so nothing can smuggle in a second one.
@Suite struct SQLiteModelNameTests {
    /// Quotes, statement separators, comments, ATTACH, and characters that look like them.
    static let hostileNames = [
        #"Item"; DROP TABLE Z_METADATA; --"#,
        "Item; ATTACH DATABASE 'attached.sqlite' AS evil; CREATE TABLE evil.T(x)",
        "Item'", "Item`", "Item]", "Item/*comment*/", "Item--comment", "Item Name", "Item\n", "Item\0",
        "Item\u{FF02}",  // fullwidth quotation mark
        "Item\u{201D}",  // right double quotation mark
        "Item\u{037E}",  // Greek question mark, which looks like a semicolon
        "Item\u{FF1B}",  // fullwidth semicolon
        "Item\u{200B}",  // zero-width space
        "Item\u{202E}",  // right-to-left override
    ]

    /// Where a model name reaches SQL.
    enum Position: String, CaseIterable, CustomTestStringConvertible {
        case entity, attribute, toOne, manyToMany, derivedAttribute, fetchIndex
        var testDescription: String { rawValue }
    }

    /// A model of `Item` ⟷ `Tag` (to-one `tag`, many-to-many `labels`/`items`) with `name` in `position`.
    static func model(_ name: String, at position: Position) -> NSManagedObjectModel {
        func attribute(_ name: String) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = .stringAttributeType
            attribute.isOptional = true
            return attribute
        }
        func relationship(_ name: String, to destination: NSEntityDescription, toMany: Bool)
            -> NSRelationshipDescription
        {
            let relationship = NSRelationshipDescription()
            relationship.name = name
            relationship.destinationEntity = destination
            relationship.maxCount = toMany ? 0 : 1
            relationship.deleteRule = .nullifyDeleteRule
            return relationship
        }
        let item = NSEntityDescription()
        item.name = position == .entity ? name : "Item"
        let tag = NSEntityDescription()
        tag.name = "Tag"
        let title = attribute(position == .attribute ? name : "title")
        let toOne = relationship(position == .toOne ? name : "tag", to: tag, toMany: false)
        let tagItems = relationship("taggedItems", to: item, toMany: true)
        toOne.inverseRelationship = tagItems
        tagItems.inverseRelationship = toOne
        let labels = relationship(position == .manyToMany ? name : "labels", to: tag, toMany: true)
        let labelled = relationship("labelledItems", to: item, toMany: true)
        labels.inverseRelationship = labelled
        labelled.inverseRelationship = labels
        let count = NSDerivedAttributeDescription()
        count.name = position == .derivedAttribute ? name : "labelCount"
        count.attributeType = .integer64AttributeType
        count.isOptional = true
        count.derivationExpression = NSExpression(format: "taggedItems.@count")
        item.properties = [title, toOne, labels]
        tag.properties = [attribute("word"), tagItems, labelled, count]
        let indexName = position == .fetchIndex ? name : "byTitle"
        item.indexes = [
            NSFetchIndexDescription(
                name: indexName, elements: [NSFetchIndexElementDescription(property: title, collationType: .binary)])
        ]
        let model = NSManagedObjectModel()
        model.entities = [item, tag]
        return model
    }

    @Test func theModelWithPlainNamesIsStored() throws {
        let directory = SQLiteTestDirectory()
        for position in Position.allCases {
            let url = directory.store("\(position).sqlite")
            let coordinator = try SQLiteStack.coordinator(Self.model("Plain_Name1", at: position), at: url)
            try SQLiteStack.close(coordinator)
            #expect(FileManager.default.fileExists(atPath: url.path))
        }
    }

    @Test(arguments: Position.allCases)
    func hostileNamesAreRefusedBeforeAFileIsMade(_ position: Position) throws {
        let directory = SQLiteTestDirectory()
        for (number, name) in Self.hostileNames.enumerated() {
            let url = directory.store("\(number).sqlite")
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.model(name, at: position))
            let error = try #require(throws: NSError.self, "\(position) \(name.debugDescription)") {
                try coordinator.addPersistentStore(
                    ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
            }
            #expect(error.domain == NSCocoaErrorDomain)
            #expect(error.code == NSPersistentStoreOpenError)
            #expect(error.localizedDescription.contains("cannot be stored"), "\(error.localizedDescription)")
            switch position {
            case .entity: #expect(error.userInfo["entity"] as? String == name)
            case .fetchIndex: #expect(error.localizedDescription.contains("fetch index"))
            default: #expect(error.userInfo["property"] as? String == name)
            }
            #expect(!FileManager.default.fileExists(atPath: url.path), "\(position) \(name.debugDescription)")
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        #expect(left.isEmpty, "\(left)")
    }

    /// Letters of any script are plain identifiers to SQLite; a look-alike of a Latin letter names another table.
    @Test func namesInOtherScriptsAreStored() throws {
        let directory = SQLiteTestDirectory()
        let model = Self.model("Caf\u{E9}", at: .entity)
        let lookalike = NSEntityDescription()
        lookalike.name = "It\u{435}m"  // Cyrillic е
        let note = NSAttributeDescription()
        note.name = "\u{540D}\u{524D}"
        note.attributeType = .stringAttributeType
        note.isOptional = true
        lookalike.properties = [note]
        model.entities += [lookalike]
        let url = directory.store()
        let coordinator = try SQLiteStack.coordinator(model, at: url)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            let object = NSEntityDescription.insertNewObject(forEntityName: "It\u{435}m", into: context)
            object.setValue("x", forKey: "\u{540D}\u{524D}")
            try context.save()
            context.reset()
            let fetched = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "It\u{435}m"))
            #expect(fetched.first?.value(forKey: "\u{540D}\u{524D}") as? String == "x")
        }
        try SQLiteStack.close(coordinator)
        let tables = try RawSQLite.query(url, "SELECT name FROM sqlite_master WHERE type = 'table'").compactMap {
            $0[0].text
        }
        #expect(tables.contains("ZCAF\u{C9}"))
        #expect(tables.contains("ZIT\u{415}M"))
    }

    @Test func namesThatWouldShareATableAreRefused() throws {
        let directory = SQLiteTestDirectory()
        let pairs = [("Tag", "TAG"), ("Item", "_PRIMARYKEY"), ("Item", "_METADATA"), ("Stra\u{DF}e", "STRASSE")]
        for (first, second) in pairs {
            let model = NSManagedObjectModel()
            model.entities = [first, second].map { name in
                let entity = NSEntityDescription()
                entity.name = name
                return entity
            }
            let url = directory.store("\(second).sqlite")
            let error = try #require(throws: NSError.self, "\(first) and \(second)") {
                try SQLiteStack.coordinator(model, at: url)
            }
            #expect(error.code == NSPersistentStoreOpenError)
            #expect(error.localizedDescription.contains("would be named"), "\(error.localizedDescription)")
            #expect(!FileManager.default.fileExists(atPath: url.path))
        }
    }

    @Test func relationshipsThatWouldShareAJoinTableAreRefused() throws {
        let model = Self.model("Item", at: .entity)
        let item = try #require(model.entitiesByName["Item"])
        let tag = try #require(model.entitiesByName["Tag"])
        let twin = NSRelationshipDescription()
        twin.name = "LABELS"
        twin.destinationEntity = tag
        twin.maxCount = 0
        let back = NSRelationshipDescription()
        back.name = "Backlinks"
        back.destinationEntity = item
        back.maxCount = 0
        twin.inverseRelationship = back
        back.inverseRelationship = twin
        item.properties += [twin]
        tag.properties += [back]
        let directory = SQLiteTestDirectory()
        let error = try #require(throws: NSError.self) { try SQLiteStack.coordinator(model, at: directory.store()) }
        #expect(error.localizedDescription.contains("join table"), "\(error.localizedDescription)")
    }

    // MARK: Model files

    static func contents(entity: String = "Item", attribute: String = "title", index: String = "byTitle") -> String {
        func escaped(_ text: String) -> String {
            text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "\"", with: "&quot;")
                .replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: "\n", with: "&#10;")
        }
        return """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="\(escaped(entity))">
                    <attribute name="\(escaped(attribute))" optional="YES" attributeType="String"/>
                    <fetchIndex name="\(escaped(index))">
                        <fetchIndexElement property="\(escaped(attribute))" type="Binary" order="ascending"/>
                    </fetchIndex>
                </entity>
            </model>
            """
    }

    static func loadingError(_ contents: String) throws -> NSError {
        let directory = try ModelScratchDirectory()
        let url = try directory.write(contents, to: "Model.xcdatamodel/contents").deletingLastPathComponent()
        return try #require(throws: NSError.self) { try NSManagedObjectModel(validatingContentsOf: url) }
    }

    @Test func xcodeNamesLoad() throws {
        let directory = try ModelScratchDirectory()
        let url = try directory.write(Self.contents(entity: "Item_2", attribute: "t_1"), to: "M.xcdatamodel/contents")
        let model = try NSManagedObjectModel(validatingContentsOf: url.deletingLastPathComponent())
        #expect(model.entitiesByName["Item_2"]?.attributesByName["t_1"] != nil)
    }

    @Test func modelFilesWithHostileNamesAreRefused() throws {
        let hostile = Self.hostileNames.filter { !$0.contains("\0") } + ["Caf\u{E9}", "1Item"]
        for name in hostile + ["item", "_Item"] {
            let error = try Self.loadingError(Self.contents(entity: name))
            #expect(error.code == NSCoreDataError)
            #expect(error.userInfo["entity"] as? String == name)
            #expect(error.localizedDescription.contains("an entity name must start with an upper-case letter"))
        }
        for name in hostile.map({ $0.lowercased() }) + ["Title", "_title"] {
            let error = try Self.loadingError(Self.contents(attribute: name))
            #expect(error.code == NSCoreDataError)
            #expect(error.userInfo["property"] as? String == name)
            #expect(error.localizedDescription.contains("a property name must start with a lower-case letter"))
        }
        for name in hostile + ["_byTitle"] {
            let error = try Self.loadingError(Self.contents(index: name))
            #expect(error.code == NSCoreDataError)
            #expect(error.localizedDescription.contains("fetch index name"), "\(error.localizedDescription)")
        }
    }

    /// A compiled model (`.mom`, or the model a store caches) is checked the same way.
    @Test(arguments: [Position.entity, .attribute, .fetchIndex])
    func compiledModelsWithHostileNamesAreRefused(_ position: Position) throws {
        let model = Self.model(#"X"; DROP TABLE Z_METADATA"#, at: position)
        let data = try CompiledModelWriter.data(for: model, style: .compiledModel)
        let error = try #require(throws: NSError.self) {
            try CompiledModelReader.load(data, url: URL(fileURLWithPath: "/hostile.mom"), into: NSManagedObjectModel())
        }
        #expect(error.code == NSCoreDataError)
        #expect(error.localizedDescription.contains("must start with"), "\(error.localizedDescription)")
    }

    // MARK: One statement at a time

    @Test func aStringWithTwoStatementsIsNotRun() throws {
        let directory = SQLiteTestDirectory()
        let connection = try SQLiteConnection(path: directory.store().path, readOnly: false, create: true)
        defer { connection.close() }
        for sql in [
            "CREATE TABLE a (x); CREATE TABLE b (y)", "CREATE TABLE a (x); ATTACH DATABASE 'other' AS o",
            "CREATE TABLE a (x); garbage", "CREATE TABLE a (x) -- c\n; DROP TABLE Z", "",
            "-- only a comment",
        ] {
            let error = try #require(throws: SQLiteError.self, "\(sql)") { try connection.execute(sql) }
            #expect(error.code == 21, "\(error)")  // SQLITE_MISUSE
            #expect(throws: SQLiteError.self) { _ = try connection.prepare(sql) }
        }
        #expect(try connection.tableNames().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: directory.url.appendingPathComponent("other").path))
        let single = [
            "CREATE TABLE a (x);", "CREATE TABLE b (x) ; ;", "CREATE TABLE c (x); -- done", "CREATE TABLE d (x)/**/",
        ]
        for sql in single {
            try connection.execute(sql)
        }
        #expect(try connection.tableNames() == ["a", "b", "c", "d"])
    }
}
