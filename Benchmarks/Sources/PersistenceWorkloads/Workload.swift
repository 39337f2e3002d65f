import Foundation

/// What every library under comparison implements: the same operations on the same data, written the way that
/// library is meant to be used. The schema is each library's own (Core Data's layout for OpenCoreData).
public protocol PersistenceLibrary: AnyObject {
    /// How the library names one stored item to look it up by identity (a row ID, an `NSManagedObjectID`).
    associatedtype ItemReference

    /// The name in the results table.
    static var name: String { get }

    /// Opens the database at `url` in WAL mode with `synchronous=NORMAL`, creating the schema if the file is new.
    init(url: URL) throws

    /// Closes the database, checkpointing the WAL into the main file.
    func close() throws

    /// Inserts the items in one transaction.
    func insertItems(_ items: [ItemValues]) throws

    /// Inserts `parents` parents with serials `0..<parents`, each with `children` children, in one transaction.
    func insertParents(_ parents: Int, childrenEach children: Int) throws

    /// Fetches every item and reads all of its attributes.
    func fetchAllItems() throws -> Checksum

    /// The references of the items with these serials, as the lookup by identity is given them.
    func references(serials: [Int64]) throws -> [ItemReference]

    /// Looks the items up one at a time by identity, reading every attribute.
    func lookUp(_ references: [ItemReference]) throws -> Checksum

    /// Looks the items up one at a time by the indexed `serial` attribute, reading every attribute.
    func lookUp(serials: [Int64]) throws -> Checksum

    /// Loads the items whose serial is below `serialLimit`, sets their `quantity`, and saves.
    func updateItems(serialsBelow serialLimit: Int64, quantity: Int64) throws

    /// Loads the items whose serial is below `serialLimit`, then sets their `quantity` one item at a time, saving each
    /// change in a transaction of its own (as an application saves after each edit).
    func editItems(serialsBelow serialLimit: Int64, quantity: Int64) throws

    /// Loads the parents whose serial is below `serialLimit` and deletes them with their children.
    func deleteParents(serialsBelow serialLimit: Int64) throws

    /// Fetches every parent and reads an attribute of each of its children.
    func walkParents() throws -> Checksum

    /// Fetches the items whose name contains `text`, ignoring case and diacritics, reading every attribute.
    func searchNames(containing text: String) throws -> Checksum

    /// Loads every item and keeps them (registered in a context, for OpenCoreData) until the result goes away.
    func loadAllItems() throws -> (checksum: Checksum, keepAlive: Any)
}

/// The workloads of the comparison, in table order.
public enum Workload: String, CaseIterable, Sendable {
    case insert
    case fetch
    case lookupByID
    case lookupByAttribute
    case update
    case edit
    case delete
    case walk
    case search

    /// The row's title in the results table.
    public var title: String {
        switch self {
        case .insert: "insert 100,000 + save"
        case .fetch: "fetch 100,000 + read all attributes"
        case .lookupByID: "10,000 lookups by ID"
        case .lookupByAttribute: "10,000 lookups by indexed attribute"
        case .update: "update 10,000 + save"
        case .edit: "1,000 edits, each saved"
        case .delete: "delete 10,000 (cascade to 10 children each) + save"
        case .walk: "walk to-many: 1,000 parents × 100 children"
        case .search: "fetch name CONTAINS[cd] over 100,000"
        }
    }

    /// The objects (or rows) each run should see, to check that every library did the same work.
    public var expectedCount: Int? {
        switch self {
        case .insert, .update, .edit, .delete: nil
        case .fetch: Fixture.itemCount
        case .lookupByID, .lookupByAttribute: Fixture.batchCount
        case .walk: Fixture.walkedParents * Fixture.childrenPerWalkedParent
        case .search: Fixture.itemCount / 5
        }
    }
}

/// Runs the workloads of one library: builds each fixture database once (a template), and before each measured
/// run gives it a fresh copy where the workload changes the data.
public final class WorkloadDriver<Library: PersistenceLibrary>: @unchecked Sendable {
    let scratch: ScratchDirectory
    /// Databases opened once and kept for workloads that do not change what they read.
    var open: [Workload: Library] = [:]
    var references: [Library.ItemReference] = []
    var iteration: Int64 = 0

    public init() {
        scratch = ScratchDirectory(Library.name)
    }

    deinit {
        for library in open.values { try? library.close() }
    }

