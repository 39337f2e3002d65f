import Foundation
import OpenCoreData

extension DictionaryStore {
    /// Answers a fetch request from the saved rows: the rows of the entity (and its subentities, if asked) that the
    /// predicate matches, sorted, offset and limited, as objects of `context`, IDs, dictionaries or a count.
    func fetch(_ request: NSFetchRequest<NSFetchRequestResult>, context: NSManagedObjectContext?) throws -> [Any] {
        let model = persistentStoreCoordinator?.managedObjectModel
        guard let entity = request.entity ?? request.entityName.flatMap({ model?.entitiesByName[$0] }) else {
            throw CocoaError(
                .persistentStoreOperation,
                userInfo: [NSLocalizedDescriptionKey: "DictionaryStore was asked for a fetch without an entity"])
        }
        let database = self.database
        let graph = SnapshotGraph(store: self, rows: database.lock.withLock { database.rows })
        var matches = graph.snapshots(of: entity, includingSubentities: request.includesSubentities)
        if let predicate = request.predicate {
            let rewritten = graph.rewrite(predicate)
            matches = matches.filter { rewritten.evaluate(with: $0) }
        }
        if let descriptors = request.sortDescriptors, !descriptors.isEmpty {
            matches = matches.sorted(using: descriptors)
        }
        if request.resultType == .dictionaryResultType {
            return limited(try dictionaries(of: matches, request: request, entity: entity), request)
        }
        matches = limited(matches, request)
        switch request.resultType {
        case .countResultType:
            return [NSNumber(value: matches.count)]
        case .managedObjectIDResultType:
            return matches.map(\.objectID)
        default:
            guard let context else {
                throw CocoaError(
                    .persistentStoreOperation,
                    userInfo: [NSLocalizedDescriptionKey: "DictionaryStore needs a context to return objects in"])
            }
            return matches.map { context.object(with: $0.objectID) }
        }
    }

    private func limited<T>(_ elements: [T], _ request: NSFetchRequest<NSFetchRequestResult>) -> [T] {
        var result = elements
        if request.fetchOffset > 0 { result = Array(result.dropFirst(request.fetchOffset)) }
        if request.fetchLimit > 0 { result = Array(result.prefix(request.fetchLimit)) }
        return result
    }

    // MARK: Dictionaries

    /// One column of dictionary results: the key it is returned under and the expression that computes it.
    private struct Column {
        let key: String
        let expression: NSExpression
        /// `sum:`, `count:`, `min:`, `max:` or `average:` of `expression`'s one argument, over a group.
        let aggregate: String?
        /// The description's `expressionResultType`: decimal results are computed in decimals.
        var resultType: NSAttributeType = .undefinedAttributeType
    }

    private static let aggregates: Set<String> = ["sum:", "count:", "min:", "max:", "average:"]

    private func column(_ property: Any) -> Column? {
        switch property {
        case let description as NSExpressionDescription:
            guard let expression = description.expression else { return nil }
            if expression.expressionType == .function, Self.aggregates.contains(expression.function),
                let argument = expression.arguments?.first
            {
                return Column(
                    key: description.name, expression: argument, aggregate: expression.function,
                    resultType: description.expressionResultType)
            }
            return Column(
                key: description.name, expression: expression, aggregate: nil,
                resultType: description.expressionResultType)
        case let description as NSPropertyDescription:
            return Column(key: description.name, expression: NSExpression(forKeyPath: description.name), aggregate: nil)
        case let keyPath as String:
            return Column(key: keyPath, expression: NSExpression(forKeyPath: keyPath), aggregate: nil)
        default:
            return nil
        }
    }

