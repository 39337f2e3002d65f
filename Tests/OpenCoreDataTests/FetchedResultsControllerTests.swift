import Foundation
import OpenCoreDataShim
import Testing

/// `NSFetchedResultsController`: sections and lookups after `performFetch()`, and the delegate's reports as the
/// context's objects change — insertions, deletions, updates, moves between and within sections, with section
/// insertions and deletions — or as changes are merged from other contexts and batch requests.
@Suite struct FetchedResultsControllerTests {
    /// Chore (title, room, rank, done): sections by room, ordered by room then rank.
    static let model: NSManagedObjectModel = {
        let chore = NSEntityDescription()
        chore.name = "Chore"
        chore.managedObjectClassName = NSStringFromClass(NSManagedObject.self)
        chore.properties = [
            CompanyModel.attribute("title", .stringAttributeType),
            CompanyModel.attribute("room", .stringAttributeType),
            CompanyModel.attribute("rank", .integer64AttributeType),
            CompanyModel.attribute("done", .booleanAttributeType),
        ]
        let model = NSManagedObjectModel()
        model.entities = [chore]
        return model
    }()

    /// A context on a new in-memory store with `chores` (title, room, rank) saved.
    static func context(_ chores: [(String, String, Int64)]) throws -> NSManagedObjectContext {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(
            ofType: NSInMemoryStoreType, configurationName: nil, at: URL(fileURLWithPath: "/dev/null"), options: nil)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            for (title, room, rank) in chores { _ = insert(title, room, rank, into: context) }
            try context.save()
        }
        return context
    }

    @discardableResult
    static func insert(_ title: String, _ room: String?, _ rank: Int64, into context: NSManagedObjectContext)
        -> NSManagedObject
    {
        let chore = NSEntityDescription.insertNewObject(forEntityName: "Chore", into: context)
        chore.setValue(title, forKey: "title")
        chore.setValue(room, forKey: "room")
        chore.setValue(NSNumber(value: rank), forKey: "rank")
        chore.setValue(false, forKey: "done")
        return chore
    }

    static let chores: [(String, String, Int64)] = [
        ("dust", "attic", 1), ("sweep", "attic", 2), ("cook", "kitchen", 1), ("wash", "kitchen", 2),
        ("scrub", "kitchen", 3), ("make bed", "bedroom", 1),
    ]

    static func controller(
        _ context: NSManagedObjectContext, sections: Bool = true, predicate: NSPredicate? = nil,
        cacheName: String? = nil
    ) -> NSFetchedResultsController<NSManagedObject> {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Chore")
        request.predicate = predicate
        request.sortDescriptors =
            (sections ? [NSSortDescriptor(key: "room", ascending: true)] : [])
            + [NSSortDescriptor(key: "rank", ascending: true), NSSortDescriptor(key: "title", ascending: true)]
        return NSFetchedResultsController(
            fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: sections ? "room" : nil,
            cacheName: cacheName)
    }

    static func path(_ section: Int, _ row: Int) -> IndexPath { IndexPath(indexes: [section, row]) }

    static func titles(_ controller: NSFetchedResultsController<NSManagedObject>) -> [[String]] {
        (controller.sections ?? []).map { section in
            (section.objects ?? []).compactMap { ($0 as? NSManagedObject)?.value(forKey: "title") as? String }
        }
    }

    /// Records the delegate calls as text.
    final class Recorder: NSObject, NSFetchedResultsControllerDelegate {
        var events: [String] = []
        var controllers: [NSFetchedResultsController<NSFetchRequestResult>] = []

        static func name(_ type: NSFetchedResultsChangeType) -> String {
            switch type {
            case .insert: return "insert"
            case .delete: return "delete"
            case .move: return "move"
            case .update: return "update"
            @unknown default: return "?"
            }
        }

        static func text(_ path: IndexPath?) -> String {
            path.map { "\($0[0]).\($0[1])" } ?? "-"
        }

        func controllerWillChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>) {
            events.append("will")
            controllers.append(controller)
        }

        func controllerDidChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>) {
            events.append("did")
        }

        func controller(
            _ controller: NSFetchedResultsController<NSFetchRequestResult>, didChange anObject: Any,
            at indexPath: IndexPath?, for type: NSFetchedResultsChangeType, newIndexPath: IndexPath?
        ) {
            let object = anObject as? NSManagedObject
            let key = object?.entity.attributesByName["title"] == nil ? "name" : "title"
            let title = object?.value(forKey: key) as? String ?? "?"
            events.append("\(Self.name(type)) \(title) \(Self.text(indexPath))>\(Self.text(newIndexPath))")
        }

        func controller(
            _ controller: NSFetchedResultsController<NSFetchRequestResult>,
            didChange sectionInfo: NSFetchedResultsSectionInfo, atSectionIndex sectionIndex: Int,
            for type: NSFetchedResultsChangeType
        ) {
            events.append("section \(Self.name(type)) \(sectionInfo.name) \(sectionIndex)")
        }
    }

    // MARK: Fetching

    @Test func sectionsFollowTheSectionKeyPath() throws {
        let context = try Self.context(Self.chores)
        try context.performAndWait {
            let controller = Self.controller(context)
            #expect(controller.fetchedObjects == nil)
            #expect(controller.sections == nil)
            try controller.performFetch()
            #expect(controller.sections?.map(\.name) == ["attic", "bedroom", "kitchen"])
            #expect(controller.sections?.map(\.numberOfObjects) == [2, 1, 3])
            #expect(controller.sections?.map(\.indexTitle) == ["A", "B", "K"])
            #expect(controller.sectionIndexTitles == ["A", "B", "K"])
            #expect(Self.titles(controller) == [["dust", "sweep"], ["make bed"], ["cook", "wash", "scrub"]])
            #expect(controller.fetchedObjects?.count == 6)
            let scrub = controller.object(at: Self.path(2, 2))
            #expect(scrub.value(forKey: "title") as? String == "scrub")
            #expect(controller.indexPath(forObject: scrub) == Self.path(2, 2))
            #expect(controller.indexPath(forObject: controller.fetchedObjects![2]) == Self.path(1, 0))
            #expect(controller.section(forSectionIndexTitle: "K", at: 2) == 2)

            let elsewhere = Self.insert("mop", "hall", 1, into: context)
            #expect(controller.indexPath(forObject: elsewhere) == nil)
        }
    }

    @Test func withoutASectionKeyPathTheResultsAreOneSection() throws {
        let context = try Self.context(Self.chores)
        try context.performAndWait {
            let controller = Self.controller(context, sections: false, predicate: NSPredicate(format: "rank > 1"))
            try controller.performFetch()
            #expect(controller.sections?.count == 1)
            #expect(controller.sections?.first?.name == "")
            #expect(Self.titles(controller) == [["sweep", "wash", "scrub"]])

            let empty = Self.controller(context, sections: false, predicate: NSPredicate(format: "rank > 9"))
            try empty.performFetch()
            #expect(empty.sections?.count == 1)
            #expect(empty.sections?.first?.numberOfObjects == 0)
            #expect(empty.fetchedObjects?.isEmpty == true)
        }
    }

    @Test func indexTitlesAreEachListedOnce() throws {
        let context = try Self.context([("a", "apple", 1), ("b", "avocado", 1), ("c", "banana", 1), ("d", "", 1)])
        try context.performAndWait {
            let controller = Self.controller(context)
            try controller.performFetch()
            #expect(controller.sections?.map(\.name) == ["", "apple", "avocado", "banana"])
            #expect(controller.sectionIndexTitles == ["A", "B"])
            #expect(controller.section(forSectionIndexTitle: "B", at: 1) == 3)
            #expect(controller.section(forSectionIndexTitle: "A", at: 0) == 1)
        }
    }

    @Test func objectsOutOfSectionOrderFailTheFetch() throws {
        let context = try Self.context(Self.chores)
        context.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Chore")
            request.sortDescriptors = [NSSortDescriptor(key: "rank", ascending: true)]
            let controller = NSFetchedResultsController(
                fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: "room", cacheName: nil)
            #expect(throws: Error.self) { try controller.performFetch() }
        }
    }

    // MARK: Changes

    @Test func insertionsReportTheirSectionAndPlace() throws {
        let context = try Self.context(Self.chores)
        let recorder = Recorder()
        try context.performAndWait {
            let controller = Self.controller(context)
            controller.delegate = recorder
            try controller.performFetch()
            Self.insert("fold", "bedroom", 2, into: context)
            Self.insert("rake", "garden", 1, into: context)
            context.processPendingChanges()
            #expect(
                recorder.events == ["will", "section insert garden 2", "insert fold ->1.1", "insert rake ->2.0", "did"])
            #expect(
                Self.titles(controller) == [
                    ["dust", "sweep"], ["make bed", "fold"], ["rake"], ["cook", "wash", "scrub"],
                ])
            // The delegate gets the controller itself (or a view of it).
            #expect(recorder.controllers.first?.isEqual(controller) == true)
        }
    }

    @Test func deletionsReportTheirOldPlaceAndEmptiedSections() throws {
        let context = try Self.context(Self.chores)
        let recorder = Recorder()
        try context.performAndWait {
            let controller = Self.controller(context)
            controller.delegate = recorder
            try controller.performFetch()
            context.delete(controller.object(at: Self.path(1, 0)))
            context.delete(controller.object(at: Self.path(2, 1)))
            context.processPendingChanges()
            #expect(
                recorder.events == [
                    "will", "section delete bedroom 1", "delete wash 2.1>-", "delete make bed 1.0>-", "did",
                ])
            #expect(Self.titles(controller) == [["dust", "sweep"], ["cook", "scrub"]])
            #expect(controller.sections?.map(\.name) == ["attic", "kitchen"])
        }
    }

    @Test func changesThatKeepThePlaceAreUpdatesAndOthersMoves() throws {
        let context = try Self.context(Self.chores)
        let recorder = Recorder()
        try context.performAndWait {
            let controller = Self.controller(context)
            controller.delegate = recorder
            try controller.performFetch()
            // Done does not sort: an update. Rank 0 puts scrub first in the kitchen: a move.
            controller.object(at: Self.path(2, 0)).setValue(true, forKey: "done")
            controller.object(at: Self.path(2, 2)).setValue(NSNumber(value: 0), forKey: "rank")
            context.processPendingChanges()
            #expect(recorder.events == ["will", "move scrub 2.2>2.0", "update cook 2.0>2.1", "did"])
            #expect(Self.titles(controller) == [["dust", "sweep"], ["make bed"], ["scrub", "cook", "wash"]])

            // To another room: a move between sections, which empties one and makes another.
            recorder.events = []
            controller.object(at: Self.path(1, 0)).setValue("nursery", forKey: "room")
            context.processPendingChanges()
            #expect(
                recorder.events == [
                    "will", "section delete bedroom 1", "section insert nursery 2", "move make bed 1.0>2.0", "did",
                ])
            #expect(controller.sections?.map(\.name) == ["attic", "kitchen", "nursery"])
        }
    }

    @Test func objectsThatStopOrStartMatchingLeaveOrJoin() throws {
        let context = try Self.context(Self.chores)
        let recorder = Recorder()
        try context.performAndWait {
            let controller = Self.controller(context, predicate: NSPredicate(format: "done == NO"))
            controller.delegate = recorder
            try controller.performFetch()
            let sweep = controller.object(at: Self.path(0, 1))
            sweep.setValue(true, forKey: "done")
            context.processPendingChanges()
            #expect(recorder.events == ["will", "delete sweep 0.1>-", "did"])
            recorder.events = []
            sweep.setValue(false, forKey: "done")
            context.processPendingChanges()
            #expect(recorder.events == ["will", "insert sweep ->0.1", "did"])
        }
    }

    @Test func swappedNeighboursAreReportedAsAMove() throws {
        let context = try Self.context(Self.chores)
        let recorder = Recorder()
        try context.performAndWait {
            let controller = Self.controller(context)
            controller.delegate = recorder
            try controller.performFetch()
            controller.object(at: Self.path(0, 0)).setValue(NSNumber(value: 3), forKey: "rank")
            controller.object(at: Self.path(0, 1)).setValue(NSNumber(value: 0), forKey: "rank")
            context.processPendingChanges()
            #expect(recorder.events.count == 4)
            #expect(recorder.events.filter { $0.hasPrefix("move") }.count == 1)
            #expect(recorder.events.filter { $0.hasPrefix("update") }.count == 1)
            #expect(Self.titles(controller)[0] == ["sweep", "dust"])
        }
    }

    /// An unsaved object that an earlier event announced is followed like any other: its changes are updates or
    /// moves, its deletion a deletion.
    @Test func unsavedInsertionsThatChangeOrGoAreFollowed() throws {
        let context = try Self.context(Self.chores)
        let recorder = Recorder()
        try context.performAndWait {
            let controller = Self.controller(context)
            controller.delegate = recorder
            try controller.performFetch()
            let fold = Self.insert("fold", "bedroom", 2, into: context)
            context.processPendingChanges()
            fold.setValue(NSNumber(value: 0), forKey: "rank")
            context.processPendingChanges()
            context.delete(fold)
            context.processPendingChanges()
            #expect(
                recorder.events == [
                    "will", "insert fold ->1.1", "did", "will", "move fold 1.1>1.0", "did", "will",
                    "delete fold 1.0>-", "did",
                ])
            // Inserted and deleted within one event, it never shows.
            recorder.events = []
            context.delete(Self.insert("iron", "bedroom", 3, into: context))
            context.processPendingChanges()
            #expect(recorder.events.isEmpty)
        }
    }

    @Test func withoutADelegateTheResultsStayAsFetched() throws {
        let context = try Self.context(Self.chores)
        try context.performAndWait {
            let controller = Self.controller(context)
            try controller.performFetch()
            Self.insert("fold", "bedroom", 2, into: context)
            context.processPendingChanges()
            #expect(controller.fetchedObjects?.count == 6)
            try controller.performFetch()
            #expect(controller.fetchedObjects?.count == 7)
        }
    }

    /// A delegate that takes differences gets one per change, and no other calls.
    @Test func aDifferenceOfObjectIDsReplacesTheOtherCalls() throws {
        final class Differences: NSObject, NSFetchedResultsControllerDelegate {
            var differences: [CollectionDifference<NSManagedObjectID>] = []
            var otherCalls = 0
            func controller(
                _ controller: NSFetchedResultsController<NSFetchRequestResult>,
                didChangeContentWith diff: CollectionDifference<NSManagedObjectID>
            ) {
                differences.append(diff)
            }
            func controllerWillChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>) {
                otherCalls += 1
            }
        }
        let context = try Self.context(Self.chores)
        let delegate = Differences()
        try context.performAndWait {
            let controller = Self.controller(context, sections: false)
            controller.delegate = delegate
            try controller.performFetch()
            var ids = try #require(controller.fetchedObjects?.map(\.objectID))
            Self.insert("fold", "bedroom", 0, into: context)
            context.delete(controller.fetchedObjects![3])
            controller.fetchedObjects![1].setValue(NSNumber(value: 9), forKey: "rank")
            context.processPendingChanges()
            #expect(delegate.differences.count == 1)
            #expect(delegate.otherCalls == 0)
            let difference = try #require(delegate.differences.first)
            ids = try #require(ids.applying(difference))
            #expect(ids == controller.fetchedObjects?.map(\.objectID))
        }
    }

    /// A delegate without the difference method gets the per-object calls even without sections.
    @Test func aDelegateWithoutTheDifferenceMethodGetsTheOtherCalls() throws {
        let context = try Self.context(Self.chores)
        let recorder = Recorder()
        try context.performAndWait {
            let controller = Self.controller(context, sections: false)
            controller.delegate = recorder
            try controller.performFetch()
            Self.insert("fold", "bedroom", 0, into: context)
            context.processPendingChanges()
            #expect(recorder.events == ["will", "insert fold ->0.0", "did"])
        }
    }

    @Test func aDelegateOrASubclassNamesTheIndexTitles() throws {
        final class Titles: NSObject, NSFetchedResultsControllerDelegate {
            func controller(
                _ controller: NSFetchedResultsController<NSFetchRequestResult>,
                sectionIndexTitleForSectionName sectionName: String
            ) -> String? {
                String(sectionName.suffix(2))
            }
        }
        final class Upper: NSFetchedResultsController<NSManagedObject> {
            override func sectionIndexTitle(forSectionName sectionName: String) -> String? {
                sectionName.uppercased()
            }
        }
        let context = try Self.context(Self.chores)
        let titles = Titles()
        try context.performAndWait {
            let controller = Self.controller(context)
            controller.delegate = titles
            try controller.performFetch()
            #expect(controller.sectionIndexTitles == ["ic", "om", "en"])

            let request = NSFetchRequest<NSManagedObject>(entityName: "Chore")
            request.sortDescriptors = [NSSortDescriptor(key: "room", ascending: true)]
            let upper = Upper(
                fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: "room", cacheName: nil)
            try upper.performFetch()
            #expect(upper.sectionIndexTitles == ["ATTIC", "BEDROOM", "KITCHEN"])
            #expect(upper.section(forSectionIndexTitle: "KITCHEN", at: 2) == 2)
        }
    }

    // MARK: Changes from elsewhere

    @Test(arguments: BatchStoreKind.all)
    func changesMergedFromAnotherContextAreReported(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind)
        let view = stack.context()
        view.automaticallyMergesChangesFromParent = true
        let recorder = Recorder()
        let request = NSFetchRequest<NSManagedObject>(entityName: "BatchProject")
        request.sortDescriptors = [NSSortDescriptor(key: "title", ascending: true)]
        let controller = NSFetchedResultsController(
            fetchRequest: request, managedObjectContext: view, sectionNameKeyPath: nil, cacheName: nil)
        try view.performAndWait {
            controller.delegate = recorder
            try controller.performFetch()
        }
        let background = stack.context()
        try background.performAndWait {
            let project = NSEntityDescription.insertNewObject(forEntityName: "BatchProject", into: background)
            project.setValue("blue", forKey: "title")
            let projects = try background.fetch(NSFetchRequest<NSManagedObject>(entityName: "BatchProject"))
            let gemini = try #require(projects.first { $0.value(forKey: "title") as? String == "gemini" })
            gemini.setValue("zephyr", forKey: "title")
            try background.save()
        }
        view.performAndWait {}
        // Gemini, renamed, sorts last, but keeps its place after apollo: an update.
        view.performAndWait {
            #expect(recorder.events == ["will", "insert blue ->0.1", "update zephyr 0.1>0.2", "did"])
            #expect(Self.titles(controller) == [["apollo", "blue", "zephyr"]])
        }
    }

    @Test(arguments: BatchStoreKind.all)
    func batchChangesAreReportedOnceMerged(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind)
        let view = stack.context()
        let recorder = Recorder()
        try view.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "BatchWorker")
            request.predicate = NSPredicate(format: "active == YES")
            request.sortDescriptors = [NSSortDescriptor(key: "salary", ascending: true)]
            let controller = NSFetchedResultsController(
                fetchRequest: request, managedObjectContext: view, sectionNameKeyPath: nil, cacheName: nil)
            controller.delegate = recorder
            try controller.performFetch()
            #expect(controller.fetchedObjects?.count == 6)

            let update = NSBatchUpdateRequest(entityName: "BatchWorker")
            update.predicate = NSPredicate(format: "name IN {'ann', 'bob'}")
            update.propertiesToUpdate = ["active": false]
            update.resultType = .updatedObjectIDsResultType
            let updated = try #require(
                (try view.execute(update) as? NSBatchUpdateResult)?.result as? [NSManagedObjectID])
            let insert = NSBatchInsertRequest(entityName: "BatchWorker", objects: [["name": "zed", "salary": 150]])
            insert.resultType = .objectIDs
            let inserted = try #require(
                (try view.execute(insert) as? NSBatchInsertResult)?.result as? [NSManagedObjectID])
            #expect(recorder.events.isEmpty)

            NSManagedObjectContext.mergeChanges(
                fromRemoteContextSave: [NSUpdatedObjectsKey: updated, NSInsertedObjectsKey: inserted], into: [view])
            #expect(recorder.events == ["will", "delete bob 0.1>-", "delete ann 0.0>-", "insert zed ->0.0", "did"])
            #expect(
                controller.fetchedObjects?.compactMap { $0.value(forKey: "name") as? String } == [
                    "zed", "cy", "dee", "eve", "max",
                ])
        }
    }

    /// Replays the delegate's calls on the old sections and rows as a table view applies them (deletions at old
    /// index paths, then insertions at new ones; a move is both), and checks that this gives the new results.
    final class TableReplica: NSObject, NSFetchedResultsControllerDelegate {
        var sections: [(name: String, rows: [ObjectIdentifier])] = []
        private var deletedSections: [Int] = []
        private var insertedSections: [(Int, String)] = []
        private var deletedRows: [IndexPath] = []
        private var insertedRows: [(IndexPath, ObjectIdentifier)] = []
        private var updatedRows: [IndexPath] = []

        func load(_ controller: NSFetchedResultsController<NSManagedObject>) {
            sections = (controller.sections ?? []).map { section in
                (section.name, (section.objects ?? []).map { ObjectIdentifier($0 as AnyObject) })
            }
        }

        func controller(
            _ controller: NSFetchedResultsController<NSFetchRequestResult>,
            didChange sectionInfo: NSFetchedResultsSectionInfo, atSectionIndex sectionIndex: Int,
            for type: NSFetchedResultsChangeType
        ) {
            if type == .delete { deletedSections.append(sectionIndex) }
            if type == .insert { insertedSections.append((sectionIndex, sectionInfo.name)) }
        }

        func controller(
            _ controller: NSFetchedResultsController<NSFetchRequestResult>, didChange anObject: Any,
            at indexPath: IndexPath?, for type: NSFetchedResultsChangeType, newIndexPath: IndexPath?
        ) {
            let object = ObjectIdentifier(anObject as AnyObject)
            switch type {
            case .delete: deletedRows.append(indexPath!)
            case .insert: insertedRows.append((newIndexPath!, object))
            case .move:
                deletedRows.append(indexPath!)
                insertedRows.append((newIndexPath!, object))
            case .update: updatedRows.append(indexPath!)
            @unknown default: break
            }
        }

        func controllerDidChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>) {
            for path in updatedRows {
                #expect(sections.indices.contains(path[0]) && sections[path[0]].rows.indices.contains(path[1]))
            }
            var rows = sections.map { $0.rows.map(Optional.some) }
            for path in deletedRows { rows[path[0]][path[1]] = nil }
            var rebuilt = zip(sections, rows).map { ($0.0.name, $0.1.compactMap { $0 }) }
            for index in deletedSections.sorted(by: >) { rebuilt.remove(at: index) }
            for (index, name) in insertedSections.sorted(by: { $0.0 < $1.0 }) { rebuilt.insert((name, []), at: index) }
            for (path, object) in insertedRows.sorted(by: { $0.0 < $1.0 }) {
                rebuilt[path[0]].1.insert(object, at: path[1])
            }
            sections = rebuilt.map { (name: $0.0, rows: $0.1) }
            deletedSections = []
            insertedSections = []
            deletedRows = []
            insertedRows = []
            updatedRows = []
        }
    }

    /// Random changes, a few per event: after each, the replayed calls match the controller's results, and those
    /// match a fresh fetch.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func randomChangesReplayIntoTheNewResults(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        let rooms = ["attic", "bedroom", "cellar", "den", "garage"]
        let initial = (0..<30).map { ("chore \($0)", rooms[$0 % 3], Int64($0 % 7)) }
        let context = try Self.context(initial)
        let replica = TableReplica()
        try context.performAndWait {
            let controller = Self.controller(context, predicate: NSPredicate(format: "done == NO"))
            controller.delegate = replica
            try controller.performFetch()
            replica.load(controller)
            var serial = 30
            for _ in 0..<150 {
                let all = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Chore"))
                for _ in 0..<Int.random(in: 1...3, using: &random) {
                    let object = all.randomElement(using: &random)!
                    switch Int.random(in: 0..<6, using: &random) {
                    case 0:
                        Self.insert(
                            "chore \(serial)", rooms.randomElement(using: &random),
                            Int64.random(in: 0..<7, using: &random), into: context)
                        serial += 1
                    case 1 where !object.isDeleted: context.delete(object)
                    case 2: object.setValue(NSNumber(value: Int64.random(in: 0..<7, using: &random)), forKey: "rank")
                    case 3: object.setValue(rooms.randomElement(using: &random), forKey: "room")
                    case 4: object.setValue(Bool.random(using: &random), forKey: "done")
                    default:
                        // Titles stay unique: objects that sort alike may come in either order.
                        object.setValue("renamed \(serial)", forKey: "title")
                        serial += 1
                    }
                }
                context.processPendingChanges()
                let expected = (controller.sections ?? []).map { section in
                    (section.name, (section.objects ?? []).map { ObjectIdentifier($0 as AnyObject) })
                }
                #expect(replica.sections.map(\.name) == expected.map(\.0))
                #expect(replica.sections.map(\.rows) == expected.map(\.1))
                let fresh = Self.controller(context, predicate: NSPredicate(format: "done == NO"))
                try fresh.performFetch()
                #expect(fresh.sections?.map(\.name) == controller.sections?.map(\.name))
                #expect(fresh.fetchedObjects == controller.fetchedObjects)
                if replica.sections.map(\.rows) != expected.map(\.1) { return }
            }
        }
    }

    // MARK: Caches

    @Test func aCacheNameIsReleasedByDeletingTheCache() throws {
        let context = try Self.context(Self.chores)
        try context.performAndWait {
            let name = "chores-\(UUID().uuidString)"
            let controller = Self.controller(context, cacheName: name)
            #expect(controller.cacheName == name)
            try controller.performFetch()
            // Another controller may take the name over with another request.
            let other = Self.controller(context, predicate: NSPredicate(format: "rank == 1"), cacheName: name)
            try other.performFetch()
            #expect(other.fetchedObjects?.count == 3)
            // Changing the request after deleting the cache is allowed.
            NSFetchedResultsController<NSManagedObject>.deleteCache(withName: name)
            other.fetchRequest.predicate = NSPredicate(format: "rank == 2")
            try other.performFetch()
            #expect(other.fetchedObjects?.count == 2)
        }
    }

    #if !canImport(CoreData)
    @Test func changingTheRequestOfACachedControllerStops() async {
        await #expect(processExitsWith: .failure) {
            let context = try FetchedResultsControllerTests.context(FetchedResultsControllerTests.chores)
            try context.performAndWait {
                let controller = FetchedResultsControllerTests.controller(context, cacheName: "mutated")
                try controller.performFetch()
                controller.fetchRequest.predicate = NSPredicate(format: "rank == 2")
                try controller.performFetch()
            }
        }
    }

    @Test func indexPathsHaveSectionsAndRowsOnLinux() {
        var path = IndexPath(row: 3, section: 1)
        #expect(path.section == 1 && path.row == 3 && path.item == 3)
        path.row = 4
        #expect(path == IndexPath(item: 4, section: 1))
    }
    #endif
}

/// A small deterministic generator (SplitMix64), so that a failing random sequence can be replayed.
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
