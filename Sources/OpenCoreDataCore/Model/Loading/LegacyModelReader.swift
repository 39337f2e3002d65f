import XCDataModelFormat

/// Reads Xcode 3's model format — an `.xcdatamodel` folder holding `elements`, a keyed archive of the model
/// editor's UML-style objects (`XDPMEntity`, `XDPMAttribute`, `XDPMRelationship` and their "stereotype"
/// settings) — by rewriting it as the XML of the current format, which the rest of the loader reads.
enum LegacyModelReader {
    static func model(at folder: URL) throws -> XCDataModel {
        let elementsURL = folder.appendingPathComponent("elements")
        let data: Data
        do {
            data = try Data(contentsOf: elementsURL)
        } catch {
            throw ModelLoadingError.error(
                NSFileReadUnknownError, url: elementsURL, message: "the file cannot be read", underlying: error)
        }
        let xml: String
        do {
            xml = try self.xml(from: KeyedArchive(data: data))
        } catch let error as NSError where error.domain == NSCocoaErrorDomain {
            throw error
        } catch {
            throw ModelLoadingError.invalid(url: elementsURL, "the Xcode 3 model cannot be read: \(error)")
        }
        let name = folder.deletingPathExtension().lastPathComponent
        do {
            return try XCDataModel(data: Data(xml.utf8), name: name, url: folder, contentsURL: elementsURL)
        } catch {
            throw ModelLoadingError.error(from: error)
        }
    }

    private typealias Object = KeyedArchive.Object

    static func xml(from archive: KeyedArchive) throws -> String {
        let root = try archive.rootObject()
        guard root.className == "XDPMModel", let package = try archive.object(root["_xd_rootPackage"]) else {
            throw KeyedArchive.Failure(description: "the archive holds no Xcode model (XDPMModel)")
        }
        var out = "<model type=\"com.apple.IDECoreDataModeler.DataModel\" documentVersion=\"1.0\">\n"
        for entry in try archive.entries(package["XDBucketForClassesstorage"]) {
            guard let entity = try archive.object(entry.value), entity.className == "XDPMEntity" else { continue }
            out += try entityXML(entity, archive: archive)
        }
        out += "</model>\n"
        return out
    }

    /// The settings an object keeps in its stereotypes: stereotype name → setting name → value.
    private static func stereotypes(of object: Object, archive: KeyedArchive) throws -> [String: [String:
        PropertyListValue]]
    {
        var result: [String: [String: PropertyListValue]] = [:]
        for entry in try archive.entries(object["XDBucketForStereotypesstorage"]) {
            guard let name = try archive.string(entry.key), let stereotype = try archive.object(entry.value) else {
                continue
            }
            var settings: [String: PropertyListValue] = [:]
            for setting in try archive.entries(stereotype["XDBucketForOwnedAttributesstorage"]) {
                guard let key = try archive.string(setting.key), let property = try archive.object(setting.value),
                    let value = property["_default"]
                else { continue }
                // Numbers and flags are stored in place; strings and objects by reference, which objects keep.
                switch archive.resolve(value) {
                case .dictionary?: settings[key] = value
                case let resolved?: settings[key] = resolved
                case nil: continue
                }
            }
            result[name] = settings
        }
        return result
    }

    private static func entityXML(_ entity: Object, archive: KeyedArchive) throws -> String {
        let name = try archive.string(entity["_name"]) ?? ""
        let settings = try stereotypes(of: entity, archive: archive)["XD_PStereotype"] ?? [:]
        var attributes = ["name": name]
        if let className = try archive.string(settings["XD_PSK_entityClassName"]), className != "NSManagedObject" {
            attributes["representedClassName"] = className
        }
        if settings["XD_PSK_isAbstract"]?.bool == true { attributes["isAbstract"] = "YES" }
        if let modifier = try archive.string(settings["XD_PSK_versionHashModifier"]) {
            attributes["versionHashModifier"] = modifier
        }
        // Xcode 3 named the renaming identifier so; later editors (whose models mapping models embed) elementID.
        if let renaming = try archive.string(settings["XD_PSK_renamingIdentifier"] ?? settings["XD_PSK_elementID"]) {
            attributes["elementID"] = renaming
        }
        for element in try archive.elements(entity["XDBucketForGeneralizationsstorage"]) {
            guard let generalization = try archive.object(element) else { continue }
            for key in ["_general", "_parent", "_target", "_supplier"] {
                if let parent = try archive.object(generalization[key]), parent.className == "XDPMEntity",
                    let parentName = try archive.string(parent["_name"])
                {
                    attributes["parentEntity"] = parentName
                }
            }
        }
        var out = "    <entity" + format(attributes) + ">\n"
        let properties = try archive.entries(entity["XDBucketForOwnedAttributesstorage"]).compactMap { entry in
            try archive.object(entry.value)
        }
        for property in properties {
            out += try propertyXML(property, archive: archive)
        }
        out += try userInfoXML(settings["XD_PSK_userInfo"], archive: archive, indent: "        ")
        out += try nameListsXML(
            settings["XDPMUniquenessConstraints"], archive: archive, list: "uniquenessConstraint", item: "constraint")
        out += try nameListsXML(settings["XDPMCompoundIndexes"], archive: archive, list: "compoundIndex", item: "index")
        out += "    </entity>\n"
        return out
    }