    /// The template database `name` of this library (see `TemplateFiles`).
    func templateURL(_ name: String) throws -> URL {
        try TemplateFiles.url(named: "\(Library.name.filter(\.isLetter))-\(name)", in: scratch) { building in
            let library = try Library(url: building)
            switch name {
            case "items": try library.insertItems(Fixture.items)
            case "cascade":
                try library.insertParents(Fixture.batchCount, childrenEach: Fixture.childrenPerDeletedParent)
            case "tree":
                try library.insertParents(Fixture.walkedParents, childrenEach: Fixture.childrenPerWalkedParent)
            default: preconditionFailure("no template \(name)")
            }
            try library.close()
        }
    }

    /// A fresh copy of a template, opened.
    func freshCopy(of template: String, as name: String) throws -> Library {
        let working = scratch.file("\(name).sqlite")
        try DatabaseFiles.copy(try templateURL(template), to: working)
        return try Library(url: working)
    }

    /// The database a read-mostly workload uses in every run, opened on first use.
    func shared(_ workload: Workload, template: String) throws -> Library {
        if let library = open[workload] { return library }
        let library = try freshCopy(of: template, as: workload.rawValue)
        open[workload] = library
        return library
    }

    /// Prepares one run of `workload` (not measured) and returns it.
    public func prepare(_ workload: Workload) throws -> WorkloadRun {
        iteration += 1
        switch workload {
        case .insert:
            let url = scratch.file("insert.sqlite")
            DatabaseFiles.remove(url)
            let library = try Library(url: url)
            // The values are made before measuring, so that only storing them is measured.
            let items = Fixture.items
            return WorkloadRun {
                try library.insertItems(items)
                return Checksum()
            } finish: {
                try library.close()
            }
        case .fetch:
            let library = try shared(.fetch, template: "items")
            return WorkloadRun { try library.fetchAllItems() }
        case .lookupByID:
            let library = try shared(.lookupByID, template: "items")
            if references.isEmpty { references = try library.references(serials: Fixture.lookedUpSerials) }
            let references = references
            return WorkloadRun { try library.lookUp(references) }
        case .lookupByAttribute:
            let library = try shared(.lookupByAttribute, template: "items")
            return WorkloadRun { try library.lookUp(serials: Fixture.lookedUpSerials) }
        case .update:
            let library = try shared(.update, template: "items")
            let quantity = 1_000_000 + iteration
            return WorkloadRun {
                try library.updateItems(serialsBelow: Int64(Fixture.batchCount), quantity: quantity)
                return Checksum()
            }
        case .edit:
            let library = try shared(.edit, template: "items")
            let quantity = 2_000_000 + iteration
            return WorkloadRun {
                try library.editItems(serialsBelow: Int64(Fixture.editCount), quantity: quantity)
                return Checksum()
            }
        case .delete:
            let library = try freshCopy(of: "cascade", as: "delete")
            return WorkloadRun {
                try library.deleteParents(serialsBelow: Int64(Fixture.batchCount))
                return Checksum()
            } finish: {
                try library.close()
            }
        case .walk:
            let library = try shared(.walk, template: "tree")
            return WorkloadRun { try library.walkParents() }
        case .search:
            let library = try shared(.search, template: "items")
            return WorkloadRun { try library.searchNames(containing: Fixture.searchedText) }
        }
    }

    /// Opens a fresh copy of the item table, for the memory measurement.
    public func openItems() throws -> Library {
        try freshCopy(of: "items", as: "memory")
    }
}

/// One prepared run of a workload: the measured part, then what is done after measuring.
public struct WorkloadRun {
    let body: () throws -> Checksum
    let after: () throws -> Void

    init(_ body: @escaping () throws -> Checksum, finish: @escaping () throws -> Void = {}) {
        self.body = body
        after = finish
    }

    /// The measured part.
    public func run() throws -> Checksum { try body() }

    /// Cleans up after measuring.
    public func finish() throws { try after() }
}

/// Fails a workload whose result shows it did not do the same work as the others.
public struct WorkloadMismatch: Error, CustomStringConvertible {
    public let description: String
}

extension Workload {
    /// Checks the number of objects a run read.
    public func check(_ checksum: Checksum, library: String) throws {
        guard let expected = expectedCount, checksum.count != expected else { return }
        throw WorkloadMismatch(description: "\(library) \(rawValue): read \(checksum.count) objects, not \(expected)")
    }
}
