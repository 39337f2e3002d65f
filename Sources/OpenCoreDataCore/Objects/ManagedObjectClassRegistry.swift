import Foundation
import Synchronization

/// Finds the `NSManagedObject` subclass an entity names (`managedObjectClassName`), and the entity a subclass
/// stands for — what Apple's framework does with `NSClassFromString` and the Objective-C runtime.
///
/// A class is found, in order: among the subclasses already seen (those whose `entity()`, `init(context:)`,
/// `fetchRequest()` were used, or that were the result type of a fetch); by its module-qualified name; and, for an
/// unqualified name such as `Employee`, by looking the name up among the classes of every loaded Swift image.
/// If none is found the entity's objects are plain `NSManagedObject`s, as Apple's framework falls back.
enum ManagedObjectClassRegistry {
    private struct State {
        var registered: Set<ObjectIdentifier> = []
        var entities: [EntityKey: CachedEntity] = [:]
        var classesByName: [String: [NSManagedObject.Type]] = [:]
        var resolved: [String: NSManagedObject.Type] = [:]
        var models: [WeakModelReference] = []
        var imageIndex: [String: [String]]?
        /// Classes whose ambiguous `entity()` was reported (once per class, not per call).
        var warnedAmbiguous: Set<ObjectIdentifier> = []
    }

    private struct WeakModelReference {
        weak var model: NSManagedObjectModel?
    }

    private struct EntityKey: Hashable {
        let objectClass: ObjectIdentifier
        let model: ObjectIdentifier
    }

    /// An entity found for a class in a model; the model is held weakly and compared, so that a key reused by a
    /// new model after the old one went away never matches.
    private struct CachedEntity {
        weak var model: NSManagedObjectModel?
        let entityReference: EntityReference
        var entity: NSEntityDescription? { entityReference.entity }

        init(model: NSManagedObjectModel, entity: NSEntityDescription) {
            self.model = model
            entityReference = EntityReference(entity)
        }
    }

    private static let state = LockedState(State())
    /// The identity of a class known to be registered (the last one asked about), or 0.
    private static let lastRegistered = Atomic<UInt>(0)

    /// Remembers a subclass seen in use.
    static func register(_ objectClass: NSManagedObject.Type) {
        guard objectClass != NSManagedObject.self else { return }
        let key = ObjectIdentifier(objectClass)
        // Every fetch registers its result class: the class registered last is known without the lock.
        if lastRegistered.load(ordering: .acquiring) == UInt(bitPattern: key) { return }
        guard !state.withLock({ $0.registered.contains(key) }) else {
            lastRegistered.store(UInt(bitPattern: key), ordering: .releasing)
            return
        }
        let full = String(reflecting: objectClass)
        let short = String(describing: objectClass)
        state.withLock { state in
            guard state.registered.insert(key).inserted else { return }
            for name in Set([full, short]) {
                state.classesByName[name, default: []].append(objectClass)
            }
            // A name that fell back to NSManagedObject may now have its class.
            state.resolved = state.resolved.filter { $0.value != NSManagedObject.self }
        }
        lastRegistered.store(UInt(bitPattern: key), ordering: .releasing)
    }

    /// Remembers a model in use by a coordinator, for `NSManagedObject.entity()`.
    static func noteModelInUse(_ model: NSManagedObjectModel) {
        state.withLock { state in
            state.models.removeAll { $0.model == nil }
            state.models.append(WeakModelReference(model: model))
        }
    }

    /// Whether an entity's class name names `objectClass`.
    static func className(_ className: String, names objectClass: NSManagedObject.Type) -> Bool {
        let full = String(reflecting: objectClass)
        let short = String(describing: objectClass)
        if className == full || className == short || className == "." + short { return true }
        if let dot = className.lastIndex(of: "."), className[className.index(after: dot)...] == short {
            // `Module.Employee` written for another module name (Xcode's "current product module"): accept it
            // when the class's own module is unknown to the model.
            return !full.contains(".") || className.hasPrefix(".")
        }
        return false
    }

    /// The entity of `objectClass`: in `model` if given, else in the models in use (the newest first).
    static func entity(for objectClass: NSManagedObject.Type, in model: NSManagedObjectModel?) -> NSEntityDescription? {
        if let model {
            let key = EntityKey(objectClass: ObjectIdentifier(objectClass), model: ObjectIdentifier(model))
            if let cached = state.withLock({ $0.entities[key] }), cached.model === model, let entity = cached.entity {
                return entity
            }
            let found = findEntity(for: objectClass, in: [model])
            if let found, !model._isEditable {
                state.withLock { $0.entities[key] = CachedEntity(model: model, entity: found) }
            }
            return found
        }
        if let warning = ambiguityWarning(for: objectClass),
            state.withLock({ $0.warnedAmbiguous.insert(ObjectIdentifier(objectClass)).inserted })
        {
            FileHandle.standardError.write(Data((warning + "\n").utf8))
        }
        return findEntity(for: objectClass, in: nil)
    }

