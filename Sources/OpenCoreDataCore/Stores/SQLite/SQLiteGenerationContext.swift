/// The state of generating one SQL statement: table aliases, the joins each FROM scope needs, the variables of
/// `SUBQUERY` expressions, and the bound arguments in the order their `?` placeholders appear. Every value of a
/// request reaches SQLite as an argument; SQL text only ever holds identifiers from the schema.
final class SQLiteGenerationContext {
    let mapping: SQLiteModelMapping
    /// The store whose objects' primary keys may be bound (objects of other stores never match).
    unowned let store: NSPersistentStore
    private(set) var arguments: [SQLiteValue] = []
    private var aliasCount = 0
    /// `SUBQUERY` iterator variables, bound to the scope that ranges over the collection.
    var variables: [String: SQLiteScope] = [:]
    /// While a having predicate is generated: the result columns its key paths and variables name.
    var resultColumns: [String: SQLiteOperand] = [:]

    init(mapping: SQLiteModelMapping, store: NSPersistentStore) {
        self.mapping = mapping
        self.store = store
    }

    /// Adds an argument and returns its placeholder.
    func bind(_ value: SQLiteValue) -> String {
        arguments.append(value)
        return "?"
    }

    /// A fresh table alias.
    func newAlias(_ prefix: String = "t") -> String {
        aliasCount += 1
        return "\(prefix)\(aliasCount)"
    }

    /// What is needed to undo a translation that turned out to be impossible halfway through.
    struct Checkpoint {
        let argumentCount: Int
        let joinCount: Int
    }

    func checkpoint(_ scope: SQLiteScope) -> Checkpoint {
        Checkpoint(argumentCount: arguments.count, joinCount: scope.joins.count)
    }

    func restore(_ checkpoint: Checkpoint, _ scope: SQLiteScope) {
        arguments.removeSubrange(checkpoint.argumentCount...)
        scope.dropJoins(after: checkpoint.joinCount)
    }
}

/// One FROM clause being generated: the table the scope ranges over and the to-one joins its key paths need.
final class SQLiteScope {
    let alias: String
    let entity: SQLiteEntityMapping
    private(set) var joins: [(key: String, alias: String, sql: String)] = []

    init(alias: String, entity: SQLiteEntityMapping) {
        self.alias = alias
        self.entity = entity
    }

    /// The alias of the table reached through the to-one relationship whose foreign key is `column` of the table
    /// aliased `from`, joining it if needed.
    func join(
        from: String, column: String, to destination: SQLiteEntityMapping, context: SQLiteGenerationContext
    ) -> String {
        let key = "\(from).\(column)"
        if let existing = joins.first(where: { $0.key == key }) { return existing.alias }
        let alias = context.newAlias()
        let table = destination.table.name
        joins.append((key, alias, "LEFT OUTER JOIN \(table) \(alias) ON \(alias).Z_PK = \(from).\(column)"))
        return alias
    }

    func dropJoins(after count: Int) {
        if joins.count > count { joins.removeSubrange(count...) }
    }

    /// `TABLE alias LEFT OUTER JOIN …`.
    var fromClause: String {
        ([entity.table.name + " " + alias] + joins.map(\.sql)).joined(separator: " ")
    }
}
