/// Writes compiled models: `NSKeyedArchiver` archives of an `NSManagedObjectModel` with Apple's class names and keys,
/// as Xcode's model compiler writes `.mom` files and Apple's SQLite store caches its model in `Z_MODELCACHE`.
/// `CompiledModelReader` reads both back; the classes, keys and flag bits are those of the archives in the corpus,
/// so that Apple's framework can read what this writes.
///
/// ```swift
/// let data = try CompiledModelWriter.data(for: model, style: .storeModelCache)
/// ```
final class CompiledModelWriter {
    /// Which of Apple's two shapes of model archive to write.
    enum Style {
        /// What Xcode's model compiler writes into a `.mom` file: entities in a dictionary, each archiving the
        /// properties it declares.
        case compiledModel
        /// What Apple's SQLite store caches in `Z_MODELCACHE`: the model as the framework holds it once in use —
        /// entities in a known-keys dictionary, each archiving all its properties, inherited ones as copies that
        /// name the subentity as their entity.
        case storeModelCache
    }

    typealias Failure = KeyedArchive.Failure

    private let model: NSManagedObjectModel
    private let style: Style
    private var modelReference = KeyedArchiveWriter.null
    private var entityReferences: [ObjectIdentifier: PropertyListValue] = [:]
    /// Properties archived as declared by their own entity, which relationships refer to as inverses.
    private var propertyReferences: [ObjectIdentifier: PropertyListValue] = [:]
    /// Where the writer is, for the message of a failure.
    private var entityName: String?
    private var propertyName: String?

    private init(model: NSManagedObjectModel, style: Style) {
        self.model = model
        self.style = style
    }

    /// The archive of `model` in `style`. A model holding what cannot be archived (a block predicate, a default
    /// value of a class unknown to Foundation) fails with `NSCoderInvalidValueError`, naming the entity and property.
    static func data(for model: NSManagedObjectModel, style: Style) throws -> Data {
        let encoder = CompiledModelWriter(model: model, style: style)
        var writer = KeyedArchiveWriter()
        do {
            let root = try encoder.encodeModel(into: &writer)
            return writer.data(root: root)
        } catch {
            var location = ""
            var info: [String: Any] = [:]
            if let entity = encoder.entityName {
                location = " entity '\(entity)'"
                info[ModelLoadingEntityErrorKey] = entity
                if let property = encoder.propertyName {
                    location += ", property '\(property)'"
                    info[ModelLoadingPropertyErrorKey] = property
                }
                location += ":"
            }
            throw coreDataError(
                CocoaError.Code.coderInvalidValue.rawValue,
                "Cannot archive the managed object model:\(location) \(error.description)", userInfo: info)
        }
    }

    // MARK: The model

    private func encodeModel(into writer: inout KeyedArchiveWriter) throws(Failure) -> PropertyListValue {
        try writer.encodeObject(className: "NSManagedObjectModel") { (writer, reference) throws(Failure) in
            modelReference = reference
            var fields: [String: PropertyListValue] = ["NSEntities": try entities(into: &writer)]
            entityName = nil
            propertyName = nil
            if model._fetchRequestTemplates.isEmpty {
                fields["NSFetchRequestTemplates"] = KeyedArchiveWriter.null
            } else {
                var keys: [PropertyListValue] = []
                var values: [PropertyListValue] = []
                for (name, request) in model._fetchRequestTemplates.sorted(by: { $0.key < $1.key }) {
                    keys.append(writer.string(name))
                    values.append(try fetchRequest(request, into: &writer))
                }
                fields["NSFetchRequestTemplates"] = writer.dictionary("NSMutableDictionary", keys: keys, values: values)
            }
            var identifiers: [PropertyListValue] = []
            for identifier in model._versionIdentifiers.sorted(by: { "\($0)" < "\($1)" }) {
                identifiers.append(try writer.value(identifier.base))
            }
            fields["NSVersionIdentifiers"] = writer.collection("NSSet", identifiers)
            if !model._configurationOrder.isEmpty {
                var keys: [PropertyListValue] = []
                var values: [PropertyListValue] = []
                for name in model._configurationOrder {
                    keys.append(writer.string(name))
                    var members: [PropertyListValue] = []
                    for entity in model._configurations[name] ?? [] {
                        members.append(try entityReference(entity, into: &writer))
                    }
                    values.append(writer.collection("NSSet", members))
                }
                fields["NSConfigurations"] = writer.dictionary("NSMutableDictionary", keys: keys, values: values)
            }
            return fields
        }
    }

