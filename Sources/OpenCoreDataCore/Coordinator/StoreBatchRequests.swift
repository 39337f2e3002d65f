import Foundation

// Batch requests as stores execute them. The context resolves a request's entity against its model and checks its
// keys and values here, once for every store, so that a bad key fails the same way whichever store would have run
// the request, and a store only ever sees attributes that exist and values of the right type.

/// A new value of one attribute in a batch update.
package struct StoreBatchAssignment {
    package let attribute: NSAttributeDescription
    /// The attribute's slot in the layout of the request's entity (and of its subentities, which extend it).
    package let slot: Int
    /// The value, reduced to what every store evaluates alike.
    package let value: StoreBatchValue
    /// The expression as given, for stores that evaluate it against objects.
    package let expression: NSExpression
}

/// A value a batch update assigns: the expressions that SQL computes exactly as the in-memory evaluator does.
package indirect enum StoreBatchValue {
    /// A constant: assigned, converted to the attribute's type; in arithmetic, a number or a date.
    case constant(StoredValue)
    /// Another attribute of the same object.
    case attribute(NSAttributeDescription, slot: Int)
    /// The time of the update.
    case now
    /// `+`, `-`, `*` or `/` (by a constant other than zero) of numbers; a date plus or minus seconds.
    case arithmetic(StoreBatchOperator, StoreBatchValue, StoreBatchValue)
}

package enum StoreBatchOperator: String {
    case add = "add:to:"
    case subtract = "from:subtract:"
    case multiply = "multiply:by:"
    case divide = "divide:by:"
}

/// A batch update, its entity resolved and its values checked.
package struct StoreBatchUpdate {
    package let entity: NSEntityDescription
    package let predicate: NSPredicate?
    package let includesSubentities: Bool
    package let assignments: [StoreBatchAssignment]
    package let wantsObjectIDs: Bool
    /// Who runs the request, for stores that record persistent history.
    package var author = StoreTransactionAuthor()
}

/// A batch delete: the objects a fetch request (its entity resolved) matches, or the objects of a list of IDs.
package struct StoreBatchDelete {
    package let request: NSFetchRequest<NSFetchRequestResult>
    /// For a request made from IDs: those of them that belong to the store at hand.
    package let objectIDs: [NSManagedObjectID]?
    package let wantsObjectIDs: Bool
    /// Who runs the request, for stores that record persistent history.
    package var author = StoreTransactionAuthor()
}

/// A batch insert: the values of each object in the slot order of the entity's layout (attributes only;
/// relationships `.null`, to-many ones `.toManyFault`), one object per call of `next`, `nil` when done.
package struct StoreBatchInsert {
    package let entity: NSEntityDescription
    package let next: () throws -> StoredValues?
    package let wantsObjectIDs: Bool
    /// Who runs the request, for stores that record persistent history.
    package var author = StoreTransactionAuthor()
}

/// What a store did: how many objects, and their IDs when asked for.
package struct StoreBatchOutcome {
    package var count = 0
    package var objectIDs: [NSManagedObjectID] = []

    package init(count: Int = 0, objectIDs: [NSManagedObjectID] = []) {
        self.count = count
        self.objectIDs = objectIDs
    }

    mutating func add(_ other: StoreBatchOutcome) {
        count += other.count
        objectIDs += other.objectIDs
    }
}

/// A store that executes batch requests itself, in its own terms (set-based SQL for the SQLite store), each as one
/// transaction. Stores that do not are given batch requests through a private context, which fetches, changes and
/// saves their objects with the same results.
package protocol PersistentStoreBatchExecuting: PersistentStoreBackend {
    func executeBatchUpdate(_ update: StoreBatchUpdate) throws -> StoreBatchOutcome
    func executeBatchDelete(_ delete: StoreBatchDelete) throws -> StoreBatchOutcome
    func executeBatchInsert(_ insert: StoreBatchInsert) throws -> StoreBatchOutcome
}

// MARK: Checking requests

/// The error of a batch request that names a key its entity cannot take, or a value the key cannot hold.
func batchRequestError(_ message: String, key: String, entity: NSEntityDescription) -> NSError {
    coreDataError(
        NSPersistentStoreOperationError, message,
        userInfo: [NSValidationKeyErrorKey: key, "entity": entity._name ?? ""])
}

