import XCDataModelFormat

/// Builds an `NSManagedObjectModel` from one version of an Xcode model (`XCDataModel`), giving every setting of
/// the file the meaning Xcode's model compiler (momc) gives it.
struct XMLModelReader {
    let source: XCDataModel
    /// The `contents` file, for messages.
    let fileURL: URL

    init(_ source: XCDataModel) {
        self.source = source
        fileURL = source.url.pathExtension == "xcdatamodel" ? source.url.appendingPathComponent("contents") : source.url
    }

    /// Fills `model` (new and empty) with the entities, configurations and templates of `source`.
    func load(into model: NSManagedObjectModel) throws {
        var entities: [NSEntityDescription] = []
        for entity in source.entities {
            entities.append(try makeEntity(entity))
        }
        model.entities = entities
        try LoadedModelChecks.checkDerivations(of: model, url: fileURL)
        let byName = model.entitiesByName
        for entity in source.entities {
            for case .fetchedProperty(let fetched) in entity.properties {
                let description = byName[entity.name]?._caches.propertiesByName[fetched.name]
                (description as? NSFetchedPropertyDescription)?._fetchRequest?.entity =
                    byName[fetched.fetchRequest.entity]
            }
        }
        for configuration in source.configurations {
            model.setEntities(
                configuration.memberEntities.compactMap { byName[$0] }, forConfigurationName: configuration.name)
        }
        for template in source.fetchRequests {
            let request = try makeFetchRequest(template, entity: nil, property: nil)
            request.entity = byName[template.entity]
            model._fetchRequestTemplates[template.name] = request
        }
        if let identifier = source.versionIdentifier {
            model._versionIdentifiers = [identifier]
        }
        model._sourceURL = source.url
        model._versionName = source.name
    }

    private func makeEntity(_ source: XCDataModel.Entity) throws -> NSEntityDescription {
        let entity = NSEntityDescription()
        entity._name = source.name
        entity._managedObjectClassName = source.representedClassName
        entity._superentityName = source.parentEntity
        entity._isAbstract = source.isAbstract
        entity._versionHashModifier = source.versionHashModifier
        entity._renamingIdentifier = source.renamingIdentifier
        entity._userInfo = userInfo(source.userInfo)
        var properties: [NSPropertyDescription] = []
        for property in source.properties {
            switch property {
            case .attribute(let attribute):
                properties.append(try makeAttribute(attribute, entity: source.name))
            case .relationship(let relationship):
                properties.append(try makeRelationship(relationship, entity: source.name))
            case .fetchedProperty(let fetched):
                let description = NSFetchedPropertyDescription()
                apply(fetched.name, fetched.common, to: description)
                description._fetchRequest = try makeFetchRequest(
                    fetched.fetchRequest, entity: source.name, property: fetched.name)
                properties.append(description)
            }
        }
        try LoadedModelChecks.checkProperties(properties.map(\._name), entity: source.name, url: fileURL)
        entity.properties = properties
        entity._uniquenessConstraints = source.uniquenessConstraints.map { $0 as [Any] }
        entity._compoundIndexes = source.compoundIndexes.map { $0 as [Any] }
        entity.indexes = source.fetchIndexes.map { index in
            let elements = index.elements.map { element in
                let description = NSFetchIndexElementDescription(
                    propertyName: element.property, collationType: element.type == "RTree" ? .rTree : .binary)
                description._isAscending = element.isAscending
                return description
            }
            let description = NSFetchIndexDescription(name: index.name, elements: elements)
            if let format = index.partialIndexPredicate {
                description._partialIndexPredicate = try? NSPredicate(validatingFormat: format)
            }
            return description
        }
        return entity
    }

    private func apply(_ name: String, _ common: XCDataModel.PropertyCommon, to property: NSPropertyDescription) {
        property._name = name
        property._isOptional = common.isOptional
        property._isTransient = common.isTransient
        property._isIndexed = common.isIndexed
        property._versionHashModifier = common.versionHashModifier
        property._renamingIdentifier = common.renamingIdentifier
        property._isIndexedBySpotlight = common.isIndexedBySpotlight
        property._isStoredInExternalRecord = common.isStoredInExternalRecord
        property._userInfo = userInfo(common.userInfo)
    }

