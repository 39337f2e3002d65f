// Model names reach SQL as identifiers: `Z` + the entity name is a table, `Z` + a property name a column, entity
// and fetch-index names make up index and trigger names. Apple's framework writes them unquoted (`sqlite_master`
// keeps the CREATE statements' text, so the spelling is part of the format) and checks names only in Xcode's model
// editor: a model built in code with an entity named "Foo Bar" fails there with a SQL syntax error, and a name with a
// quote or a semicolon in it would become SQL. So the store puts a name into SQL only once it is known to be a plain
// identifier — letters of any script, digits, combining marks and underscores, not starting with a digit — which
// SQLite reads as one token (it takes every non-ASCII byte as part of an identifier). Names that would give two
// tables one name (`Foo` and `FOO`, or an entity named `_PRIMARYKEY`) are refused too, since the tables would mix.
// The check runs before the store touches a file.

extension SQLiteModelMapping {
    /// Whether `name` can stand in SQL unquoted as (part of) an identifier.
    static func isPlainIdentifier(_ name: String) -> Bool {
        var scalars = name.unicodeScalars.makeIterator()
        guard let first = scalars.next(), first == "_" || first.properties.isAlphabetic else { return false }
        while let scalar = scalars.next() {
            if scalar.isASCII {
                guard scalar == "_" || (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)) else {
                    return false
                }
                continue
            }
            switch scalar.properties.generalCategory {
            case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter, .nonspacingMark,
                .spacingMark, .enclosingMark, .decimalNumber, .letterNumber, .otherNumber:
                continue
            default:
                return false
            }
        }
        return true
    }

    /// The first name of the model that cannot become SQL, or that would make two tables share a name.
    func identifierProblem() -> (entity: String?, property: String?, message: String)? {
        let rule = "only letters, digits and underscores, not starting with a digit"
        for mapping in entities {
            guard Self.isPlainIdentifier(mapping.name) else {
                return (mapping.name, nil, "the entity name cannot name a SQLite table: use \(rule)")
            }
            for property in mapping.entity._ownProperties where !property._isTransient {
                guard property is NSAttributeDescription || property is NSRelationshipDescription else { continue }
                guard Self.isPlainIdentifier(property._name) else {
                    return (mapping.name, property._name, "the property name cannot name a SQLite column: use \(rule)")
                }
            }
            for index in mapping.entity._indexes where !Self.isPlainIdentifier(index._name) {
                return (
                    mapping.name, nil, "the fetch index name '\(index._name)' cannot name a SQLite index: use \(rule)"
                )
            }
        }
        // SQLite compares ASCII letters of names without case; the names here are upper case already.
        var owners: [String: String] = [
            "Z_PRIMARYKEY": "Core Data's own table", "Z_METADATA": "Core Data's own table",
            "Z_MODELCACHE": "Core Data's own table",
        ]
        for table in tables {
            let owner = "the table of entity '\(entities.first { $0.table === table }?.name ?? table.name)'"
            if let other = owners.updateValue(owner, forKey: table.name.uppercased()) {
                return (nil, nil, "\(owner) would be named \(table.name), as \(other) is: rename one of them")
            }
        }
        if let (entity, relationship, table) = sharedJoinTable {
            return (
                entity, relationship,
                "the relationship's join table would be \(table), which another relationship's names already: "
                    + "rename one of them"
            )
        }
        for join in joinTables {
            let owner = "the join table \(join.name)"
            if let other = owners.updateValue(owner, forKey: join.name.uppercased()) {
                return (nil, nil, "\(owner) of a many-to-many relationship would share its name with \(other)")
            }
        }
        return nil
    }

    /// Throws Core Data's error for the first name that cannot be stored (see `identifierProblem()`).
    func checkIdentifiers(url: URL?) throws {
        guard let (entity, property, message) = identifierProblem() else { return }
        var userInfo: [String: Any] = [:]
        if let url { userInfo[NSURLErrorKey] = url }
        var subject = ""
        if let entity {
            userInfo["entity"] = entity
            subject = "entity '\(entity)'"
            if let property {
                userInfo["property"] = property
                subject += ", property '\(property)'"
            }
            subject += ": "
        }
        throw coreDataError(
            NSPersistentStoreOpenError,
            "The model cannot be stored in the SQLite store at \(url?.path ?? "(unknown)"): \(subject)\(message)",
            userInfo: userInfo)
    }
}
