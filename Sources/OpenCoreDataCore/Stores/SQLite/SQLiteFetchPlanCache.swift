import Foundation

/// The plans of fetches that differ only in the values they compare attributes with.
///
/// Apps fetch the same kinds of requests again and again — an object by its identifier, the items of a category, a
/// page of a sorted list — with new values each time. Generating the SQL anew took more instructions than SQLite took
/// to run it (18,000 of a 77,000-instruction lookup by an indexed attribute), and the new SQL text also had to be
/// hashed to find its prepared statement. A request whose predicate only compares attributes of the fetched entity
/// with constants (`==`, `!=`, `<`, `<=`, `>`, `>=`, without options, joined by AND, OR and NOT) has a *shape* — the
/// entity, the predicate with its constants left out, the sort, whether it is limited — and every request of one
/// shape has the same SQL: only the bound values differ. The cache keeps, per shape, the SQL and the kind of value
/// each constant binds as, and binds a new request's constants exactly as the generator does
/// (`SQLiteBinding.binding(of:for:)`). A constant that would not bind as a plain value (nil, a string compared with a
/// number column) leaves the request to the generator, which writes different SQL for it.
///
/// A shape is cached only after the generator's own plan for a request of that shape was checked to bind exactly
/// the values the cache would: any translation the cache does not reproduce is never cached.
struct SQLiteFetchPlanCache {
    /// What a cached plan is for.
    enum Selection: UInt8 {
        case rows
        case keys
        case count
    }

    /// One comparison or logical operator of a predicate's shape, in the order the generator translates them.
    fileprivate enum Step: Hashable {
        case and(count: Int)
        case or(count: Int)
        case not
        case comparison(operator: UInt, options: UInt, key: String)
    }

    /// A sort descriptor's part of a shape.
    fileprivate struct Order: Hashable {
        let key: String
        let ascending: Bool
        let selector: String
    }

    /// A request's shape: the plan cache's key.
    fileprivate struct Shape: Hashable {
        let entity: SQLiteEntityMapping
        let selection: Selection
        let includesSubentities: Bool
        let isLimited: Bool
        let order: [Order]
        let steps: [Step]

        static func == (lhs: Shape, rhs: Shape) -> Bool {
            lhs.entity === rhs.entity && lhs.selection == rhs.selection
                && lhs.includesSubentities == rhs.includesSubentities && lhs.isLimited == rhs.isLimited
                && lhs.order == rhs.order && lhs.steps == rhs.steps
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(ObjectIdentifier(entity))
            hasher.combine(selection)
            hasher.combine(includesSubentities)
            hasher.combine(isLimited)
            hasher.combine(order)
            hasher.combine(steps)
        }
    }

    /// A request taken apart: its shape, and its constants with the kind of column each is compared with.
    struct Parts {
        fileprivate let shape: Shape
        fileprivate let constants: [(value: Any, kind: SQLiteValueKind)]
        fileprivate let limit: (limit: Int64, offset: Int64)?
        /// The parsed format the request's predicate was made from, if it was and the request is not sorted.
        fileprivate let template: NSPredicate?
    }

    private struct Entry {
        let sql: String
        let sortsByKey: Bool
    }

    /// A plan found for a request whose predicate was made from a parsed format (`NSPredicate._formatTemplate`):
    /// every predicate made from that template has the same shape, so a later request needs only its constants read,
    /// not its shape taken apart and hashed (about 4,500 instructions of a 52,000-instruction lookup).
    private struct TemplateKey: Hashable {
        let template: ObjectIdentifier
        let entity: ObjectIdentifier
        let selection: Selection
        let includesSubentities: Bool
        let isLimited: Bool
    }

    /// A class, so that finding one is one retain rather than one for each of its parts.
    private final class TemplateEntry {
        /// Held, so that the identities in the key stay theirs while the entry exists.
        let template: NSPredicate
        let entity: SQLiteEntityMapping
        let sql: String
        let sortsByKey: Bool
        /// The kind of column each constant is compared with, in the order the predicate is walked.
        let kinds: [SQLiteValueKind]

        init(
            template: NSPredicate, entity: SQLiteEntityMapping, sql: String, sortsByKey: Bool, kinds: [SQLiteValueKind]
        ) {
            self.template = template
            self.entity = entity
            self.sql = sql
            self.sortsByKey = sortsByKey
            self.kinds = kinds
        }
    }

    /// Shapes cached at most; a full cache starts again empty (apps use a few dozen shapes).
    static let capacity = 128

    private var entries: [Shape: Entry] = [:]
    private var byTemplate: [TemplateKey: TemplateEntry] = [:]

