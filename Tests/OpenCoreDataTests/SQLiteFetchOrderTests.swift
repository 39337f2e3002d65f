import Foundation
import Testing

@testable import OpenCoreDataCore

/// Fetches without sort descriptors over a SQLite store whose predicate names an indexed attribute. SQLite answers
/// them from the index, whose order is not the rows' — and OpenCoreData still hands the results out in primary-key
/// order, the order every unsorted fetch has here. Apple's Core Data leaves that order undefined and has no
/// `SQLiteFetchExplanation`, so these tests are OpenCoreData's own.
@Suite struct SQLiteFetchOrderTests {
    /// Readings with an indexed `rank`, saved with falling ranks: the index holds them in the reverse of the order
    /// they were saved in.
    static func model() -> NSManagedObjectModel {
        let reading = NSEntityDescription()
        reading.name = "Reading"
        let rank = CompanyModel.attribute("rank", .integer64AttributeType)
        reading.properties = [rank, CompanyModel.attribute("label", .stringAttributeType)]
        let byRank = NSFetchIndexElementDescription(property: rank, collationType: .binary)
        reading.indexes = [NSFetchIndexDescription(name: "byRank", elements: [byRank])]
        let model = NSManagedObjectModel()
        model.entities = [reading]
        return model
    }

    static let count = 300

    /// A store of `count` readings, labelled in the order they were saved, each ranked `count - index`.
    static func populated(_ directory: SQLiteTestDirectory) throws -> NSPersistentStoreCoordinator {
        let coordinator = try SQLiteStack.coordinator(model(), at: directory.store())
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            for index in 0..<count {
                let reading = NSEntityDescription.insertNewObject(forEntityName: "Reading", into: context)
                reading.setValue(Int64(count - index), forKey: "rank")
                reading.setValue("r\(index)", forKey: "label")
            }
            try context.save()
        }
        return coordinator
    }

    static func lowRanks() -> NSFetchRequest<NSFetchRequestResult> {
        let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Reading")
        request.predicate = NSPredicate(format: "rank < 100")
        return request
    }

    /// The labels of the readings ranked below 100, in the order they were saved.
    static let savedOrder = (count - 99..<count).map { "r\($0)" }

    @Test func anUnsortedFetchSearchesTheIndexOnItsPredicate() throws {
        let directory = SQLiteTestDirectory()
        let coordinator = try Self.populated(directory)
        let store = try #require(coordinator.persistentStores.first)
        let explanation = try SQLiteFetchExplanation.explain(Self.lowRanks(), in: store)
        // Ordering by the primary key in SQL would make SQLite scan the whole table in key order instead.
        #expect(
            explanation.plan.contains { $0.detail.contains("USING") && $0.detail.contains("INDEX") },
            "\(explanation.plan)")
        #expect(!explanation.plan.contains { $0.detail.hasPrefix("SCAN") }, "\(explanation.plan)")
        #expect(!explanation.sql.contains("ORDER BY"), "\(explanation.sql)")
    }

    @Test func unsortedResultsComeInPrimaryKeyOrderHoweverTheyAreFetched() throws {
        let directory = SQLiteTestDirectory()
        let coordinator = try Self.populated(directory)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            func labels(_ configure: (NSFetchRequest<NSFetchRequestResult>) -> Void) throws -> [String] {
                let request = Self.lowRanks()
                configure(request)
                return try context.fetch(request).map { result -> String in
                    let object =
                        try (result as? NSManagedObjectID).map { try context.existingObject(with: $0) }
                        ?? (result as! NSManagedObject)
                    return object.value(forKey: "label") as? String ?? ""
                }
            }
            let cases: [(String, (NSFetchRequest<NSFetchRequestResult>) -> Void, [String])] = [
                ("objects", { _ in }, Self.savedOrder),
                ("IDs", { $0.resultType = .managedObjectIDResultType }, Self.savedOrder),
                ("faults", { $0.includesPropertyValues = false }, Self.savedOrder),
                ("batches", { $0.fetchBatchSize = 16 }, Self.savedOrder),
                ("partial faults", { $0.propertiesToFetch = ["label"] }, Self.savedOrder),
                // Sort descriptors and limits still order in SQL.
                (
                    "sorted", { $0.sortDescriptors = [NSSortDescriptor(key: "rank", ascending: true)] },
                    Self.savedOrder.reversed()
                ),
                ("limited", { $0.fetchLimit = 5 }, Array(Self.savedOrder.prefix(5))),
                ("offset", { $0.fetchOffset = 95 }, Array(Self.savedOrder.suffix(4))),
            ]
            for (name, configure, expected) in cases {
                let found = try labels(configure)
                #expect(found == expected, "\(name)")
            }
        }
    }
}
