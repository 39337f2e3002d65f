import Foundation

// Dictionary results as stores compute them. The context resolves `propertiesToFetch` and `propertiesToGroupBy`
// against the model once, for every store: each column is a key path (through to-one relationships, to an attribute
// or a to-one relationship) or an expression, with the type its values come back as. The SQLite store computes the
// rows with one SELECT; other stores are given the objects' stored values through a private context, and
// `StoreDictionaryFetch.rows(of:)` computes the same rows from them.

/// The aggregate functions dictionary results compute per group (or over all matching objects).
package enum StoreAggregate: String {
    case sum = "sum:"
    case count = "count:"
    case min = "min:"
    case max = "max:"
    case average = "average:"
}

/// One column of dictionary results.
package struct StoreDictionaryColumn {
    package enum Value {
        /// A key path through to-one relationships to an attribute (its value) or a to-one relationship (the
        /// destination's object ID).
        case keyPath([String], NSPropertyDescription)
        /// An aggregate of an expression over the objects of a group.
        case aggregate(StoreAggregate, NSExpression)
        /// An expression of one object.
        case expression(NSExpression)
    }

    /// The key of the column's values in the result dictionaries.
    package let key: String
    package let value: Value
    /// The type the values come back as; `.undefinedAttributeType` returns them as computed.
    package let resultType: NSAttributeType

    package var isAggregate: Bool {
        if case .aggregate = value { return true }
        return false
    }
}

/// A fetch of dictionary results: the request (its entity resolved), the columns, the grouping and its predicate.
package struct StoreDictionaryFetch {
    package let request: NSFetchRequest<NSFetchRequestResult>
    package let entity: NSEntityDescription
    package let columns: [StoreDictionaryColumn]
    package let groupBy: [StoreDictionaryColumn]
    /// Tests the result dictionaries of groups: its key paths and variables name columns.
    package let having: NSPredicate?
}

/// A store that computes dictionary results itself (the SQLite store, with one SELECT).
package protocol PersistentStoreDictionaryFetching: PersistentStoreBackend {
    func fetchDictionaries(_ fetch: StoreDictionaryFetch) throws -> [NSDictionary]
}

