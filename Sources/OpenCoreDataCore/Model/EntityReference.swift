import Synchronization

/// Whether an entity still exists: made with the entity, ended by its `deinit`, and held by the references to it
/// that must not keep it alive (`EntityReference`).
final class EntityLifetime: Sendable {
    private let ended = Atomic<Bool>(false)

    var isOver: Bool { ended.load(ordering: .acquiring) }

    func end() { ended.store(true, ordering: .releasing) }
}

/// A reference to an entity that does not keep it alive and reads `nil` once the entity has gone, as a `weak`
/// reference does — but without forming one. An object that has ever been referenced weakly keeps its reference
/// counts in a side table for the rest of its life, and every retain and release of it takes the runtime's slow
/// path (about ten times the instructions). Entities are retained and released by every managed object and object
/// ID made for them, so the model's back references (a property's entity, a relationship's destination, a
/// superentity, an index's entity) and the class registry's cached entities are these instead: the entity is held
/// unretained (`Unmanaged`) beside its lifetime, which says whether it may be read.
///
/// Like Apple's, whose model references are `unowned(unsafe)`, this does not make reading a reference safe against
/// another thread releasing the last strong reference to the entity at the same moment.
struct EntityReference {
    private let _entity: Unmanaged<NSEntityDescription>?
    private let _lifetime: EntityLifetime?

    init(_ entity: NSEntityDescription?) {
        _entity = entity.map(Unmanaged.passUnretained)
        _lifetime = entity?._lifetime
    }

    /// The entity, or `nil` if there is none or it has gone.
    var entity: NSEntityDescription? {
        guard let lifetime = _lifetime, !lifetime.isOver else { return nil }
        return _entity?.takeUnretainedValue()
    }
}