    /// The entities by name: a plain dictionary in a compiled model; in a store's cache, the known-keys dictionary
    /// that Apple's framework keeps once the model is in use (sorted keys in a mapping, values in the same order).
    private func entities(into writer: inout KeyedArchiveWriter) throws(Failure) -> PropertyListValue {
        let entities = model._entities.filter { $0._name != nil }.sorted { ($0._name ?? "") < ($1._name ?? "") }
        switch style {
        case .compiledModel:
            let keys = entities.map { writer.string($0._name) }
            var values: [PropertyListValue] = []
            for entity in entities { values.append(try entityReference(entity, into: &writer)) }
            return writer.dictionary("NSMutableDictionary", keys: keys, values: values)
        case .storeModelCache:
            return try writer.encodeObject(className: "NSKnownKeysDictionary1") { (writer, _) throws(Failure) in
                let mapping = writer.encodeObject(className: "NSKnownKeysMappingStrategy1") { writer, _ in
                    [
                        "keys": writer.collection("NSArray", entities.map { writer.string($0._name) }),
                        "length": .integer(Int64(entities.count)), "version": .integer(1),
                    ]
                }
                let emptyToken = writer.string("__empty_slot_token_4c24_98dc_ac1e_b773__")
                var values: [PropertyListValue] = []
                for entity in entities { values.append(try entityReference(entity, into: &writer)) }
                return [
                    "searchMapping": mapping, "emptyToken": emptyToken,
                    "values": writer.collection("NSArray", values), "version": .integer(1),
                ]
            }
        }
    }

    // MARK: Entities

    /// The entity's object, archived when first referred to.
    private func entityReference(_ entity: NSEntityDescription?, into writer: inout KeyedArchiveWriter)
        throws(Failure) -> PropertyListValue
    {
        guard let entity else { return KeyedArchiveWriter.null }
        if let reference = entityReferences[ObjectIdentifier(entity)] { return reference }
        let outer = (entityName, propertyName)
        entityName = entity._name
        propertyName = nil
        // The location is restored only on success, so that a failure names the innermost place.
        let encoded = try writer.encodeObject(className: "NSEntityDescription") {
            (writer, reference) throws(Failure) in
            entityReferences[ObjectIdentifier(entity)] = reference
            let name = entity._name ?? ""
            var fields: [String: PropertyListValue] = [
                "NSEntityName": writer.string(name),
                "NSClassNameForEntity": writer.string(entity._managedObjectClassName),
                "NSManagedObjectModel": modelReference,
                "NSSuperentity": try entityReference(entity._superentity, into: &writer),
                "NSRenamingIdentifier": writer.string(entity._renamingIdentifier ?? name),
                "NSVersionHashModifier": writer.string(entity._versionHashModifier.flatMap { $0.isEmpty ? nil : $0 }),
            ]
            fields["NSUserInfo"] = try userInfo(entity._userInfo ?? [:], into: &writer)
            if entity._isAbstract { fields["NSIsAbstract"] = .bool(true) }
            let subentities = entity._subentities.filter { $0._name != nil }
            var subentityReferences: [PropertyListValue] = []
            for subentity in subentities { subentityReferences.append(try entityReference(subentity, into: &writer)) }
            fields["NSSubentities"] = writer.dictionary(
                "NSMutableDictionary", keys: subentities.map { writer.string($0._name) }, values: subentityReferences)
            let properties = style == .storeModelCache ? entity.properties : entity._ownProperties
            var propertyReferences: [PropertyListValue] = []
            for property in properties {
                propertyReferences.append(try self.property(property, of: entity, into: &writer))
            }
            fields["NSProperties"] = writer.dictionary(
                "NSMutableDictionary", keys: properties.map { writer.string($0._name) }, values: propertyReferences)
            propertyName = nil
            if !entity._uniquenessConstraints.isEmpty {
                fields["NSUniqueTuples"] = nameLists(entity._uniquenessConstraints, into: &writer)
            }
            if !entity._indexes.isEmpty {
                var indexes: [PropertyListValue] = []
                for index in entity._indexes {
                    indexes.append(try fetchIndex(index, entity: reference, into: &writer))
                }
                fields["NSFetchIndexDescriptions"] = writer.collection("NSMutableArray", indexes)
            }
            // Apple's framework also lists the plain fetch indexes as compound indexes, for older readers.
            var compound = entity._compoundIndexes
            if compound.isEmpty {
                compound = entity._indexes.filter {
                    $0._partialIndexPredicate == nil && $0._elements.allSatisfy { $0._collationType == .binary }
                }.map { $0._elements.compactMap(\.propertyName) }
            }
            if !compound.isEmpty { fields["NSCompoundIndexes"] = nameLists(compound, into: &writer) }
            return fields
        }
        (entityName, propertyName) = outer
        return encoded
    }

