/// What a fetched results controller tells about changes to its results, as its context's objects change (and
/// changes merged from other contexts arrive). Every method is optional: a delegate implements the ones it needs.
///
/// For table-like views, implement the per-change methods, which come between `controllerWillChangeContent(_:)` and
/// `controllerDidChangeContent(_:)`: section deletions and insertions first, then object deletions (at their old
/// index paths), insertions (at their new ones), moves and updates. A controller without sections can instead
/// report each change as one `CollectionDifference` of object IDs, through
/// `controller(_:didChangeContentWith:)`; a delegate that implements that method receives no other calls.
///
/// ```swift
/// final class ListModel: NSObject, NSFetchedResultsControllerDelegate {
///     func controller(
///         _ controller: NSFetchedResultsController<NSFetchRequestResult>,
///         didChangeContentWith diff: CollectionDifference<NSManagedObjectID>
///     ) {
///         ids = ids.applying(diff) ?? ids
///     }
/// }
/// ```
///
/// `NSDiffableDataSourceSnapshot`, which Apple's variant of that method takes, belongs to UIKit and AppKit and has no
/// counterpart here.
public protocol NSFetchedResultsControllerDelegate: NSObjectProtocol {
    /// An object joined, left, moved within or changed in the results. `indexPath` is its place before the change
    /// (`nil` for an insertion), `newIndexPath` after it (`nil` for a deletion).
    func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>, didChange anObject: Any,
        at indexPath: IndexPath?, for type: NSFetchedResultsChangeType, newIndexPath: IndexPath?)

    /// A section was inserted (at its new index) or deleted (at its old index).
    func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>,
        didChange sectionInfo: NSFetchedResultsSectionInfo,
        atSectionIndex sectionIndex: Int, for type: NSFetchedResultsChangeType)

    /// Changes are about to be reported.
    func controllerWillChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>)

    /// All the changes of one event have been reported.
    func controllerDidChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>)

    /// The section index title of a section; by default the controller's `sectionIndexTitle(forSectionName:)`.
    func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>,
        sectionIndexTitleForSectionName sectionName: String
    ) -> String?

    /// The results changed, as the difference between the old and the new object IDs. Called only for a controller
    /// without `sectionNameKeyPath`; a delegate that implements it receives no other change calls.
    func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>,
        didChangeContentWith diff: CollectionDifference<NSManagedObjectID>)
}

extension NSFetchedResultsControllerDelegate {
    public func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>, didChange anObject: Any,
        at indexPath: IndexPath?, for type: NSFetchedResultsChangeType, newIndexPath: IndexPath?
    ) {}

    public func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>,
        didChange sectionInfo: NSFetchedResultsSectionInfo,
        atSectionIndex sectionIndex: Int, for type: NSFetchedResultsChangeType
    ) {}

    public func controllerWillChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>) {}

    public func controllerDidChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>) {}

    public func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>,
        sectionIndexTitleForSectionName sectionName: String
    ) -> String? {
        controller._engine.defaultIndexTitle(forSectionName: sectionName)
    }

    public func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>,
        didChangeContentWith diff: CollectionDifference<NSManagedObjectID>
    ) {
        // Not implemented by the delegate: the controller reports the change with the other methods instead.
        FetchedResultsEngine.noteDifferenceIgnored()
    }
}
