/// A fetched property: a weak, one-way relationship defined by a fetch request, evaluated when the property is
/// first read. In its predicate, `$FETCH_SOURCE` stands for the object whose property is read and
/// `$FETCHED_PROPERTY` for this description.
open class NSFetchedPropertyDescription: NSPropertyDescription, @unchecked Sendable {
    // @unchecked: as NSPropertyDescription: immutable once its model is in use.
    var _fetchRequest: NSFetchRequest<NSFetchRequestResult>?

    /// The fetch request that finds the property's objects.
    open var fetchRequest: NSFetchRequest<NSFetchRequestResult>? {
        get { _fetchRequest }
        set {
            _checkEditable("fetchRequest")
            _fetchRequest = newValue
        }
    }

    override func _copyProperties(from other: NSPropertyDescription) {
        super._copyProperties(from: other)
        guard let other = other as? NSFetchedPropertyDescription else { return }
        _fetchRequest = other._fetchRequest?.copy() as? NSFetchRequest<NSFetchRequestResult>
    }
}
