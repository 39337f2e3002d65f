/// One section of a fetched results controller's results: the objects with one value at the controller's
/// `sectionNameKeyPath` (all the objects, in the one section of a controller without one).
///
/// ```swift
/// let header = controller.sections?[section].name
/// let rows = controller.sections?[section].numberOfObjects ?? 0
/// ```
public protocol NSFetchedResultsSectionInfo {
    /// The section's name: the description of its objects' value at `sectionNameKeyPath` (`""` for no value).
    var name: String { get }
    /// The section's title in a section index.
    var indexTitle: String? { get }
    /// How many objects the section holds.
    var numberOfObjects: Int { get }
    /// The section's objects, in order.
    var objects: [Any]? { get }
}

/// A section as the controller hands it out: live, its objects those of the controller's current results, until the
/// section goes (it then keeps the objects it had).
final class FetchedResultsSection: NSFetchedResultsSectionInfo {
    /// Where a section's objects are in the results.
    struct Span {
        let start: Int
        let count: Int
    }

    let name: String
    let indexTitle: String?
    /// Where the section's objects start in the results, and how many there are.
    var start = 0
    var numberOfObjects = 0
    private weak var engine: FetchedResultsEngine?
    /// The objects of a section that the results no longer have.
    var frozen: [NSFetchRequestResult]?

    init(name: String, indexTitle: String?, engine: FetchedResultsEngine) {
        self.name = name
        self.indexTitle = indexTitle
        self.engine = engine
    }

    var span: Span { Span(start: start, count: numberOfObjects) }

    var objects: [Any]? {
        if let frozen { return frozen }
        guard let results = engine?.results, start + numberOfObjects <= results.count else { return [] }
        return Array(results[start..<(start + numberOfObjects)])
    }
}