    /// `request` taken apart, if it has a shape the cache handles.
    static func parts(
        of request: NSFetchRequest<NSFetchRequestResult>, entity: SQLiteEntityMapping, selection: Selection
    ) -> Parts? {
        var order: [Order] = []
        if let descriptors = request.sortDescriptors {
            order.reserveCapacity(descriptors.count)
            for descriptor in descriptors {
                guard let key = descriptor.key, let selector = descriptor.selector else { return nil }
                order.append(Order(key: key, ascending: descriptor.ascending, selector: selector.name))
            }
        }
        var steps: [Step] = []
        var constants: [(value: Any, kind: SQLiteValueKind)] = []
        if let predicate = request.predicate {
            guard
                appendSteps(
                    of: predicate, entity: entity.entity, depth: 0, steps: &steps, constants: &constants)
            else { return nil }
        }
        let isLimited = request.fetchLimit > 0 || request.fetchOffset > 0
        let shape = Shape(
            entity: entity, selection: selection, includesSubentities: request.includesSubentities,
            isLimited: isLimited, order: order, steps: steps)
        return Parts(
            shape: shape, constants: constants, limit: limit(of: request),
            template: order.isEmpty ? request.predicate?._formatTemplate : nil)
    }

    /// The limit and offset a limited request binds.
    private static func limit(of request: NSFetchRequest<NSFetchRequestResult>) -> (limit: Int64, offset: Int64)? {
        guard request.fetchLimit > 0 || request.fetchOffset > 0 else { return nil }
        return (request.fetchLimit > 0 ? Int64(request.fetchLimit) : -1, Int64(request.fetchOffset))
    }

    /// The plan of an unsorted request whose predicate was made from a format whose plan was found before, with the
    /// request's constants bound; `nil` if there is none or a constant would not bind as a plain value (the request
    /// then goes the long way, through `parts(of:entity:selection:)`). `mutating`, like `plan(for:)`, so that the
    /// store's cache is read in place: a call on a copy retains and releases both of its dictionaries.
    mutating func plan(
        templated request: NSFetchRequest<NSFetchRequestResult>, entity: SQLiteEntityMapping, selection: Selection
    ) -> SQLiteFetchPlan? {
        guard !byTemplate.isEmpty, let predicate = request.predicate, let template = predicate._formatTemplate,
            request.sortDescriptors?.isEmpty ?? true
        else { return nil }
        let limit = Self.limit(of: request)
        let key = TemplateKey(
            template: ObjectIdentifier(template), entity: ObjectIdentifier(entity), selection: selection,
            includesSubentities: request.includesSubentities, isLimited: limit != nil)
        guard let entry = byTemplate[key], entry.template === template, entry.entity === entity else { return nil }
        var arguments: [SQLiteValue] = []
        arguments.reserveCapacity(entry.kinds.count + 2)
        guard Self.appendArguments(of: predicate, kinds: entry.kinds, depth: 0, to: &arguments),
            arguments.count == entry.kinds.count
        else { return nil }
        Self.append(limit, to: &arguments)
        return SQLiteFetchPlan(sql: entry.sql, arguments: arguments, isComplete: true, sortsByKey: entry.sortsByKey)
    }

    /// Appends the bound values of `predicate`'s constants, walked in the order `appendSteps` walks them; `false` if
    /// one would not bind as a plain value or the tree is not one `appendSteps` takes.
    private static func appendArguments(
        of predicate: NSPredicate, kinds: [SQLiteValueKind], depth: Int, to arguments: inout [SQLiteValue]
    ) -> Bool {
        guard depth < maximumDepth else { return false }
        if let comparison = predicate as? NSComparisonPredicate {
            guard arguments.count < kinds.count else { return false }
            // A number the predicate has read already (for its evaluation) binds without its type asked again. Only
            // a constant right-hand side is classified, so this needs no copy of the expression's contents.
            if kinds[arguments.count] == .number, case .number(let number)? = comparison.rightConstant {
                guard let value = try? SQLiteBinding.value(of: number) else { return false }
                arguments.append(value)
                return true
            }
            guard case .constant(let raw) = comparison.rightExpression.kind else { return false }
            guard let constant = PredicateValueComparison.unwrap(raw),
                case .value(let value)? = try? SQLiteBinding.binding(of: constant, for: kinds[arguments.count])
            else { return false }
            arguments.append(value)
            return true
        }
        guard let compound = predicate as? NSCompoundPredicate else { return false }
        for part in compound.predicates {
            guard appendArguments(of: part, kinds: kinds, depth: depth + 1, to: &arguments) else { return false }
        }
        return true
    }

    /// The deepest predicate taken apart; deeper ones go to the generator, which has its own limit.
    private static let maximumDepth = 16