extension StoreDictionaryFetch {
    /// Resolves the columns of `request` (whose entity is `entity`).
    ///
    /// - Precondition: the properties name attributes or to-one relationships of `entity` (through to-one
    ///   relationships), or are expression descriptions with an expression; grouped requests fetch only grouped
    ///   properties and expression descriptions; a having predicate comes with grouping — the mistakes Apple raises exceptions for.
    init(_ request: NSFetchRequest<NSFetchRequestResult>, entity: NSEntityDescription) {
        let entityName = entity._name ?? ""
        func column(_ property: Any, role: String) -> StoreDictionaryColumn {
            switch property {
            case let description as NSExpressionDescription:
                // Without an expression, the description names a property, as any property description does.
                guard let expression = description._expression else { return column(description._name, role: role) }
                precondition(
                    !description._name.isEmpty, "An NSExpressionDescription in \(role) has no name to return it under")
                if case .function(let name, nil, let arguments) = expression.kind, arguments.count == 1,
                    let aggregate = StoreAggregate(rawValue: name)
                {
                    let type =
                        description._expressionResultType != .undefinedAttributeType
                        ? description._expressionResultType
                        : Self.aggregateType(aggregate, of: arguments[0], entity: entity)
                    return StoreDictionaryColumn(
                        key: description._name, value: .aggregate(aggregate, arguments[0]), resultType: type)
                }
                if case .keyPath(_, let components, nil) = expression.kind,
                    let final = Self.property(at: components, of: entity)
                {
                    return StoreDictionaryColumn(
                        key: description._name, value: .keyPath(components, final),
                        resultType: description._expressionResultType)
                }
                let type =
                    description._expressionResultType != .undefinedAttributeType
                    ? description._expressionResultType : Self.expressionType(expression, entity: entity)
                return StoreDictionaryColumn(key: description._name, value: .expression(expression), resultType: type)
            case let description as NSPropertyDescription:
                return column(description._name, role: role)
            case let keyPath as String:
                let components = KeyValueCodingPath.split(keyPath)
                guard let final = Self.property(at: components, of: entity) else {
                    preconditionFailure(
                        """
                        Invalid keypath '\(keyPath)' passed to \(role): it does not lead through to-one relationships \
                        of entity '\(entityName)' to an attribute or a to-one relationship
                        """)
                }
                let type = (final as? NSAttributeDescription)?._attributeType ?? .undefinedAttributeType
                return StoreDictionaryColumn(key: keyPath, value: .keyPath(components, final), resultType: type)
            default:
                preconditionFailure(
                    "\(role) takes property names, NSPropertyDescriptions and NSExpressionDescriptions, not \(property)"
                )
            }
        }
        let groupBy = (request.propertiesToGroupBy ?? []).map { column($0, role: "propertiesToGroupBy") }
        var columns: [StoreDictionaryColumn]
        if let properties = request.propertiesToFetch {
            columns = properties.map { column($0, role: "propertiesToFetch") }
        } else {
            // Every stored attribute, as Apple returns when no properties are named.
            columns = entity._caches.slots.compactMap { slot in
                guard case .attribute = slot.kind, slot.isPersistent else { return nil }
                return column(slot.name, role: "propertiesToFetch")
            }
        }
        if !groupBy.isEmpty {
            precondition(
                request.resultType == .dictionaryResultType,
                "propertiesToGroupBy requires the dictionary result type (.dictionaryResultType)")
            let grouped = Set(groupBy.map(\.key))
            // Expression descriptions are taken as they are, as Apple's framework takes them: one that is not an
            // aggregate (a to-many relationship's `@count`, say) is the value of one object of each group, as SQLite
            // computes a bare column of a grouped SELECT.
            let described = Set(
                (request.propertiesToFetch ?? []).compactMap { ($0 as? NSExpressionDescription)?._name })
            for column in columns
            where !column.isAggregate && !grouped.contains(column.key) && !described.contains(column.key) {
                preconditionFailure(
                    """
                    Invalid propertiesToFetch: '\(column.key)' is neither in propertiesToGroupBy nor an aggregate; \
                    with grouping, fetch grouped properties and aggregates (sum:, count:, min:, max:, average:)
                    """)
            }
        } else if columns.contains(where: \.isAggregate) {
            for column in columns where !column.isAggregate {
                preconditionFailure(
                    """
                    Invalid propertiesToFetch: '\(column.key)' is fetched along with aggregates without \
                    propertiesToGroupBy; group by it, or fetch aggregates only
                    """)
            }
        }
        precondition(
            request.havingPredicate == nil || !groupBy.isEmpty,
            "A havingPredicate requires propertiesToGroupBy, as Apple documents")
        self.init(
            request: request, entity: entity, columns: columns, groupBy: groupBy, having: request.havingPredicate)
    }

    /// The attribute or to-one relationship a key path through to-one relationships leads to.
    static func property(at components: [String], of entity: NSEntityDescription) -> NSPropertyDescription? {
        var current = entity
        for (index, key) in components.enumerated() {
            guard let property = current._caches.propertiesByName[key] else { return nil }
            let isLast = index == components.count - 1
            switch property {
            case let relationship as NSRelationshipDescription:
                guard !relationship.isToMany else { return nil }
                if isLast { return relationship }
                guard let destination = relationship._destinationEntity else { return nil }
                current = destination
            case let attribute as NSAttributeDescription:
                return isLast ? attribute : nil
            default:
                return nil
            }
        }
        return nil
    }