    /// Apple's warning when the models in use give a class different entities, so that `entity()` without a
    /// context cannot know which one is meant (it answers with the newest model's). Copies of one model agree.
    static func ambiguityWarning(for objectClass: NSManagedObject.Type) -> String? {
        let models = state.withLock { $0.models.compactMap(\.model) }
        var hashes = Set<Data>()
        for model in models {
            for entity in model._entities {
                guard let name = entity._managedObjectClassName, className(name, names: objectClass) else { continue }
                hashes.insert(entity.versionHash)
            }
        }
        guard hashes.count > 1 else { return nil }
        return """
            CoreData: warning: Multiple NSEntityDescriptions claim the NSManagedObject subclass \
            '\(String(reflecting: objectClass))' so +entity is unable to disambiguate. Make objects with \
            init(context:) or init(entity:insertInto:), and fetch requests with NSFetchRequest(entityName:)
            """
    }

    private static func findEntity(for objectClass: NSManagedObject.Type, in given: [NSManagedObjectModel]?)
        -> NSEntityDescription?
    {
        register(objectClass)
        let models: [NSManagedObjectModel]
        if let given {
            models = given
        } else {
            models = state.withLock { $0.models.compactMap(\.model) }.reversed()
        }
        for model in models {
            let matches = model._entities.filter { entity in
                guard let name = entity._managedObjectClassName else { return false }
                return className(name, names: objectClass)
            }
            if let exact = matches.first(where: { $0._managedObjectClassName == String(reflecting: objectClass) }) {
                return exact
            }
            if let first = matches.first { return first }
        }
        return nil
    }

    /// The class of the objects of `entity`.
    static func objectClass(for entity: NSEntityDescription) -> NSManagedObject.Type {
        guard let name = entity._managedObjectClassName, !name.isEmpty, name != "NSManagedObject" else {
            return NSManagedObject.self
        }
        let caches = entity._cachesUnretained
        if let known = caches._withUnsafeGuaranteedRef(\.objectClass) { return known }
        let found = state.withLock { $0.resolved[name] } ?? lookUp(name) ?? NSManagedObject.self
        state.withLock { $0.resolved[name] = found }
        // A name that fell back to `NSManagedObject` is looked up again: its class may register later.
        if found != NSManagedObject.self { caches._withUnsafeGuaranteedRef { $0.noteObjectClass(found) } }
        return found
    }

    private static func lookUp(_ name: String) -> NSManagedObject.Type? {
        let trimmed = name.hasPrefix(".") ? String(name.dropFirst()) : name
        if let registered = state.withLock({ $0.classesByName[trimmed]?.first }) { return registered }
        if trimmed.contains("."), let type = _typeByName(trimmed) as? NSManagedObject.Type {
            register(type)
            return type
        }
        let shortName = trimmed.split(separator: ".").last.map(String.init) ?? trimmed
        let qualifiedNames = imageIndex()[shortName] ?? []
        for qualified in qualifiedNames {
            if let type = _typeByName(qualified) as? NSManagedObject.Type {
                register(type)
                return type
            }
        }
        return nil
    }

    /// The one `NSObject` subclass of the loaded images whose unqualified name is `name`, as the Objective-C runtime
    /// finds an `@objc(Name)` class (see `NSClassFromString`); `nil` if there is none or several.
    static func objectiveCStyleClass(named name: String) -> AnyClass? {
        guard !name.isEmpty, !name.contains(".") else { return nil }
        if let registered = state.withLock({ $0.classesByName[name] }), registered.count == 1 { return registered[0] }
        let candidates = (imageIndex()[name] ?? []).compactMap { _typeByName($0) as? NSObject.Type }
        return candidates.count == 1 ? candidates[0] : nil
    }

    /// Class names of every loaded Swift image, short name to module-qualified names.
    private static func imageIndex() -> [String: [String]] {
        if let index = state.withLock({ $0.imageIndex }) { return index }
        let index = SwiftImageClassIndex.build()
        state.withLock { $0.imageIndex = index }
        return index
    }
}

/// The class of the entity asked for last, for loops that make objects of rows: rows come mostly of one entity, and
/// finding a class takes a lock. The entity is remembered by identity, not retained: the rows' IDs hold it.
struct LastObjectClass {
    private var entity: ObjectIdentifier?
    private var objectClass: NSManagedObject.Type = NSManagedObject.self

    mutating func of(_ entity: NSEntityDescription) -> NSManagedObject.Type {
        if ObjectIdentifier(entity) != self.entity {
            self.entity = ObjectIdentifier(entity)
            objectClass = ManagedObjectClassRegistry.objectClass(for: entity)
        }
        return objectClass
    }
}