    /// The dictionary results of `matches`: one per object, or one per group (with aggregates over each group's
    /// objects) when the request groups or aggregates.
    private func dictionaries(
        of matches: [RowSnapshot], request: NSFetchRequest<NSFetchRequestResult>, entity: NSEntityDescription
    ) throws -> [NSDictionary] {
        let properties: [Any] =
            request.propertiesToFetch
            ?? entity.attributesByName.values.filter { !$0.isTransient }.map(\.name).sorted()
        let columns = properties.compactMap(column)
        let groupBy = (request.propertiesToGroupBy ?? []).compactMap(column)
        var results: [NSDictionary] = []
        if groupBy.isEmpty, !columns.contains(where: { $0.aggregate != nil }) {
            for snapshot in matches {
                let dictionary = NSMutableDictionary()
                for column in columns {
                    if let value = value(of: column.expression, for: snapshot) {
                        dictionary[column.key] = column.resultType == .decimalAttributeType ? decimal(value) : value
                    }
                }
                results.append(dictionary)
            }
        } else {
            var order: [[AnyHashable]] = []
            var groups: [[AnyHashable]: [RowSnapshot]] = [:]
            for snapshot in matches {
                let key = groupBy.map { column -> AnyHashable in
                    let value = value(of: column.expression, for: snapshot)
                    // Foundation on Linux recurses without end hashing an NSDecimalNumber; its decimal hashes.
                    if let number = value as? NSDecimalNumber { return AnyHashable(number.decimalValue) }
                    return (value as? AnyHashable) ?? AnyHashable(NSNull())
                }
                if groups[key] == nil { order.append(key) }
                groups[key, default: []].append(snapshot)
            }
            if groupBy.isEmpty, order.isEmpty {
                order = [[]]
                groups[[]] = []
            }
            // Groups in the order of their values, no value first, as SQL's ORDER BY of the grouped columns gives.
            order.sort { a, b in
                for (x, y) in zip(a, b) {
                    let order = Self.compare(x, y)
                    if order != .orderedSame { return order == .orderedAscending }
                }
                return false
            }
            for key in order {
                let members = groups[key] ?? []
                let dictionary = NSMutableDictionary()
                for column in columns {
                    let value: Any?
                    if let aggregate = column.aggregate {
                        value = self.aggregate(
                            aggregate, of: members.map { self.value(of: column.expression, for: $0) },
                            type: column.resultType)
                    } else {
                        value = members.first.flatMap { self.value(of: column.expression, for: $0) }
                    }
                    if let value { dictionary[column.key] = value }
                }
                // A having predicate names the columns by key or as variables (`$count`).
                if let having = request.havingPredicate,
                    !having.evaluate(with: dictionary, substitutionVariables: dictionary as? [String: Any] ?? [:])
                {
                    continue
                }
                results.append(dictionary)
            }
            if let descriptors = request.sortDescriptors, !descriptors.isEmpty {
                // The keys name result columns ("department.name" is a key of the dictionaries, not a path in them).
                results = results.enumerated().sorted { a, b in
                    for descriptor in descriptors {
                        let key = descriptor.key ?? ""
                        let order = Self.compare(
                            a.element[key] as? AnyHashable ?? AnyHashable(NSNull()),
                            b.element[key] as? AnyHashable ?? AnyHashable(NSNull()))
                        if order != .orderedSame {
                            return (order == .orderedAscending) == descriptor.ascending
                        }
                    }
                    return a.offset < b.offset
                }.map(\.element)
            }
        }
        if request.returnsDistinctResults {
            var distinct: [NSDictionary] = []
            for dictionary in results where !distinct.contains(where: { $0.isEqual(dictionary) }) {
                distinct.append(dictionary)
            }
            results = distinct
        }
        return results
    }

    /// An expression's value for one object: relationships as the destinations' IDs, as dictionary results hold them.
    private func value(of expression: NSExpression, for snapshot: RowSnapshot) -> Any? {
        let value = expression.expressionValue(with: snapshot, context: nil)
        switch value {
        case let destination as RowSnapshot: return destination.objectID
        case is NSNull: return nil
        default: return value
        }
    }