    /// Lists of property names (uniqueness constraints, compound indexes); a property description stands for its
    /// name.
    private func nameLists(_ lists: [[Any]], into writer: inout KeyedArchiveWriter) -> PropertyListValue {
        let encoded = lists.map { list in
            let names = list.compactMap { element -> String? in
                (element as? String) ?? (element as? NSPropertyDescription)?._name
            }
            return writer.collection("NSMutableArray", names.map { writer.string($0) })
        }
        return writer.collection("NSMutableArray", encoded)
    }

    private func fetchIndex(
        _ index: NSFetchIndexDescription, entity: PropertyListValue, into writer: inout KeyedArchiveWriter
    ) throws(Failure) -> PropertyListValue {
        try writer.encodeObject(className: "NSFetchIndexDescription") { (writer, reference) throws(Failure) in
            let name = writer.string(index._name)
            let elements = index._elements.map { element in
                writer.encodeObject(className: "NSFetchIndexElementDescription") { writer, _ in
                    [
                        "NSPropertyName": writer.string(element.propertyName),
                        "NSFetchIndexElementType": .integer(Int64(element._collationType.rawValue)),
                        "NSFetchIndexDescription": reference, "NSAscending": .bool(element._isAscending),
                    ]
                }
            }
            let partial = try archived(index._partialIndexPredicate, into: &writer)
            return [
                "NSIndexName": name, "NSEntity": entity, "NSPartialIndexPredicate": partial,
                "NSIndexElements": writer.collection(
                    style == .storeModelCache ? "NSMutableArray" : "NSArray", elements),
            ]
        }
    }

    private func userInfo(_ info: [AnyHashable: Any], into writer: inout KeyedArchiveWriter) throws(Failure)
        -> PropertyListValue
    {
        var keys: [PropertyListValue] = []
        var values: [PropertyListValue] = []
        for (key, value) in info.sorted(by: { "\($0.key)" < "\($1.key)" }) {
            keys.append(try writer.value(key.base))
            values.append(try writer.value(value))
        }
        return writer.dictionary("NSDictionary", keys: keys, values: values)
    }

    // MARK: Properties