    /// Appends the shape of `predicate` and its constants; `false` if it has a part the cache does not handle.
    private static func appendSteps(
        of predicate: NSPredicate, entity: NSEntityDescription, depth: Int, steps: inout [Step],
        constants: inout [(value: Any, kind: SQLiteValueKind)]
    ) -> Bool {
        guard depth < maximumDepth else { return false }
        switch predicate {
        case let compound as NSCompoundPredicate:
            let parts = compound.predicates
            switch compound.compoundPredicateType {
            case .and: steps.append(.and(count: parts.count))
            case .or: steps.append(.or(count: parts.count))
            case .not: steps.append(.not)
            }
            for part in parts {
                guard appendSteps(of: part, entity: entity, depth: depth + 1, steps: &steps, constants: &constants)
                else { return false }
            }
            return true
        case let comparison as NSComparisonPredicate:
            guard comparison.comparisonPredicateModifier == .direct, comparison.options.isEmpty,
                comparison.customSelector == nil
            else { return false }
            switch comparison.predicateOperatorType {
            case .equalTo, .notEqualTo, .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo: break
            default: return false
            }
            // A stored attribute of the entity against a constant that is not nil.
            guard case .keyPath(let key, let components, nil) = comparison.leftExpression.kind, components.count == 1,
                case .constant(let raw) = comparison.rightExpression.kind,
                let constant = PredicateValueComparison.unwrap(raw)
            else { return false }
            let caches = entity._caches
            guard let slot = caches.slotByName[key], caches.slots[slot].isPersistent,
                case .attribute(let type) = caches.kinds[slot], let kind = SQLiteValueKind(type)
            else { return false }
            steps.append(
                .comparison(
                    operator: comparison.predicateOperatorType.rawValue, options: comparison.options.rawValue, key: key)
            )
            constants.append((constant, kind))
            return true
        default:
            return false
        }
    }

    /// The values `parts` binds, in order: each constant as the generator binds it against its column, then the
    /// limit and offset. `nil` if a constant would not bind as a plain value.
    private static func arguments(of parts: Parts) -> [SQLiteValue]? {
        var arguments: [SQLiteValue] = []
        arguments.reserveCapacity(parts.constants.count + 2)
        for (constant, kind) in parts.constants {
            guard case .value(let value)? = try? SQLiteBinding.binding(of: constant, for: kind) else { return nil }
            arguments.append(value)
        }
        append(parts.limit, to: &arguments)
        return arguments
    }

    /// Appends a limited request's limit and offset, which the plans bind after the constants.
    private static func append(_ limit: (limit: Int64, offset: Int64)?, to arguments: inout [SQLiteValue]) {
        guard let (limit, offset) = limit else { return }
        arguments.append(.integer(limit))
        arguments.append(.integer(offset))
    }

    /// The cached plan for a request of `parts`' shape, with its values bound; `nil` if there is none or the
    /// request's values need SQL of their own.
    mutating func plan(for parts: Parts) -> SQLiteFetchPlan? {
        guard let entry = entries[parts.shape], let arguments = Self.arguments(of: parts) else { return nil }
        rememberTemplate(of: parts, entry: entry)
        return SQLiteFetchPlan(sql: entry.sql, arguments: arguments, isComplete: true, sortsByKey: entry.sortsByKey)
    }

    /// Keeps `entry` for later requests whose predicates are made from the same template as `parts`' request.
    private mutating func rememberTemplate(of parts: Parts, entry: Entry) {
        guard let template = parts.template else { return }
        let shape = parts.shape
        let key = TemplateKey(
            template: ObjectIdentifier(template), entity: ObjectIdentifier(shape.entity), selection: shape.selection,
            includesSubentities: shape.includesSubentities, isLimited: shape.isLimited)
        if byTemplate.count >= Self.capacity { byTemplate.removeAll(keepingCapacity: true) }
        byTemplate[key] = TemplateEntry(
            template: template, entity: shape.entity, sql: entry.sql, sortsByKey: entry.sortsByKey,
            kinds: parts.constants.map(\.kind))
    }

    /// Keeps the generator's `plan` for `parts`' shape if it is complete and binds exactly the values the cache
    /// would bind for the same request.
    mutating func remember(_ plan: SQLiteFetchPlan, for parts: Parts) {
        guard plan.isComplete, plan.untranslatable.isEmpty, let arguments = Self.arguments(of: parts),
            arguments == plan.arguments
        else { return }
        if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
        let entry = Entry(sql: plan.sql, sortsByKey: plan.sortsByKey)
        entries[parts.shape] = entry
        rememberTemplate(of: parts, entry: entry)
    }

    /// Forgets every plan (the store's schema or mapping changed).
    mutating func removeAll() {
        entries.removeAll()
        byTemplate.removeAll()
    }
}