    /// The type an aggregate's values come back as when the description does not say: `count:` an integer,
    /// `average:` a double, `sum:` an integer of integers and a double otherwise, `min:` and `max:` the argument's.
    static func aggregateType(_ aggregate: StoreAggregate, of argument: NSExpression, entity: NSEntityDescription)
        -> NSAttributeType
    {
        let type = expressionType(argument, entity: entity)
        switch aggregate {
        case .count: return .integer64AttributeType
        case .average: return .doubleAttributeType
        case .sum:
            switch type {
            case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .booleanAttributeType:
                return .integer64AttributeType
            case .decimalAttributeType: return .decimalAttributeType
            default: return .doubleAttributeType
            }
        case .min, .max: return type
        }
    }

    /// The type of an expression's values, where the model tells it.
    static func expressionType(_ expression: NSExpression, entity: NSEntityDescription) -> NSAttributeType {
        let integers: Set<NSAttributeType> = [
            .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .booleanAttributeType,
        ]
        switch expression.kind {
        case .keyPath(_, let components, nil):
            return (property(at: components, of: entity) as? NSAttributeDescription)?._attributeType
                ?? .undefinedAttributeType
        case .constant(let raw):
            guard let value = PredicateValueComparison.unwrap(raw) else { return .undefinedAttributeType }
            if value is Date { return .dateAttributeType }
            if value is String { return .stringAttributeType }
            switch PredicateNumber(value) {
            case .int?: return .integer64AttributeType
            case .double?: return .doubleAttributeType
            case .decimal?: return .decimalAttributeType
            default: return .undefinedAttributeType
            }
        case .function(let name, nil, let arguments) where arguments.count == 2:
            let left = expressionType(arguments[0], entity: entity)
            let right = expressionType(arguments[1], entity: entity)
            if left == .dateAttributeType, name == "add:to:" || name == "from:subtract:" { return .dateAttributeType }
            if name != "divide:by:", integers.contains(left), integers.contains(right) {
                return .integer64AttributeType
            }
            return .doubleAttributeType
        case .function("now", nil, _):
            return .dateAttributeType
        default:
            return .undefinedAttributeType
        }
    }

    /// A computed value as its column returns it: converted to the column's type, or as it is.
    /// Numbers that are not finite (a division by zero) are `nil`, as SQL computes them; a number for a date is
    /// seconds since 2001, as the SQLite store keeps dates; a decimal is `decimal(computed:)`.
    package static func typed(_ value: Any?, _ type: NSAttributeType) -> Any? {
        guard let value = PredicateValueComparison.unwrap(value) else { return nil }
        let number = value is Date ? nil : PredicateNumber(value)
        if case .double(let double)? = number, !double.isFinite { return nil }
        guard type != .undefinedAttributeType else { return number?.object ?? value }
        if type == .dateAttributeType, let number { return Date(timeIntervalSinceReferenceDate: number.doubleValue) }
        if type == .decimalAttributeType, let number {
            return decimal(computed: number).map { NSDecimalNumber(decimal: $0) }
        }
        return StoredValue.attributeValue(value, type: type)?.publicValue
    }

    /// A computed number as a decimal result: an integer exactly, anything else at 15 significant digits.
    ///
    /// A SQLite store keeps decimals as integers or doubles (Apple's stores in the test corpus hold `10.11` as the
    /// REAL 10.11), so SQL sums, averages and arithmetic over them are computed in floating point: 1.1 + 2.2 is
    /// 3.3000000000000003 there. 15 significant digits are what a double holds of any decimal, what SQLite gives
    /// for a REAL as text and what a decimal column keeps, so the sum comes back as the decimal 3.3. Memory computes
    /// the same values (in decimals or doubles) and rounds them the same way, so every store gives the same decimals.
    static func decimal(computed number: PredicateNumber) -> Decimal? {
        let double: Double
        switch number {
        case .int(let value): return Decimal(value)
        case .uint(let value): return Decimal(value)
        case .double(let value): double = value
        case .decimal(let value): double = PredicateNumber.nearestDouble(value)
        }
        guard double.isFinite else { return nil }
        return Decimal(string: String(format: "%.15g", double), locale: Locale(identifier: "en_US_POSIX"))
    }
}