    /// A property as `entity` archives it: the declared property once, shared by every reference to it; in a
    /// store's cache, an inherited property again as a copy whose entity is `entity`.
    private func property(
        _ property: NSPropertyDescription, of entity: NSEntityDescription, into writer: inout KeyedArchiveWriter
    ) throws(Failure) -> PropertyListValue {
        let declared = property._entity.map { $0 === entity } ?? true
        if declared, let reference = propertyReferences[ObjectIdentifier(property)] { return reference }
        let outer = (entityName, propertyName)
        entityName = entity._name
        propertyName = property._name
        let className: String
        switch property {
        case is NSDerivedAttributeDescription: className = "NSDerivedAttributeDescription"
        case is NSCompositeAttributeDescription: className = "NSCompositeAttributeDescription"
        case is NSAttributeDescription: className = "NSAttributeDescription"
        case is NSRelationshipDescription: className = "NSRelationshipDescription"
        case is NSFetchedPropertyDescription: className = "NSFetchedPropertyDescription"
        default: throw Failure(description: "a property of class \(type(of: property)) cannot be archived")
        }
        let encoded = try writer.encodeObject(className: className) { (writer, reference) throws(Failure) in
            if declared { propertyReferences[ObjectIdentifier(property)] = reference }
            var fields = try common(property, entity: entityReference(entity, into: &writer), into: &writer)
            switch property {
            case let attribute as NSAttributeDescription:
                try self.attribute(attribute, entity: entity, into: &writer, fields: &fields)
            case let relationship as NSRelationshipDescription:
                try self.relationship(relationship, into: &writer, fields: &fields)
            case let fetched as NSFetchedPropertyDescription:
                if let request = fetched._fetchRequest {
                    fields["NSFetchRequest"] = try fetchRequest(request, into: &writer)
                    fields["_NSFetchRequestEntityName"] = writer.string(request.entityName)
                }
            default:
                break
            }
            return fields
        }
        (entityName, propertyName) = outer
        return encoded
    }

    /// The keys of `NSPropertyDescription`: a Boolean key for each flag that is set, the same flags in `_P`, and
    /// in `_P` a bit for each of validation predicates, warnings, user info and version hash modifier that is
    /// absent — so that a reader skips those keys.
    private func common(
        _ property: NSPropertyDescription, entity: PropertyListValue, into writer: inout KeyedArchiveWriter
    ) throws(Failure) -> [String: PropertyListValue] {
        let isReadOnly = property is NSFetchedPropertyDescription || property is NSDerivedAttributeDescription
        var flags: Int64 = 0x1
        var fields: [String: PropertyListValue] = [
            "NSPropertyName": writer.string(property._name), "NSEntity": entity,
            "NSRenamingIdentifier": writer.string(property._renamingIdentifier ?? property._name),
        ]
        func flag(_ isSet: Bool, _ key: String, _ bit: Int64) {
            guard isSet else { return }
            fields[key] = .bool(true)
            flags |= bit
        }
        let relationship = property as? NSRelationshipDescription
        let attribute = property as? NSAttributeDescription
        flag(property._isOptional, "NSIsOptional", 0x2)
        flag(isReadOnly, "NSIsReadOnly", 0x4)
        flag(property._isTransient, "NSIsTransient", 0x8)
        flag(property._isIndexedBySpotlight, "NSIndexedBySpotlight", 0x100)
        flag(property._isStoredInExternalRecord, "NSIsStoredInTruth", 0x200)
        flag(relationship?._isOrdered ?? false, "NSIsOrdered", 0x400)
        flag(attribute?._allowsCloudEncryption ?? false, "NSAllowsCloudEncryption", 0x800)
        // Apple's framework keeps an indexed property as a fetch index of its entity; the key that older archives
        // carry keeps the flag for readers that look for it.
        if property._isIndexed { fields["NSIsIndexed"] = .bool(true) }
        if property._validationPredicates.isEmpty {
            flags |= 0x10 | 0x20
        } else {
            var predicates: [PropertyListValue] = []
            for predicate in property._validationPredicates {
                predicates.append(try ArchivedPredicateEncoder.predicate(predicate, into: &writer))
            }
            var warnings: [PropertyListValue] = []
            for warning in property._validationWarnings { warnings.append(try writer.value(warning)) }
            fields["NSValidationPredicates"] = writer.collection("NSArray", predicates)
            fields["NSValidationWarnings"] = writer.collection("NSArray", warnings)
        }
        if let info = property._userInfo, !info.isEmpty {
            fields["NSUserInfo"] = try userInfo(info, into: &writer)
        } else {
            flags |= 0x40
        }
        if let modifier = property._versionHashModifier, !modifier.isEmpty {
            fields["NSVersionHashModifier"] = writer.string(modifier)
        } else {
            flags |= 0x80
        }
        fields["_P"] = .integer(flags)
        return fields
    }