    /// Grouped values in SQL's order: no value first, IDs by their URIs, others by `compare:`.
    private static func compare(_ a: AnyHashable, _ b: AnyHashable) -> ComparisonResult {
        switch (a.base, b.base) {
        case (is NSNull, is NSNull): return .orderedSame
        case (is NSNull, _): return .orderedAscending
        case (_, is NSNull): return .orderedDescending
        case (let x as NSManagedObjectID, let y as NSManagedObjectID):
            let left = x.uriRepresentation().absoluteString
            let right = y.uriRepresentation().absoluteString
            return left == right ? .orderedSame : (left < right ? .orderedAscending : .orderedDescending)
        case (let x as String, let y as String):
            return x == y ? .orderedSame : (x < y ? .orderedAscending : .orderedDescending)
        case (let x as Date, let y as Date):
            return x.compare(y)
        case (let x as Decimal, let y as Decimal):
            return x == y ? .orderedSame : (x < y ? .orderedAscending : .orderedDescending)
        case (let x as NSNumber, let y as NSNumber):
            return x.compare(y)
        default:
            return .orderedSame
        }
    }

    /// A number as a decimal number.
    private func decimal(_ value: Any) -> Any {
        switch value {
        case let number as NSDecimalNumber: return number
        case let decimal as Decimal: return NSDecimalNumber(decimal: decimal)
        case let number as NSNumber: return NSDecimalNumber(string: number.stringValue)
        default: return value
        }
    }

    private func aggregate(_ function: String, of values: [Any?], type: NSAttributeType) -> Any? {
        let present = values.compactMap { $0 }
        if function == "count:" { return NSNumber(value: present.count) }
        if type == .decimalAttributeType, function == "sum:" || function == "average:" {
            let decimals = present.compactMap { (decimal($0) as? NSDecimalNumber)?.decimalValue }
            guard !decimals.isEmpty else { return nil }
            let sum = decimals.reduce(Decimal(0), +)
            return NSDecimalNumber(decimal: function == "sum:" ? sum : sum / Decimal(decimals.count))
        }
        let numbers = present.compactMap { $0 as? NSNumber }
        switch function {
        case "sum:":
            // SQL's sum of no values is NULL.
            guard !numbers.isEmpty else { return nil }
            if numbers.allSatisfy({ Double($0.int64Value) == $0.doubleValue }) {
                return NSNumber(value: numbers.reduce(Int64(0)) { $0 + $1.int64Value })
            }
            return NSNumber(value: numbers.reduce(0.0) { $0 + $1.doubleValue })
        case "average:":
            guard !numbers.isEmpty else { return nil }
            return NSNumber(value: numbers.reduce(0.0) { $0 + $1.doubleValue } / Double(numbers.count))
        case "min:", "max:":
            let sorted = (present as NSArray).sortedArray(using: [NSSortDescriptor(key: "self", ascending: true)])
            return function == "min:" ? sorted.first : sorted.last
        default:
            return nil
        }
    }
}

/// The saved rows of a store as objects that predicates and sort descriptors read by key: each row's attributes, and
/// its relationships as the snapshots of their destinations. Made per fetch, from the rows as they were then.
final class SnapshotGraph {
    unowned let store: DictionaryStore
    let rows: [String: DictionaryStore.Row]
    private var made: [String: RowSnapshot] = [:]
    private let model: NSManagedObjectModel?

    init(store: DictionaryStore, rows: [String: DictionaryStore.Row]) {
        self.store = store
        self.rows = rows
        model = store.persistentStoreCoordinator?.managedObjectModel
    }

    func snapshot(_ key: String) -> RowSnapshot? {
        if let existing = made[key] { return existing }
        guard let row = rows[key], let entity = model?.entitiesByName[row.entityName] else { return nil }
        let snapshot = RowSnapshot(
            key: key, row: row, entity: entity, objectID: store.newObjectID(for: entity, referenceObject: key),
            graph: self)
        made[key] = snapshot
        return snapshot
    }