// MARK: Computing rows in memory

extension StoreDictionaryFetch {
    /// The result dictionaries of `objects` — the objects the request's predicate matches, in its order (without its
    /// offset and limit) — computed as the SQLite store's SELECT computes them: one row per object, or per group,
    /// or one for aggregates over all objects; groups in the order of their values unless sort descriptors say
    /// otherwise; the having predicate, distinctness, offset and limit applied last.
    func rows(of objects: [NSManagedObject]) -> [NSDictionary] {
        var rows: [[String: Any]]
        if groupBy.isEmpty, !columns.contains(where: \.isAggregate) {
            rows = objects.map { object in
                var row: [String: Any] = [:]
                for column in columns { row[column.key] = Self.value(of: column, for: object) }
                return row
            }
            if request.returnsDistinctResults {
                var seen = Set<NSDictionary>()
                rows = rows.filter { seen.insert(NSDictionary(dictionary: $0)).inserted }
            }
        } else {
            var groups: [(values: [Any?], objects: [NSManagedObject])] = []
            if groupBy.isEmpty {
                groups = [([], objects)]
            } else {
                var indexByKey: [[AnyHashable]: Int] = [:]
                for object in objects {
                    let values = groupBy.map { Self.value(of: $0, for: object) }
                    let key = values.map { $0.map(KeyValueCodingHashing.hashable) ?? AnyHashable(NSNull()) }
                    if let index = indexByKey[key] {
                        groups[index].objects.append(object)
                    } else {
                        indexByKey[key] = groups.count
                        groups.append((values, [object]))
                    }
                }
                groups.sort { a, b in Self.ascending(a.values, b.values) }
            }
            rows = groups.map { group in
                var row: [String: Any] = [:]
                for (column, value) in zip(groupBy, group.values) { row[column.key] = value }
                for column in columns {
                    switch column.value {
                    case .aggregate(let aggregate, let argument):
                        let value = Self.aggregate(aggregate, of: argument, over: group.objects)
                        if aggregate == .min || aggregate == .max, column.resultType == .decimalAttributeType,
                            case .decimal? = value.flatMap(PredicateNumber.init)
                        {
                            // The extreme of decimals is one of them, unrounded, as the SQLite store reads it.
                            row[column.key] = value
                        } else {
                            row[column.key] = Self.typed(value, column.resultType)
                        }
                    default:
                        if row[column.key] == nil, let first = group.objects.first {
                            row[column.key] = Self.value(of: column, for: first)
                        }
                    }
                }
                // Only the fetched properties are returned.
                let fetched = Set(columns.map(\.key))
                return row.filter { fetched.contains($0.key) || having != nil }
            }
            if let having {
                rows = rows.filter { row in having.evaluate(with: row, substitutionVariables: row) }
                let fetched = Set(columns.map(\.key))
                rows = rows.map { $0.filter { fetched.contains($0.key) } }
            }
            if !groupBy.isEmpty, let descriptors = request.sortDescriptors, !descriptors.isEmpty {
                // The sort keys name grouped columns ("department.name" is a key of the rows, not a path in them).
                func value(_ row: [String: Any], _ descriptor: NSSortDescriptor) -> Any? {
                    descriptor.key.flatMap { row[$0] } ?? descriptor.value(of: row)
                }
                rows = rows.enumerated().sorted { a, b in
                    for descriptor in descriptors {
                        let order = descriptor.compareValues(value(a.element, descriptor), value(b.element, descriptor))
                        if order != .orderedSame { return (order == .orderedAscending) == descriptor.ascending }
                    }
                    return a.offset < b.offset
                }.map(\.element)
            }
        }
        if request.fetchOffset > 0 { rows = Array(rows.dropFirst(request.fetchOffset)) }
        if request.fetchLimit > 0 { rows = Array(rows.prefix(request.fetchLimit)) }
        return rows.map { NSDictionary(dictionary: $0) }
    }