    private func attribute(
        _ attribute: NSAttributeDescription, entity: NSEntityDescription, into writer: inout KeyedArchiveWriter,
        fields: inout [String: PropertyListValue]
    ) throws(Failure) {
        let type = attribute._attributeType
        fields["NSAttributeType"] = .integer(Int64(type.rawValue))
        fields["NSAttributeValueClassName"] = writer.string(
            attribute._attributeValueClassName ?? type.defaultValueClassName)
        fields["NSValueTransformerName"] = writer.string(attribute._valueTransformerName)
        fields["NSDefaultValue"] = try defaultValue(attribute._defaultValue, type: type, into: &writer)
        var flags: Int64 = 0
        if attribute._allowsExternalBinaryDataStorage { flags |= 0x4 }
        if attribute._preservesValueInHistoryOnDeletion { flags |= 0x10 }
        fields["NSFlagsKey"] = .integer(flags)
        if let derived = attribute as? NSDerivedAttributeDescription {
            fields["NSDerivationExpression"] = try archived(derived._derivationExpression, into: &writer)
            fields["NSFilteringPredicate"] = KeyedArchiveWriter.null
        }
        if let composite = attribute as? NSCompositeAttributeDescription {
            var elements: [PropertyListValue] = []
            for element in composite._elements {
                elements.append(try property(element, of: entity, into: &writer))
            }
            fields["NSCompositeElements"] = writer.collection("NSArray", elements)
        }
    }

    /// A default value in the class its attribute type stores: Booleans as Booleans, integers as integers, real
    /// numbers as reals, whatever form the model was given them in.
    private func defaultValue(_ value: Any?, type: NSAttributeType, into writer: inout KeyedArchiveWriter)
        throws(Failure) -> PropertyListValue
    {
        guard let value, !(value is NSNull) else { return KeyedArchiveWriter.null }
        let number = PredicateNumber(value)
        switch (type, number) {
        case (.booleanAttributeType, let number?):
            return writer.plain(.bool(number.int64Value != 0))
        case (.integer16AttributeType, let number?), (.integer32AttributeType, let number?),
            (.integer64AttributeType, let number?):
            return writer.plain(.integer(number.int64Value))
        case (.doubleAttributeType, let number?), (.floatAttributeType, let number?):
            return writer.plain(.real(number.doubleValue))
        case (.decimalAttributeType, let number?):
            return writer.decimalNumber(number.decimalValue)
        default:
            return try writer.value(value)
        }
    }

    private func relationship(
        _ relationship: NSRelationshipDescription, into writer: inout KeyedArchiveWriter,
        fields: inout [String: PropertyListValue]
    ) throws(Failure) {
        let destinationName = relationship._destinationEntity?._name ?? relationship._destinationEntityName
        let destination =
            relationship._destinationEntity
            ?? destinationName.flatMap { name in
                model._entities.first { $0._name == name }
            }
        fields["NSDestinationEntity"] = try entityReference(destination, into: &writer)
        fields["_NSDestinationEntityName"] = writer.string(destinationName)
        let inverseName = relationship._inverseRelationship?._name ?? relationship._inverseName
        var inverse = KeyedArchiveWriter.null
        let declared =
            relationship._inverseRelationship
            ?? inverseName.flatMap { destination?._caches.propertiesByName[$0] as? NSRelationshipDescription }
        if let declared, let owner = declared._entity {
            inverse = try property(declared, of: owner, into: &writer)
        }
        fields["NSInverseRelationship"] = inverse
        if let inverseName { fields["_NSInverseRelationshipName"] = writer.string(inverseName) }
        fields["NSMinCount"] = .integer(Int64(relationship._minCount))
        fields["NSMaxCount"] = .integer(Int64(relationship._maxCount))
        fields["NSDeleteRule"] = .integer(Int64(relationship._deleteRule.rawValue))
    }

    /// A predicate's archive, or `$null` for none.
    private func archived(_ predicate: NSPredicate?, into writer: inout KeyedArchiveWriter) throws(Failure)
        -> PropertyListValue
    {
        guard let predicate else { return KeyedArchiveWriter.null }
        return try ArchivedPredicateEncoder.predicate(predicate, into: &writer)
    }