    private func makeAttribute(_ source: XCDataModel.Attribute, entity: String) throws -> NSAttributeDescription {
        let attribute: NSAttributeDescription
        if let expression = source.derivationExpression {
            let derived = NSDerivedAttributeDescription()
            do {
                derived._derivationExpression = ModelVersionHasher.canonicalDerivation(
                    try Self.derivation(expression))
            } catch {
                throw ModelLoadingError.invalid(
                    url: fileURL, entity: entity, property: source.name, line: source.common.line,
                    "the derivation expression '\(expression)' is not a valid expression", underlying: error)
            }
            attribute = derived
        } else if source.type == .composite {
            let composite = NSCompositeAttributeDescription()
            guard let definition = self.source.composites.first(where: { $0.name == source.compositeName }) else {
                throw ModelLoadingError.invalid(
                    url: fileURL, entity: entity, property: source.name, line: source.common.line,
                    "the composite type '\(source.compositeName ?? "")' is not defined in the model")
            }
            composite._elements = try definition.attributes.map { try makeAttribute($0, entity: entity) }
            attribute = composite
        } else {
            attribute = NSAttributeDescription()
        }
        apply(source.name, source.common, to: attribute)
        guard let type = NSAttributeType(rawValue: source.type.coreDataValue) else {
            throw ModelLoadingError.invalid(
                url: fileURL, entity: entity, property: source.name, line: source.common.line,
                "unknown attribute type '\(source.type.rawValue)'")
        }
        attribute._attributeType = type
        if type == .transformableAttributeType {
            attribute._attributeValueClassName = source.customClassName
            attribute._valueTransformerName = source.valueTransformerName
        }
        attribute._allowsExternalBinaryDataStorage = source.allowsExternalBinaryDataStorage
        attribute._preservesValueInHistoryOnDeletion = source.preservesValueInHistoryOnDeletion
        attribute._allowsCloudEncryption = source.allowsCloudEncryption
        attribute._defaultValue = try defaultValue(of: source, type: type, entity: entity)
        let (predicates, warnings) = try validationRules(of: source, type: type, entity: entity)
        attribute._validationPredicates = predicates
        attribute._validationWarnings = warnings
        return attribute
    }

    /// A derivation expression. Besides the format syntax, Core Data's derivations call functions only stores
    /// evaluate, such as `canonical:(title)`; such a call becomes a function expression of that name.
    static func derivation(_ format: String) throws -> NSExpression {
        do {
            return try NSExpression(validatingFormat: format)
        } catch {
            let text = format.trimmingCharacters(in: .whitespaces)
            guard let open = text.firstIndex(of: "("), text.hasSuffix(")"), open > text.startIndex,
                text[text.index(before: open)] == ":",
                text[..<open].allSatisfy({ $0.isLetter || $0.isNumber || $0 == ":" })
            else { throw error }
            let name = String(text[..<open])
            let inner = String(text[text.index(after: open)..<text.index(before: text.endIndex)])
            let argument = try NSExpression(validatingFormat: inner)
            return NSExpression(forFunction: name, arguments: [argument])
        }
    }

    private func defaultValue(of source: XCDataModel.Attribute, type: NSAttributeType, entity: String) throws -> Any? {
        if type == .dateAttributeType, let interval = source.defaultDateTimeInterval {
            return Date(timeIntervalSinceReferenceDate: interval)
        }
        guard let text = source.defaultValueString else { return nil }
        func invalid() -> NSError {
            ModelLoadingError.invalid(
                url: fileURL, entity: entity, property: source.name, line: source.common.line,
                "the default value '\(text)' is not a valid \(type.modelEditorName)")
        }
        switch type {
        case .dateAttributeType:
            // Xcode writes `defaultDateTimeInterval` (seconds since 2001) beside a readable `defaultValueString`;
            // a file with the string alone gives the seconds or the date with its time zone.
            guard let interval = Self.dateInterval(text) else { throw invalid() }
            return Date(timeIntervalSinceReferenceDate: interval)
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType:
            guard let value = Self.integer(text) else { throw invalid() }
            return NSNumber(value: value)
        case .doubleAttributeType:
            guard let value = Double(text.trimmingCharacters(in: .whitespaces)) else { throw invalid() }
            return NSNumber(value: value)
        case .floatAttributeType:
            guard let value = Float(text.trimmingCharacters(in: .whitespaces)) else { throw invalid() }
            return NSNumber(value: value)
        case .decimalAttributeType:
            let value = NSDecimalNumber(string: text.trimmingCharacters(in: .whitespaces))
            guard value != NSDecimalNumber.notANumber else { throw invalid() }
            return value
        case .booleanAttributeType:
            switch text {
            case "YES", "yes", "true", "1": return NSNumber(value: true)
            case "NO", "no", "false", "0": return NSNumber(value: false)
            default: throw invalid()
            }
        case .stringAttributeType:
            return text
        case .UUIDAttributeType:
            guard let value = UUID(uuidString: text) else { throw invalid() }
            return value
        case .URIAttributeType:
            guard let value = URL(string: text) else { throw invalid() }
            return value
        default:
            return nil
        }
    }

