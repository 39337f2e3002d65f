import Foundation
import OpenCoreDataShim
import Testing

#if !canImport(CoreData)
@_spi(Testing) import OpenCoreDataCore
#endif

/// Batch requests in the SQLite store's file: set-based statements whose number does not grow with the rows, values
/// bound rather than written into SQL, versions raised as Core Data raises them, and keys handed out past the
/// inserted ones. A model of its own (tables `ZBULKBOX`, `ZBULKITEM`, `ZBULKLOG`, `ZBULKTAG`, `Z_2TAGS`) so that
/// statements can be counted while other suites run.
@Suite(.serialized) struct SQLiteBatchRequestTests {
    /// BulkBox (label) ⟶> BulkItem `items` (cascade) — `box` (nullify); BulkItem <<⟶>> BulkTag `tags` (nullify);
    /// BulkLog (message), on its own.
    static let model: NSManagedObjectModel = {
        func attribute(_ name: String, _ type: NSAttributeType) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.isOptional = true
            return attribute
        }
        func relationship(_ name: String, to destination: NSEntityDescription, toMany: Bool, rule: NSDeleteRule)
            -> NSRelationshipDescription
        {
            let relationship = NSRelationshipDescription()
            relationship.name = name
            relationship.destinationEntity = destination
            relationship.minCount = 0
            relationship.maxCount = toMany ? 0 : 1
            relationship.deleteRule = rule
            relationship.isOptional = true
            return relationship
        }
        let box = NSEntityDescription()
        box.name = "BulkBox"
        let item = NSEntityDescription()
        item.name = "BulkItem"
        let tag = NSEntityDescription()
        tag.name = "BulkTag"
        let log = NSEntityDescription()
        log.name = "BulkLog"
        log.properties = [attribute("message", .stringAttributeType)]
        let items = relationship("items", to: item, toMany: true, rule: .cascadeDeleteRule)
        let itemBox = relationship("box", to: box, toMany: false, rule: .nullifyDeleteRule)
        items.inverseRelationship = itemBox
        itemBox.inverseRelationship = items
        let tags = relationship("tags", to: tag, toMany: true, rule: .nullifyDeleteRule)
        let tagged = relationship("items", to: item, toMany: true, rule: .nullifyDeleteRule)
        tags.inverseRelationship = tagged
        tagged.inverseRelationship = tags
        box.properties = [attribute("label", .stringAttributeType), items]
        item.properties = [
            attribute("number", .integer64AttributeType), attribute("note", .stringAttributeType), itemBox, tags,
        ]
        tag.properties = [attribute("name", .stringAttributeType), tagged]
        let model = NSManagedObjectModel()
        model.entities = [box, item, log, tag]
        return model
    }()

    /// `boxes` boxes of `items` items each (numbered from 0), every item tagged "all"; as many logs as items.
    static func fill(_ url: URL, boxes: Int, items: Int) throws -> NSPersistentStoreCoordinator {
        let coordinator = try SQLiteStack.coordinator(model, at: url)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            let all = NSEntityDescription.insertNewObject(forEntityName: "BulkTag", into: context)
            all.setValue("all", forKey: "name")
            for boxNumber in 0..<boxes {
                let box = NSEntityDescription.insertNewObject(forEntityName: "BulkBox", into: context)
                box.setValue("box \(boxNumber)", forKey: "label")
                for index in 0..<items {
                    let item = NSEntityDescription.insertNewObject(forEntityName: "BulkItem", into: context)
                    item.setValue(NSNumber(value: boxNumber * items + index), forKey: "number")
                    item.setValue(box, forKey: "box")
                    item.setValue(Set([all]), forKey: "tags")
                    let log = NSEntityDescription.insertNewObject(forEntityName: "BulkLog", into: context)
                    log.setValue("log \(boxNumber * items + index)", forKey: "message")
                }
            }
            try context.save()
        }
        return coordinator
    }

    #if !canImport(CoreData)
    /// The statements that `body` runs on the suite's tables.
    static func statements(_ body: () throws -> Void) rethrows -> [String] {
        let recorder = SQLiteStatementRecorder()
        defer { recorder.stop() }
        try body()
        return recorder.statements.filter { $0.contains("ZBULK") || $0.contains("Z_2TAGS") }
    }

    @Test func anUpdateIsOneStatementWithBoundValuesThatRaisesVersions() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let coordinator = try Self.fill(url, boxes: 2, items: 50)
        let context = SQLiteStack.context(coordinator)
        let before = try RawSQLite.rowsByKey(url, table: "ZBULKITEM")
        let statements = try Self.statements {
            try context.performAndWait {
                let request = NSBatchUpdateRequest(entityName: "BulkItem")
                request.predicate = NSPredicate(format: "number >= 60 AND box.label == %@", "box 1")
                request.propertiesToUpdate = ["note": "secret-note", "number": NSExpression(format: "number + 1000")]
                request.resultType = .updatedObjectsCountResultType
                let result = try context.execute(request) as? NSBatchUpdateResult
                #expect((result?.result as? NSNumber)?.intValue == 40)
            }
        }
        #expect(statements.count == 1, "\(statements)")
        #expect(statements.allSatisfy { !$0.contains("secret-note") && !$0.contains("1000") && !$0.contains("box 1") })
        let after = try RawSQLite.rowsByKey(url, table: "ZBULKITEM")
        for (key, row) in after {
            let old = try #require(before[key])
            let changed = (old["ZNUMBER"]?.integer ?? 0) >= 60
            #expect(row["Z_OPT"]?.integer == (old["Z_OPT"]?.integer ?? 0) + (changed ? 1 : 0))
            #expect(row["ZNOTE"]?.text == (changed ? "secret-note" : nil))
            #expect(row["ZNUMBER"]?.integer == (old["ZNUMBER"]?.integer ?? 0) + (changed ? 1000 : 0))
        }
    }

    @Test func deletionsAreSetBasedWhateverTheNumberOfRows() throws {
        // The same deletion of 1 and of 40 boxes (with their items and join rows) runs the same statements.
        var counts: [Int] = []
        for boxes in [1, 40] {
            let directory = SQLiteTestDirectory()
            let url = directory.store()
            let coordinator = try Self.fill(url, boxes: boxes, items: 5)
            let context = SQLiteStack.context(coordinator)
            let statements = try Self.statements {
                try context.performAndWait {
                    let request = NSBatchDeleteRequest(
                        fetchRequest: NSFetchRequest<NSFetchRequestResult>(entityName: "BulkBox"))
                    request.resultType = .resultTypeCount
                    let result = try context.execute(request) as? NSBatchDeleteResult
                    #expect((result?.result as? NSNumber)?.intValue == boxes * 6)
                }
            }
            counts.append(statements.count)
            #expect(try RawSQLite.query(url, "SELECT COUNT(*) FROM ZBULKITEM") == [[.integer(0)]])
            #expect(try RawSQLite.query(url, "SELECT COUNT(*) FROM ZBULKTAG") == [[.integer(1)]])
            #expect(try RawSQLite.query(url, "SELECT COUNT(*) FROM Z_2TAGS") == [[.integer(0)]])
        }
        #expect(counts[0] == counts[1])
    }

    @Test func aDeletionWithoutRulesToApplyIsOneStatement() throws {
        let directory = SQLiteTestDirectory()
        let coordinator = try Self.fill(directory.store(), boxes: 3, items: 10)
        let context = SQLiteStack.context(coordinator)
        let statements = try Self.statements {
            try context.performAndWait {
                let fetch = NSFetchRequest<NSFetchRequestResult>(entityName: "BulkLog")
                fetch.predicate = NSPredicate(format: "message ENDSWITH '7'")
                let request = NSBatchDeleteRequest(fetchRequest: fetch)
                request.resultType = .resultTypeCount
                let result = try context.execute(request) as? NSBatchDeleteResult
                #expect((result?.result as? NSNumber)?.intValue == 3)
            }
        }
        #expect(statements.count == 1, "\(statements)")
        #expect(statements.first?.hasPrefix("DELETE FROM ZBULKLOG") == true)
    }

    @Test func insertedKeysAreReservedForLaterSaves() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let coordinator = try Self.fill(url, boxes: 1, items: 3)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            let request = NSBatchInsertRequest(
                entityName: "BulkItem", objects: (0..<10).map { ["number": 100 + $0, "note": "bulk"] })
            _ = try context.execute(request)
            let item = NSEntityDescription.insertNewObject(forEntityName: "BulkItem", into: context)
            item.setValue(NSNumber(value: 999), forKey: "number")
            try context.save()
        }
        let rows = try RawSQLite.query(url, "SELECT Z_PK, Z_OPT, ZNUMBER FROM ZBULKITEM ORDER BY Z_PK")
        #expect(rows.count == 14)
        #expect(rows.map { $0[0].integer } == (1...14).map { Int64($0) })
        #expect(rows.allSatisfy { $0[1] == .integer(1) })
        #expect(rows.last?[2] == .integer(999))
        let max = try RawSQLite.query(
            url, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'BulkItem'")
        #expect(max == [[.integer(14)]])
    }
    #endif

    @Test func aReadOnlyStoreRefusesBatchRequests() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        try SQLiteStack.close(try Self.fill(url, boxes: 1, items: 2))
        let coordinator = try SQLiteStack.coordinator(
            Self.model, at: url, options: [NSReadOnlyPersistentStoreOption: true])
        let context = SQLiteStack.context(coordinator)
        context.performAndWait {
            let request = NSBatchUpdateRequest(entityName: "BulkItem")
            request.propertiesToUpdate = ["note": "x"]
            #expect(throws: Error.self) { _ = try context.execute(request) }
            let delete = NSBatchDeleteRequest(
                fetchRequest: NSFetchRequest<NSFetchRequestResult>(entityName: "BulkItem"))
            #expect(throws: Error.self) { _ = try context.execute(delete) }
        }
        #expect(try RawSQLite.query(url, "SELECT COUNT(*) FROM ZBULKITEM") == [[.integer(2)]])
    }
}