    private static func propertyXML(_ property: Object, archive: KeyedArchive) throws -> String {
        let name = try archive.string(property["_name"]) ?? ""
        let all = try stereotypes(of: property, archive: archive)
        let common = all["XD_PPropStereotype"] ?? [:]
        var attributes = ["name": name]
        if common["XD_PPSK_isOptional"]?.bool == true { attributes["optional"] = "YES" }
        if common["XD_PPSK_isTransient"]?.bool == true { attributes["transient"] = "YES" }
        if common["XD_PPSK_isIndexed"]?.bool == true { attributes["indexed"] = "YES" }
        if common["XD_PPSK_isSpotlightIndexed"]?.bool == true { attributes["spotlightIndexingEnabled"] = "YES" }
        if common["XD_PPSK_isStoredInTruthFile"]?.bool == true { attributes["storedInTruthFile"] = "YES" }
        if let modifier = try archive.string(common["XD_PPSK_versionHashModifier"]) {
            attributes["versionHashModifier"] = modifier
        }
        if let renaming = try archive.string(common["XD_PPSK_elementID"]) { attributes["elementID"] = renaming }
        let element: String
        switch property.className {
        case "XDPMAttribute":
            element = "attribute"
            let settings = all["XD_PAtt_Stereotype"] ?? [:]
            let rawType = UInt(exactly: settings["XD_PAttK_attributeType"]?.integer ?? 0) ?? UInt.max
            guard let type = XCDataModel.AttributeType.allCases.first(where: { $0.coreDataValue == rawType }) else {
                throw KeyedArchive.Failure(description: "attribute '\(name)' has the unknown type \(rawType)")
            }
            attributes["attributeType"] = type.rawValue
            if let value = try archive.string(settings["XD_PAttK_defaultValueAsString"]) {
                attributes["defaultValueString"] = value
            }
            if let transformer = try archive.string(settings["XD_PAttK_valueTransformerName"]) {
                attributes["valueTransformerName"] = transformer
            }
            if settings["XD_PAttK_allowsExternalBinaryDataStorage"]?.bool == true {
                attributes["allowsExternalBinaryDataStorage"] = "YES"
            }
        case "XDPMRelationship":
            element = "relationship"
            let settings = all["XD_PR_Stereotype"] ?? [:]
            if let destination = try archive.object(settings["XD_PRK_destination"]) {
                attributes["destinationEntity"] = try archive.string(destination["_name"])
            }
            if let inverse = try archive.object(settings["XD_PRK_inverseRelationship"]),
                let inverseName = try archive.string(inverse["_name"])
            {
                attributes["inverseName"] = inverseName
                if let owner = try archive.object(inverse["_owner"]) {
                    attributes["inverseEntity"] = try archive.string(owner["_name"])
                }
            }
            let toMany = settings["XD_PRK_isToMany"]?.bool ?? ((settings["XD_PRK_maxCount"]?.integer ?? 1) != 1)
            if toMany {
                attributes["toMany"] = "YES"
                if let maxCount = settings["XD_PRK_maxCount"]?.integer, maxCount > 0 {
                    attributes["maxCount"] = String(maxCount)
                }
            } else {
                attributes["maxCount"] = "1"
            }
            if settings["XD_PRK_ordered"]?.bool == true { attributes["ordered"] = "YES" }
            if let minCount = settings["XD_PRK_minCount"]?.integer, minCount > 0 {
                attributes["minCount"] = String(minCount)
            }
            let rules = ["No Action", "Nullify", "Cascade", "Deny"]
            let rule = Int(settings["XD_PRK_deleteRule"]?.integer ?? 1)
            attributes["deletionRule"] = rules.indices.contains(rule) ? rules[rule] : "Nullify"
        default:
            return ""
        }
        var out = "        <\(element)" + format(attributes)
        let info = try userInfoXML(common["XD_PPSK_userInfo"], archive: archive, indent: "            ")
        out += info.isEmpty ? "/>\n" : ">\n" + info + "        </\(element)>\n"
        return out
    }

    private static func userInfoXML(_ value: PropertyListValue?, archive: KeyedArchive, indent: String) throws
        -> String
    {
        let entries = try archive.entries(value)
        guard !entries.isEmpty else { return "" }
        var out = indent + "<userInfo>\n"
        for entry in entries {
            guard let key = try archive.string(entry.key) else { continue }
            let value = try archive.plainValue(entry.value).map { "\($0)" } ?? ""
            out += indent + "    <entry" + format(["key": key, "value": value]) + "/>\n"
        }
        return out + indent + "</userInfo>\n"
    }

    /// Lists of property names (uniqueness constraints, compound indexes), archived as arrays of arrays of strings.
    private static func nameListsXML(_ value: PropertyListValue?, archive: KeyedArchive, list: String, item: String)
        throws -> String
    {
        let lists = try archive.elements(value).map { element in
            try archive.elements(element).compactMap { try archive.string($0) }
        }.filter { !$0.isEmpty }
        guard !lists.isEmpty else { return "" }
        var out = "        <\(list)s>\n"
        for names in lists {
            out += "            <\(list)>\n"
            for name in names { out += "                <\(item)" + format(["value": name]) + "/>\n" }
            out += "            </\(list)>\n"
        }
        return out + "        </\(list)s>\n"
    }

    private static func format(_ attributes: [String: String]) -> String {
        attributes.keys.sorted().map { key in
            let value = attributes[key] ?? ""
            let escaped = value.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: "\"", with: "&quot;")
            return " \(key)=\"\(escaped)\""
        }.joined()
    }
}
