import Foundation
import OpenCoreDataShim
import Testing

/// Derived attributes and relationships that are their own inverse.
@Suite struct SQLiteDerivedAndReflexiveTests {
    static func model() -> NSManagedObjectModel {
        SQLiteCorpusModels.model([
            .init(
                name: "Shelf",
                properties: [
                    .derived("bookCount", .integer64AttributeType, "books.@count"),
                    .derived("loudName", .stringAttributeType, "uppercase:(name)"),
                    .attribute("name", .stringAttributeType),
                    .toMany("books", "Book", inverse: "shelf"),
                ]),
            .init(
                name: "Book",
                properties: [
                    .attribute("title", .stringAttributeType), .toOne("shelf", "Shelf", inverse: "books"),
                    .toMany("related", "Book", inverse: "related"),
                ]),
        ])
    }

    @Test func derivedValuesAreComputedWhenSavedOrByTriggers() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let coordinator = try SQLiteStack.coordinator(Self.model(), at: url)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            let shelf = NSEntityDescription.insertNewObject(forEntityName: "Shelf", into: context)
            shelf.setValue("fiction", forKey: "name")
            let books = (0..<3).map { index -> NSManagedObject in
                let book = NSEntityDescription.insertNewObject(forEntityName: "Book", into: context)
                book.setValue("book \(index)", forKey: "title")
                return book
            }
            shelf.setValue(Set(books), forKey: "books")
            try context.save()
            context.delete(books[0])
            shelf.setValue("classics", forKey: "name")
            try context.save()
        }
        #expect(
            try RawSQLite.query(url, "SELECT ZBOOKCOUNT, ZLOUDNAME FROM ZSHELF") == [[.integer(2), .text("CLASSICS")]])
        let triggers = try RawSQLite.query(url, "SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name")
        #expect(triggers.count == 5)
        let fresh = SQLiteStack.context(coordinator)
        try fresh.performAndWait {
            let shelf = try #require(try fresh.fetch(NSFetchRequest<NSManagedObject>(entityName: "Shelf")).first)
            #expect(shelf.value(forKey: "bookCount") as? Int64 == 2)
            #expect(shelf.value(forKey: "loudName") as? String == "CLASSICS")
        }
    }

    /// Saves three books at `url`, the first related to the other two, and closes the store.
    static func saveRelatedBooks(at url: URL) throws {
        let coordinator = try SQLiteStack.coordinator(model(), at: url)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            let books = (0..<3).map { index -> NSManagedObject in
                let book = NSEntityDescription.insertNewObject(forEntityName: "Book", into: context)
                book.setValue("book \(index)", forKey: "title")
                return book
            }
            books[0].setValue(Set([books[1], books[2]]), forKey: "related")
            try context.save()
        }
        try SQLiteStack.close(coordinator)
    }

    @Test func aReflexiveManyToManyRelationshipIsStoredInOneJoinTable() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        try Self.saveRelatedBooks(at: url)
        let columns = try RawSQLite.query(url, "PRAGMA table_info(Z_1RELATED)").compactMap { $0[1].text }
        #expect(columns == ["Z_1RELATED", "Z_1RELATED1"])
        let context = SQLiteStack.context(try SQLiteStack.coordinator(Self.model(), at: url))
        try context.performAndWait {
            func related(_ title: String) throws -> [String] {
                let request = NSFetchRequest<NSManagedObject>(entityName: "Book")
                request.predicate = NSPredicate(format: "title == %@", title)
                let book = try #require(try context.fetch(request).first)
                return (book.value(forKey: "related") as? Set<NSManagedObject> ?? []).compactMap {
                    $0.value(forKey: "title") as? String
                }.sorted()
            }
            let first = try related("book 0")
            let second = try related("book 1")
            #expect(first == ["book 1", "book 2"])
            #expect(second == ["book 0"])
        }
    }

    /// A join table written elsewhere, without the primary key that makes each pair appear once, may repeat a pair:
    /// the relationship still holds each destination once, so that removing one removes it.
    @Test func aJoinTableThatRepeatsAPairGivesEachDestinationOnce() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        try Self.saveRelatedBooks(at: url)
        let pairCount = { try RawSQLite.query(url, "SELECT COUNT(*) FROM Z_1RELATED").first?.first?.integer }
        let pairs = try #require(try pairCount())
        try RawSQLite.execute(
            url,
            """
            CREATE TABLE PAIRS AS SELECT * FROM Z_1RELATED; DROP TABLE Z_1RELATED;
            CREATE TABLE Z_1RELATED (Z_1RELATED INTEGER, Z_1RELATED1 INTEGER);
            INSERT INTO Z_1RELATED SELECT * FROM PAIRS; INSERT INTO Z_1RELATED SELECT * FROM PAIRS; DROP TABLE PAIRS;
            """)
        #expect(try pairCount() == pairs * 2)
        let context = SQLiteStack.context(try SQLiteStack.coordinator(Self.model(), at: url))
        try context.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Book")
            request.predicate = NSPredicate(format: "title == %@", "book 0")
            let book = try #require(try context.fetch(request).first)
            let related = book.mutableSetValue(forKey: "related")
            #expect(related.count == 2)
            let first = try #require(related.allObjects.compactMap { $0 as? NSManagedObject }.first)
            related.remove(first)
            let remaining = book.value(forKey: "related") as? Set<NSManagedObject> ?? []
            #expect(remaining.count == 1)
            #expect(!remaining.contains(first))
        }
    }
}