/// The error of a batch delete that a deny rule forbids: `entityName` objects to delete hold `remaining` objects that
/// are not deleted with them in `relationship`.
func batchDenyError(entityName: String, relationship: String, remaining: Int) -> NSError {
    coreDataError(
        NSValidationRelationshipDeniedDeleteError,
        """
        The batch delete would delete \(entityName) objects whose relationship '\(relationship)' still holds \
        \(remaining) object(s) that are not deleted with them, which its deny rule forbids; nothing was deleted
        """,
        userInfo: [NSValidationKeyErrorKey: relationship, "entity": entityName])
}

extension StoreBatchUpdate {
    /// Checks `request` (whose entity is `entity`) and reduces its values to `StoreBatchValue`s.
    init(_ request: NSBatchUpdateRequest, entity: NSEntityDescription) throws {
        let layout = entity._caches
        let entityName = entity._name ?? ""
        var assignments: [StoreBatchAssignment] = []
        for (key, raw) in request.propertiesToUpdate ?? [:] {
            let name: String
            switch key.base {
            case let string as String: name = string
            case let property as NSPropertyDescription: name = property._name
            default:
                throw batchRequestError(
                    "The keys of propertiesToUpdate are attribute names or NSAttributeDescriptions, not \(key.base)",
                    key: "\(key.base)", entity: entity)
            }
            let attribute = try Self.attribute(name, of: entity, layout: layout, role: "update")
            let slot = layout.slotByName[name]!
            let expression = raw as? NSExpression ?? NSExpression(forConstantValue: raw)
            let value = try Self.value(expression, for: attribute, key: name, entity: entity, layout: layout)
            assignments.append(
                StoreBatchAssignment(attribute: attribute, slot: slot, value: value, expression: expression))
        }
        guard !assignments.isEmpty else {
            throw batchRequestError(
                "The NSBatchUpdateRequest for '\(entityName)' has no propertiesToUpdate: give at least one attribute "
                    + "and its new value",
                key: "propertiesToUpdate", entity: entity)
        }
        assignments.sort { $0.slot < $1.slot }
        if let predicate = request.predicate {
            try checkKeys(of: predicate, entity: entity)
        }
        self.init(
            entity: entity, predicate: request.predicate, includesSubentities: request.includesSubentities,
            assignments: assignments, wantsObjectIDs: request.resultType == .updatedObjectIDsResultType)
    }

    /// The stored attribute `name` of `entity`, or an error naming it.
    static func attribute(_ name: String, of entity: NSEntityDescription, layout: EntityCache, role: String) throws
        -> NSAttributeDescription
    {
        let entityName = entity._name ?? ""
        guard let slot = layout.slotByName[name] else {
            throw batchRequestError(
                "Entity '\(entityName)' has no property '\(name)' to \(role)", key: name, entity: entity)
        }
        switch layout.kinds[slot] {
        case .attribute:
            guard let attribute = layout.slots[slot].property as? NSAttributeDescription, !attribute._isTransient else {
                throw batchRequestError(
                    "'\(name)' of entity '\(entityName)' is transient: batch requests change what is stored only",
                    key: name, entity: entity)
            }
            return attribute
        case .derived:
            throw batchRequestError(
                "'\(name)' of entity '\(entityName)' is a derived attribute, which the store computes", key: name,
                entity: entity)
        case .toOne, .toMany, .fetched:
            throw batchRequestError(
                "'\(name)' of entity '\(entityName)' is not an attribute: batch requests \(role) attributes only",
                key: name, entity: entity)
        }
    }

    private static func value(
        _ expression: NSExpression, for attribute: NSAttributeDescription, key: String, entity: NSEntityDescription,
        layout: EntityCache
    ) throws -> StoreBatchValue {
        let type = attribute._attributeType
        let entityName = entity._name ?? ""
        switch expression.kind {
        case .constant(let constant):
            guard let stored = StoredValue.attributeValue(constant, type: type) else {
                let given = constant.map { "\(Swift.type(of: $0))" } ?? "nil"
                throw batchRequestError(
                    "The new value of '\(key)' of entity '\(entityName)' is a \(given), which "
                        + "an attribute of type \(type) cannot hold",
                    key: key, entity: entity)
            }
            return .constant(stored)
        default:
            break
        }
        let value = try operand(expression, key: key, entity: entity, layout: layout)
        let kind = try Self.kind(of: value, key: key, entity: entity)
        let compatible: Bool
        switch (kind, type) {
        case (.number, .integer16AttributeType), (.number, .integer32AttributeType),
            (.number, .integer64AttributeType), (.number, .doubleAttributeType), (.number, .floatAttributeType):
            compatible = true
        case (.date, .dateAttributeType):
            compatible = true
        case (.same(let source), _):
            compatible = source == type && !Self.isOpaque(source)
        default:
            compatible = false
        }
        guard compatible else {
            throw batchRequestError(
                "The new value of '\(key)' of entity '\(entityName)' is \(kind) where an attribute of type \(type) is "
                    + "updated: give a constant of its type, or an expression of the same kind",
                key: key, entity: entity)
        }
        return value
    }