    /// A column's value for one object.
    static func value(of column: StoreDictionaryColumn, for object: NSManagedObject) -> Any? {
        switch column.value {
        case .keyPath(let components, let property):
            var current: NSManagedObject? = object
            for key in components.dropLast() {
                current = current?.value(forKey: key) as? NSManagedObject
            }
            guard let owner = current, let last = components.last else { return nil }
            let value = owner.value(forKey: last)
            if property is NSRelationshipDescription { return (value as? NSManagedObject)?.objectID }
            return PredicateValueComparison.unwrap(value)
        case .expression(let expression):
            return typed(expression.expressionValue(with: object, context: nil), column.resultType)
        case .aggregate:
            return nil
        }
    }

    /// An aggregate of `argument`'s values (those that are not `nil`) over `objects`, with SQL's meaning: `count:`
    /// counts them, the others are `nil` when there are none; sums of integers are integers.
    static func aggregate(_ aggregate: StoreAggregate, of argument: NSExpression, over objects: [NSManagedObject])
        -> Any?
    {
        let values = objects.compactMap { object -> Any? in
            if case .evaluatedObject = argument.kind { return object }
            return PredicateValueComparison.unwrap(argument.expressionValue(with: object, context: nil))
        }
        switch aggregate {
        case .count:
            return NSNumber(value: Int64(values.count))
        case .min, .max:
            return values.reduce(nil as Any?) { best, value in
                guard let best else { return value }
                let order = NSSortDescriptor.compare(value, best, selector: Selector("compare:"))
                return (aggregate == .min ? order == .orderedAscending : order == .orderedDescending) ? value : best
            }
        case .sum, .average:
            guard !values.isEmpty else { return nil }
            let numbers = values.compactMap { value -> PredicateNumber? in
                if let date = value as? Date { return .double(date.timeIntervalSinceReferenceDate) }
                // A whole decimal is an INTEGER in a SQLite store's decimal column, and SQL sums those exactly.
                if case .decimal(let decimal)? = PredicateNumber(value), let integer = Self.integer(decimal) {
                    return .int(integer)
                }
                return PredicateNumber(value)
            }
            if aggregate == .sum, numbers.allSatisfy({ if case .int = $0 { return true } else { return false } }) {
                return NSNumber(value: numbers.reduce(Int64(0)) { $0 &+ $1.int64Value })
            }
            let total = numbers.reduce(0.0) { $0 + $1.doubleValue }
            return NSNumber(value: aggregate == .sum ? total : total / Double(values.count))
        }
    }

    /// `decimal` as an integer, if it is a whole number a 64-bit integer holds.
    private static func integer(_ decimal: Decimal) -> Int64? {
        guard !decimal.isNaN else { return nil }
        var value = decimal
        var rounded = Decimal()
        NSDecimalRound(&rounded, &value, 0, .plain)
        guard rounded == decimal else { return nil }
        return Int64(NSDecimalNumber(decimal: decimal).stringValue)
    }

    /// The order of groups without sort descriptors, as SQL orders the grouped columns: `nil` first, objects by
    /// their keys, other values by `compare:`.
    static func ascending(_ a: [Any?], _ b: [Any?]) -> Bool {
        for (x, y) in zip(a, b) {
            let order: ComparisonResult
            switch (x, y) {
            case (nil, nil): order = .orderedSame
            case (nil, _): order = .orderedAscending
            case (_, nil): order = .orderedDescending
            case (let x as NSManagedObjectID, let y as NSManagedObjectID):
                order =
                    NSAtomicStore._order(x, y)
                    ? .orderedAscending : (NSAtomicStore._order(y, x) ? .orderedDescending : .orderedSame)
            case (let x?, let y?):
                order = NSSortDescriptor.compare(x, y, selector: Selector("compare:"))
            }
            if order != .orderedSame { return order == .orderedAscending }
        }
        return false
    }
}