    /// An expression's archive, or `$null` for none.
    private func archived(_ expression: NSExpression?, into writer: inout KeyedArchiveWriter) throws(Failure)
        -> PropertyListValue
    {
        guard let expression else { return KeyedArchiveWriter.null }
        return try ArchivedPredicateEncoder.expression(expression, into: &writer)
    }

    // MARK: Fetch requests

    private func fetchRequest(_ request: NSFetchRequest<NSFetchRequestResult>, into writer: inout KeyedArchiveWriter)
        throws(Failure) -> PropertyListValue
    {
        try writer.encodeObject(className: "NSFetchRequest") { (writer, _) throws(Failure) in
            let entity =
                request._entity ?? request.entityName.flatMap { name in model._entities.first { $0._name == name } }
            // An entity outside the model is archived by name, as Apple's framework archives a request that has
            // only an entity name.
            var fields: [String: PropertyListValue] = [:]
            if let entity {
                fields["NSEntity"] = try entityReference(entity, into: &writer)
            } else {
                fields["NSEntity"] = writer.string(request.entityName)
            }
            fields["NSPredicate"] = try archived(request.predicate, into: &writer)
            if let sorts = request.sortDescriptors {
                var encoded: [PropertyListValue] = []
                for sort in sorts { encoded.append(try sortDescriptor(sort, into: &writer)) }
                fields["NSSortDescriptors"] = writer.collection("NSArray", encoded)
            } else {
                fields["NSSortDescriptors"] = KeyedArchiveWriter.null
            }
            fields["NSFetchLimit"] = .integer(Int64(request.fetchLimit))
            fields["NSFetchOffset"] = .integer(Int64(request.fetchOffset))
            fields["NSBatchSize"] = .integer(Int64(request.fetchBatchSize))
            fields["NSResultType"] = .integer(Int64(request.resultType.rawValue))
            fields["NSAllocationType"] = .integer(0)
            fields["NSHavingPredicate"] = try archived(request.havingPredicate, into: &writer)
            fields["NSValuesToFetch"] = propertyNames(request.propertiesToFetch, into: &writer)
            fields["NSValuesToGroupBy"] = propertyNames(request.propertiesToGroupBy, into: &writer)
            fields["NSRelationshipKeyPathsForPrefetching"] = propertyNames(
                request.relationshipKeyPathsForPrefetching, into: &writer)
            var flags: Int64 = request.returnsDistinctResults ? 0x1 : 0
            if request.includesSubentities { flags |= 0x2 }
            if request.includesPropertyValues { flags |= 0x4 }
            if request.returnsObjectsAsFaults { flags |= 0x8 }
            if request.includesPendingChanges { flags |= 0x10 }
            if request.shouldRefreshRefetchedObjects { flags |= 0x20 }
            fields["NSHasFetchRequestFlags"] = .bool(true)
            fields["NSFetchRequestFlags"] = .integer(flags)
            return fields
        }
    }

    /// Properties to fetch or group by, and key paths to prefetch, by name; `nil` for none.
    private func propertyNames(_ list: [Any]?, into writer: inout KeyedArchiveWriter) -> PropertyListValue {
        guard let list else { return KeyedArchiveWriter.null }
        let names = list.compactMap { ($0 as? String) ?? ($0 as? NSPropertyDescription)?._name }
        return writer.collection("NSArray", names.map { writer.string($0) })
    }

    private func sortDescriptor(_ sort: NSSortDescriptor, into writer: inout KeyedArchiveWriter) throws(Failure)
        -> PropertyListValue
    {
        if case .comparator = sort.comparison {
            throw Failure(description: "a sort descriptor with a comparator block cannot be archived")
        }
        return writer.encodeObject(className: "NSSortDescriptor") { writer, _ in
            [
                "NSKey": writer.string(sort.key), "NSAscending": .bool(sort.ascending),
                "NSSelector": writer.string(sort.selector?.name ?? "compare:"), "NSReverseNullOrder": .bool(false),
            ]
        }
    }
}