    /// Values whose stored form SQL cannot compute with, or copy from one attribute to another safely.
    private static func isOpaque(_ type: NSAttributeType) -> Bool {
        switch type {
        case .transformableAttributeType, .compositeAttributeType, .undefinedAttributeType, .objectIDAttributeType:
            return true
        default:
            return false
        }
    }

    /// What a value expression computes.
    enum ValueKind: CustomStringConvertible {
        case number
        case date
        /// An attribute's value as it is (of its type).
        case same(NSAttributeType)

        var description: String {
            switch self {
            case .number: return "a number"
            case .date: return "a date"
            case .same(let type): return "an attribute of type \(type)"
            }
        }
    }

    private static func kind(of value: StoreBatchValue, key: String, entity: NSEntityDescription) throws
        -> ValueKind
    {
        switch value {
        case .constant(.date), .now: return .date
        case .constant: return .number
        case .attribute(let attribute, _):
            switch attribute._attributeType {
            case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .doubleAttributeType,
                .floatAttributeType:
                return .number
            case .dateAttributeType: return .date
            case let other: return .same(other)
            }
        case .arithmetic(let operation, let lhs, let rhs):
            let left = try kind(of: lhs, key: key, entity: entity)
            let right = try kind(of: rhs, key: key, entity: entity)
            switch (operation, left, right) {
            case (_, .number, .number): return .number
            // A date plus or minus seconds stays a date, as the in-memory evaluator computes it.
            case (.add, .date, .number), (.subtract, .date, .number): return .date
            default:
                throw batchRequestError(
                    "The new value of '\(key)' of entity '\(entity._name ?? "")' applies \(operation.rawValue) to "
                        + "\(left) and \(right): arithmetic takes numbers, or a date and a number of seconds",
                    key: key, entity: entity)
            }
        }
    }

    /// An operand of a value expression: a constant number or date, an attribute, `now()`, arithmetic.
    private static func operand(
        _ expression: NSExpression, key: String, entity: NSEntityDescription, layout: EntityCache
    ) throws -> StoreBatchValue {
        func unsupported(_ what: String) -> NSError {
            coreDataError(
                NSPersistentStoreUnsupportedRequestTypeError,
                """
                The new value of '\(key)' of entity '\(entity._name ?? "")' is \(what), which batch updates do not \
                compute: use constants, the object's own attributes, now() and +, -, * and / (by a constant other \
                than zero)
                """,
                userInfo: [NSValidationKeyErrorKey: key, "entity": entity._name ?? ""])
        }
        switch expression.kind {
        case .constant(let raw):
            let constant = PredicateValueComparison.unwrap(raw)
            if let date = constant.flatMap(PredicateValueComparison.date) { return .constant(.date(date)) }
            guard let constant, let number = PredicateNumber(constant) else {
                throw unsupported("arithmetic on a constant that is neither a number nor a date")
            }
            switch number {
            case .int(let value): return .constant(.int(value))
            case .double(let value): return .constant(.double(value))
            case .uint, .decimal: throw unsupported("arithmetic on an unsigned or decimal constant")
            }
        case .keyPath(_, let components, nil) where components.count == 1:
            let name = components[0]
            let attribute = try attribute(name, of: entity, layout: layout, role: "read")
            return .attribute(attribute, slot: layout.slotByName[name]!)
        case .function("now", nil, let arguments) where arguments.isEmpty:
            return .now
        case .function(let name, nil, let arguments) where arguments.count == 2:
            guard let operation = StoreBatchOperator(rawValue: name) else {
                throw unsupported("the function \(name)")
            }
            let lhs = try operand(arguments[0], key: key, entity: entity, layout: layout)
            let rhs = try operand(arguments[1], key: key, entity: entity, layout: layout)
            if operation == .divide {
                // SQL divides by zero into NULL, memory into infinity: only constant divisors are computed alike.
                switch rhs {
                case .constant(.int(let divisor)) where divisor != 0: break
                case .constant(.double(let divisor)) where divisor != 0 && divisor.isFinite: break
                default: throw unsupported("a division by something other than a constant other than zero")
                }
            }
            return .arithmetic(operation, lhs, rhs)
        case .keyPath:
            throw unsupported("a key path through a relationship or a collection operator")
        default:
            throw unsupported("the expression \(expression)")
        }
    }
}

