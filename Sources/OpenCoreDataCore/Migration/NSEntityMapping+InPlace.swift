import Foundation

/// What a migration in place with SQL (the SQLite and PostgreSQL stores') reads from an entity mapping: where each
/// destination property's value comes from, and how the persistent history recorded under the source entity maps to
/// the destination's.
extension NSEntityMapping {
    /// Why a property mapping cannot be migrated with SQL: its value expression is not one of the two forms below.
    package struct InPlaceUnsupported: Error {
        package let reason: String
    }

    /// The source property a destination property maps from: `nil` for none (a new property), or the name the
    /// mapping's `$source.<name>` (attributes) or `FUNCTION($manager,
    /// "destinationInstancesForSourceRelationshipNamed:sourceInstances:", "<name>", …)` (relationships) names.
    package func _sourcePropertyName(of name: String) throws(InPlaceUnsupported) -> String? {
        guard let expression = _propertyMapping(named: name)?.valueExpression else { return nil }
        switch expression.kind {
        case .keyPath(_, let components, let operand?) where components.count == 1:
            if case .variable(NSMigrationSourceObjectKey) = operand.kind { return components[0] }
        case .function("destinationInstancesForSourceRelationshipNamed:sourceInstances:", let target?, let arguments):
            if case .variable(NSMigrationManagerKey) = target.kind,
                case .constant(let value as String)? = arguments.first?.kind
            {
                return value
            }
        default:
            break
        }
        throw InPlaceUnsupported(reason: "the value of '\(name)' is \(expression.expressionFormat)")
    }

    /// The source property `property` takes its value from, or `nil` for a new one (or one SQL cannot migrate).
    private func _sourceName(of property: NSPropertyDescription) -> String? {
        (try? _sourcePropertyName(of: property._name)) ?? nil
    }

    /// For the history's `ZCOLUMNS` bitmaps of changes recorded under `source`: the destination name of each recorded
    /// source property that has one; `nil` when the bitmaps stay as they are (same properties, same names).
    package func _historyColumnNames(from source: NSEntityDescription, to destination: NSEntityDescription)
        -> [String: String]?
    {
        let before = PersistentHistoryLayout.recordedProperties(of: source).map(\._name)
        let after = PersistentHistoryLayout.recordedProperties(of: destination)
        let destinationName = Dictionary(
            after.compactMap { property in _sourceName(of: property).map { ($0, property._name) } }
        ) { first, _ in first }
        guard before != after.map(\._name) || destinationName.contains(where: { $0.key != $0.value }) else {
            return nil
        }
        return destinationName
    }

    /// For the history's tombstone columns of deletions recorded under `source`: for each destination tombstone
    /// column, the source column its value comes from (`nil`: none, the column is cleared); `nil` when every column
    /// keeps its value, or there are none.
    package func _historyTombstoneSources(from source: NSEntityDescription, to destination: NSEntityDescription)
        -> [Int?]?
    {
        let before = PersistentHistoryLayout.preservedAttributes(of: source).map(\._name)
        let after = PersistentHistoryLayout.preservedAttributes(of: destination)
        let width = max(before.count, after.count)
        let sources = (0..<width).map { index in
            index < after.count ? _sourceName(of: after[index]).flatMap(before.firstIndex) : nil
        }
        guard width > 0, sources != (0..<width).map({ Optional($0) }) else { return nil }
        return sources
    }
}