    /// An integer attribute's default, minimum or maximum as Xcode writes it: `"3"`, and also `"0.0"` or `"3.0"`,
    /// which Xcode writes for Integer 16/32/64 attributes whose value was entered in the model editor's number
    /// field. A fraction (`"1.5"`) or a value beyond 64 bits is not an integer.
    static func integer(_ text: String) -> Int64? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let value = Int64(trimmed) { return value }
        guard let number = Double(trimmed), number.rounded() == number,
            number >= -9_223_372_036_854_775_808, number < 9_223_372_036_854_775_808
        else { return nil }
        return Int64(number)
    }

    /// A date attribute's default, minimum or maximum given as text only: seconds since 2001, or a date as Xcode
    /// prints it, `2013-04-23 12:00:00 +0000`.
    static func dateInterval(_ text: String) -> TimeInterval? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let seconds = Double(trimmed) { return seconds }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss Z"
        return formatter.date(from: trimmed)?.timeIntervalSinceReferenceDate
    }

    /// Xcode's minimum, maximum and regular expression as Core Data represents them: a predicate each, with the
    /// validation error code as its warning — `SELF >= min`/`SELF <= max` for numbers (1620/1610),
    /// `length >= min`/`length <= max` for strings (1670/1660), `timeIntervalSinceReferenceDate >= min`/`<= max`
    /// for dates (1640/1630), `SELF MATCHES regex` (1680).
    private func validationRules(of source: XCDataModel.Attribute, type: NSAttributeType, entity: String) throws
        -> ([NSPredicate], [Any])
    {
        var predicates: [NSPredicate] = []
        var warnings: [Any] = []
        func invalid(_ text: String, _ what: String) -> NSError {
            ModelLoadingError.invalid(
                url: fileURL, entity: entity, property: source.name, line: source.common.line,
                "the \(what) '\(text)' is not a valid \(type.modelEditorName)")
        }
        if let pattern = source.regularExpressionString, type == .stringAttributeType {
            predicates.append(
                NSComparisonPredicate(
                    leftExpression: NSExpression(expressionType: .evaluatedObject),
                    rightExpression: NSExpression(forConstantValue: pattern), modifier: .direct, type: .matches))
            warnings.append(NSNumber(value: NSValidationStringPatternMatchingError))
        }
        let bounds: [(String?, Double?, NSComparisonPredicate.Operator, String)] = [
            (source.minValueString, source.minDateTimeInterval, .greaterThanOrEqualTo, "minimum"),
            (source.maxValueString, source.maxDateTimeInterval, .lessThanOrEqualTo, "maximum"),
        ]
        for (text, interval, comparison, what) in bounds {
            let isMinimum = comparison == .greaterThanOrEqualTo
            let left: NSExpression
            let limit: NSNumber
            let code: Int
            switch type {
            case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType:
                guard let text else { continue }
                guard let value = Self.integer(text) else { throw invalid(text, what) }
                left = NSExpression(expressionType: .evaluatedObject)
                limit = NSNumber(value: value)
                code = isMinimum ? NSValidationNumberTooSmallError : NSValidationNumberTooLargeError
            case .decimalAttributeType, .doubleAttributeType, .floatAttributeType:
                guard let text else { continue }
                guard let value = Double(text.trimmingCharacters(in: .whitespaces)) else { throw invalid(text, what) }
                left = NSExpression(expressionType: .evaluatedObject)
                limit = NSNumber(value: value)
                code = isMinimum ? NSValidationNumberTooSmallError : NSValidationNumberTooLargeError
            case .stringAttributeType:
                guard let text else { continue }
                guard let value = Int64(text.trimmingCharacters(in: .whitespaces)), value >= 0 else {
                    throw invalid(text, "\(what) length")
                }
                left = NSExpression(forKeyPath: "length")
                limit = NSNumber(value: value)
                code = isMinimum ? NSValidationStringTooShortError : NSValidationStringTooLongError
            case .dateAttributeType:
                guard
                    let interval = try interval
                        ?? text.map({ text in
                            guard let interval = Self.dateInterval(text) else { throw invalid(text, what) }
                            return interval
                        })
                else { continue }
                left = NSExpression(forKeyPath: "timeIntervalSinceReferenceDate")
                limit = NSNumber(value: interval)
                code = isMinimum ? NSValidationDateTooSoonError : NSValidationDateTooLateError
            default:
                continue
            }
            predicates.append(
                NSComparisonPredicate(
                    leftExpression: left, rightExpression: NSExpression(forConstantValue: limit), modifier: .direct,
                    type: comparison))
            warnings.append(NSNumber(value: code))
        }
        return (predicates, warnings)
    }

    private func makeRelationship(_ source: XCDataModel.Relationship, entity: String) throws
        -> NSRelationshipDescription
    {
        let relationship = NSRelationshipDescription()
        apply(source.name, source.common, to: relationship)
        relationship._destinationEntityName = source.destinationEntity
        relationship._inverseName = source.inverseName
        relationship._minCount = source.minCount
        relationship._maxCount = source.effectiveMaxCount
        relationship._isOrdered = source.isOrdered
        switch source.deletionRule {
        case "Nullify": relationship._deleteRule = .nullifyDeleteRule
        case "Cascade": relationship._deleteRule = .cascadeDeleteRule
        case "Deny": relationship._deleteRule = .denyDeleteRule
        case "No Action": relationship._deleteRule = .noActionDeleteRule
        default:
            throw ModelLoadingError.invalid(
                url: fileURL, entity: entity, property: source.name, line: source.common.line,
                "unknown deletion rule '\(source.deletionRule)'; Core Data's rules are 'Nullify', 'Cascade', "
                    + "'Deny' and 'No Action'")
        }
        return relationship
    }

    private func makeFetchRequest(_ source: XCDataModel.FetchRequest, entity: String?, property: String?) throws
        -> NSFetchRequest<NSFetchRequestResult>
    {
        let request = NSFetchRequest<NSFetchRequestResult>(entityName: source.entity)
        if let format = source.predicateString {
            do {
                request.predicate = try NSPredicate(validatingFormat: format)
            } catch {
                throw ModelLoadingError.invalid(
                    url: fileURL, entity: entity, property: property, line: source.line,
                    "the predicate '\(format)' of fetch request '\(source.name)' is not a valid predicate",
                    underlying: error)
            }
        }
        if let limit = source.fetchLimit { request.fetchLimit = limit }
        if let size = source.fetchBatchSize { request.fetchBatchSize = size }
        if let type = source.resultType { request.resultType = NSFetchRequestResultType(rawValue: type) }
        if let value = source.includesSubentities { request.includesSubentities = value }
        if let value = source.includesPropertyValues { request.includesPropertyValues = value }
        if let value = source.includesPendingChanges { request.includesPendingChanges = value }
        if let value = source.returnsObjectsAsFaults { request.returnsObjectsAsFaults = value }
        if let value = source.returnsDistinctResults { request.returnsDistinctResults = value }
        return request
    }

    private func userInfo(_ entries: [XCDataModel.UserInfoEntry]) -> [AnyHashable: Any]? {
        guard !entries.isEmpty else { return nil }
        var info: [AnyHashable: Any] = [:]
        for entry in entries {
            info[entry.key] = entry.value
        }
        return info
    }
}