extension StoreBatchInsert {
    /// The values of one object to insert, from a dictionary of attribute values by name (its other attributes get
    /// their defaults).
    static func values(
        of dictionary: some Sequence<(key: String, value: Any)>, entity: NSEntityDescription, layout: EntityCache
    ) throws -> StoredValues {
        var values = layout.initialValues
        for (name, raw) in dictionary {
            let attribute = try StoreBatchUpdate.attribute(name, of: entity, layout: layout, role: "insert")
            guard let stored = StoredValue.attributeValue(raw, type: attribute._attributeType) else {
                throw batchRequestError(
                    "The value of '\(name)' for entity '\(entity._name ?? "")' is a \(type(of: raw)), which an "
                        + "attribute of type \(attribute._attributeType) cannot hold",
                    key: name, entity: entity)
            }
            values[layout.slotByName[name]!] = stored
        }
        return values
    }

    /// The values of an object a `managedObjectHandler` filled: its attributes (relationships cannot be inserted).
    static func values(of object: NSManagedObject, entity: NSEntityDescription, layout: EntityCache) throws
        -> StoredValues
    {
        var values = layout.initialValues
        func refuse(_ slot: Int) -> NSError {
            let name = layout.slots[slot].name
            return batchRequestError(
                "The managedObjectHandler set relationship '\(name)' of entity '\(entity._name ?? "")': batch inserts "
                    + "set attributes only",
                key: name, entity: entity)
        }
        for slot in layout.slots.indices where slot < object._values.count {
            let value = object._values[slot]
            switch layout.kinds[slot] {
            case .attribute:
                if layout.slots[slot].isPersistent { values[slot] = value }
            case .toOne:
                if case .null = value { continue }
                throw refuse(slot)
            case .toMany:
                if case .toMany(let contents) = value, !contents.objects.isEmpty { throw refuse(slot) }
            case .derived, .fetched:
                continue
            }
        }
        return values
    }
}

/// Checks that every key path of `predicate` starts with a property of `entity` (or of one of its subentities) and
/// follows relationships from there, so that a misspelt key fails with its name rather than as a query no store
/// can run.
func checkKeys(of predicate: NSPredicate, entity: NSEntityDescription) throws {
    func check(_ predicate: NSPredicate) throws {
        switch predicate {
        case let compound as NSCompoundPredicate:
            for child in compound.predicates { try check(child) }
        case let comparison as NSComparisonPredicate:
            try check(comparison.leftExpression)
            try check(comparison.rightExpression)
        default:
            if case .decoded(let inner) = predicate.predicateKind { try check(inner) }
        }
    }
    func check(_ expression: NSExpression) throws {
        switch expression.kind {
        case .keyPath(_, let components, nil):
            try checkPath(components[...], from: entity)
        case .function(_, let target, let arguments):
            if let target { try check(target) }
            for argument in arguments { try check(argument) }
        case .aggregate(let expressions):
            for child in expressions { try check(child) }
        case .unionSet(let a, let b), .intersectSet(let a, let b), .minusSet(let a, let b):
            try check(a)
            try check(b)
        case .subquery(let collection, _, _):
            // The subquery's own predicate ranges over the collection's elements, of another entity.
            try check(collection)
        case .conditional(_, let a, let b):
            try check(a)
            try check(b)
        default:
            break
        }
    }
    func checkPath(_ components: ArraySlice<String>, from entity: NSEntityDescription) throws {
        guard let key = components.first, !key.hasPrefix("@"), key != "self", key != "SELF" else { return }
        let candidates = [entity] + allSubentities(of: entity)
        guard let property = candidates.lazy.compactMap({ $0._caches.propertiesByName[key] }).first else {
            throw coreDataError(
                NSPersistentStoreOperationError,
                "The predicate names '\(key)', which is not a property of entity '\(entity._name ?? "")'",
                userInfo: [NSValidationKeyErrorKey: key, "entity": entity._name ?? ""])
        }
        if let relationship = property as? NSRelationshipDescription, let destination = relationship._destinationEntity
        {
            try checkPath(components.dropFirst(), from: destination)
        }
    }
    func allSubentities(of entity: NSEntityDescription) -> [NSEntityDescription] {
        entity._subentities.flatMap { [$0] + allSubentities(of: $0) }
    }
    try check(predicate)
}
