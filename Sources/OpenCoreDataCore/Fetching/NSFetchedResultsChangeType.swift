/// What happened to an object or a section of a fetched results controller's results.
public enum NSFetchedResultsChangeType: UInt, Sendable {
    /// It joined the results.
    case insert = 1
    /// It left the results.
    case delete = 2
    /// It moved to another place in the results.
    case move = 3
    /// It changed, staying where it was.
    case update = 4
}
