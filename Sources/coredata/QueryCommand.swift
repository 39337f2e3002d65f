import ArgumentParser
import Foundation
import OpenCoreData

/// `coredata query <store> --model <bundle> --entity E`: the objects a fetch request returns, through the framework's
/// own fetch path (a coordinator, the SQLite store, the predicate parsed as `NSPredicate(format:)` parses it),
/// printed as a table, JSON or CSV. The store is opened read-only.
struct QueryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Fetch objects from a SQLite store and print them as a table, JSON or CSV.",
        discussion: """
            The store is opened read-only with the version of the model it was made with. The columns are the \
            entity's attributes; JSON also gives each object's ID. Dates print in ISO 8601 (UTC), binary data as \
            its size in a table and as Base64 in JSON and CSV. A table cuts text longer than 48 characters; JSON \
            and CSV print it whole.

            Examples:
              coredata query Books.sqlite --model Model.xcdatamodeld --entity Book
              coredata query Books.sqlite --model Model.momd --entity Book \\
                --predicate 'title CONTAINS[cd] "swift" AND pages > 100' \\
                --sort pages:desc --limit 10
              coredata query Books.sqlite --model Model.momd --entity Author \\
                --format json | jq '.[0]'
              coredata query Books.sqlite --model Model.momd --entity Book \\
                -com.apple.CoreData.SQLDebug 1

            The last prints each SQL statement and its time on standard error, as \
            Core Data's debug switch does on Apple platforms (the environment \
            variable com.apple.CoreData.SQLDebug or OPENCOREDATA_SQL_DEBUG works too).
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case table, json, csv
    }

    @OptionGroup var fetch: FetchOptions

    @Option(help: "How to print the objects.")
    var format: Format = .table

    func run() throws {
        try StoreAccess.reportingErrors {
            let (coordinator, _) = try StoreAccess.open(fetch.store, modelPath: fetch.model)
            let request: NSFetchRequest<NSManagedObject> = try fetch.request(in: coordinator.managedObjectModel)
            let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            let output: String = try context.performAndWait {
                let objects = try context.fetch(request)
                let attributes = Self.attributes(of: request.entity!)
                switch format {
                case .table: return Self.table(objects, attributes: attributes)
                case .json: return Self.json(objects, attributes: attributes)
                case .csv: return Self.csv(objects, attributes: attributes)
                }
            }
            print(output, terminator: "")
        }
    }

    /// The attributes shown: the entity's stored attributes, in the model's order.
    static func attributes(of entity: NSEntityDescription) -> [NSAttributeDescription] {
        entity.properties.compactMap { $0 as? NSAttributeDescription }.filter { !$0.isTransient }
    }

    /// The widest a table cell grows; longer text is cut (JSON and CSV give it whole).
    static let cellLimit = 48

    static func table(_ objects: [NSManagedObject], attributes: [NSAttributeDescription]) -> String {
        var table = TextTable(columns: attributes.map(\.name))
        table.numeric = Set(attributes.indices.filter { Self.isNumeric(attributes[$0].attributeType) })
        table.rows = objects.map { object in
            attributes.map { attribute in
                let value = object.value(forKey: attribute.name)
                if let data = value as? Data { return "<\(data.count) bytes>" }
                let cell = text(value, attribute.attributeType).replacingOccurrences(of: "\n", with: "\\n")
                return cell.count > cellLimit ? String(cell.prefix(cellLimit - 1)) + "…" : cell
            }
        }
        return table.render() + Terminal.dim("(\(objects.count) \(objects.count == 1 ? "object" : "objects"))") + "\n"
    }

    static func json(_ objects: [NSManagedObject], attributes: [NSAttributeDescription]) -> String {
        guard !objects.isEmpty else { return "[]\n" }
        let entries = objects.map { object in
            var fields = ["\"objectID\": \(jsonString(object.objectID.uriRepresentation().absoluteString))"]
            for attribute in attributes {
                let value = object.value(forKey: attribute.name)
                fields.append("\(jsonString(attribute.name)): \(jsonValue(value, attribute.attributeType))")
            }
            return "  {" + fields.joined(separator: ", ") + "}"
        }
        return "[\n" + entries.joined(separator: ",\n") + "\n]\n"
    }

    static func csv(_ objects: [NSManagedObject], attributes: [NSAttributeDescription]) -> String {
        func field(_ text: String) -> String {
            guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
            return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }
        var lines = [attributes.map { field($0.name) }.joined(separator: ",")]
        for object in objects {
            lines.append(
                attributes.map { field(text(object.value(forKey: $0.name), $0.attributeType)) }.joined(separator: ","))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    static func isNumeric(_ type: NSAttributeType) -> Bool {
        switch type {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .decimalAttributeType,
            .doubleAttributeType, .floatAttributeType:
            return true
        default:
            return false
        }
    }

    /// A value of an attribute of `type` as text: ISO 8601 dates, Base64 data, UUIDs and URLs as strings, Booleans
    /// as true and false; empty for nil.
    static func text(_ value: Any?, _ type: NSAttributeType) -> String {
        switch value {
        case nil, is NSNull: return ""
        case let string as String: return string
        case let date as Date: return iso8601(date)
        case let data as Data: return data.base64EncodedString()
        case let uuid as UUID: return uuid.uuidString
        case let url as URL: return url.absoluteString
        case let value? where type == .booleanAttributeType:
            let flag = (value as? Bool) ?? ((value as? NSNumber)?.boolValue ?? false)
            return flag ? "true" : "false"
        case let number as NSNumber: return number.stringValue
        case let value?: return String(describing: value)
        }
    }

    /// A value of an attribute of `type` in JSON: numbers and Booleans as themselves, the rest as strings.
    static func jsonValue(_ value: Any?, _ type: NSAttributeType) -> String {
        if value == nil || value is NSNull { return "null" }
        let plain = text(value, type)
        switch type {
        case .booleanAttributeType:
            return plain
        case _ where isNumeric(type):
            // JSON has no NaN or infinity.
            return Double(plain).map(\.isFinite) == true ? plain : jsonString(plain)
        default:
            return jsonString(plain)
        }
    }

    static func jsonString(_ text: String) -> String {
        var escaped = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            case _ where scalar.value < 0x20: escaped += String(format: "\\u%04x", scalar.value)
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped + "\""
    }

    static func iso8601(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}