    /// The snapshots of the rows of `entity` (and its subentities), in the order the rows were made.
    func snapshots(of entity: NSEntityDescription, includingSubentities: Bool) -> [RowSnapshot] {
        let keys = rows.keys.sorted { (Int($0.dropFirst()) ?? 0) < (Int($1.dropFirst()) ?? 0) }
        return keys.compactMap(snapshot).filter { snapshot in
            if snapshot.entity === entity { return true }
            guard includingSubentities else { return false }
            var parent = snapshot.entity.superentity
            while let candidate = parent {
                if candidate === entity { return true }
                parent = candidate.superentity
            }
            return false
        }
    }

    /// `predicate` with managed objects and object IDs among its constants replaced by their rows' snapshots, so that
    /// a relationship compares equal to the object it holds.
    func rewrite(_ predicate: NSPredicate) -> NSPredicate {
        switch predicate {
        case let compound as NSCompoundPredicate:
            let subpredicates = compound.subpredicates.compactMap { $0 as? NSPredicate }.map(rewrite)
            return NSCompoundPredicate(type: compound.compoundPredicateType, subpredicates: subpredicates)
        case let comparison as NSComparisonPredicate:
            guard comparison.customSelector == nil else { return comparison }
            return NSComparisonPredicate(
                leftExpression: rewrite(comparison.leftExpression),
                rightExpression: rewrite(comparison.rightExpression),
                modifier: comparison.comparisonPredicateModifier, type: comparison.predicateOperatorType,
                options: comparison.options)
        default:
            return predicate
        }
    }

    private func rewrite(_ expression: NSExpression) -> NSExpression {
        guard expression.expressionType == .constantValue else { return expression }
        return NSExpression(forConstantValue: rewrite(constant: expression.constantValue))
    }

    private func rewrite(constant: Any?) -> Any? {
        switch constant {
        case let object as NSManagedObject: return ghost(object.objectID)
        case let objectID as NSManagedObjectID: return ghost(objectID)
        case let array as [Any]: return array.map { rewrite(constant: $0) ?? NSNull() }
        case let set as Set<NSManagedObject>: return set.map { ghost($0.objectID) }
        case let set as Set<NSManagedObjectID>: return set.map(ghost)
        default: return constant
        }
    }

    /// The snapshot standing for `objectID` in comparisons: its row's, or (for an object the store does not have) one
    /// that equals nothing else.
    private func ghost(_ objectID: NSManagedObjectID) -> Any {
        guard objectID.persistentStore === store, let key = store.referenceObject(for: objectID) as? String,
            let snapshot = snapshot(key)
        else { return objectID }
        return snapshot
    }
}

/// One saved row, read by key.
final class RowSnapshot: NSObject, KeyValueCoding {
    let key: String
    let row: DictionaryStore.Row
    let entity: NSEntityDescription
    let objectID: NSManagedObjectID
    unowned let graph: SnapshotGraph

    init(
        key: String, row: DictionaryStore.Row, entity: NSEntityDescription, objectID: NSManagedObjectID,
        graph: SnapshotGraph
    ) {
        self.key = key
        self.row = row
        self.entity = entity
        self.objectID = objectID
        self.graph = graph
    }

    func value(forKey key: String) -> Any? {
        if let relationship = entity.relationshipsByName[key] {
            if relationship.isToMany {
                return (row.toMany[key] ?? []).compactMap(graph.snapshot)
            }
            return row.toOne[key].flatMap(graph.snapshot)
        }
        if entity.attributesByName[key] != nil { return row.attributes[key] }
        switch key {
        case "self": return self
        case "objectID": return objectID
        case "entity": return entity
        default: return nil
        }
    }

    override func isEqual(_ object: Any?) -> Bool {
        (object as? RowSnapshot)?.objectID == objectID
    }

    override var hash: Int { objectID.hash }
}
