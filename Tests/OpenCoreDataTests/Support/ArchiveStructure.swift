import Foundation

@testable import OpenCoreDataCore

/// The shape of a keyed archive: each archived class with the keys its objects are archived with, to compare an
/// archive written here with Apple's for the same model.
enum ArchiveStructure {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Every class of the archive in `data`, with the union of the keys of its objects.
    static func classKeys(_ data: Data) throws -> [String: Set<String>] {
        guard case .dictionary(let root) = try BinaryPropertyListReader(data).read(),
            root["$archiver"]?.string == "NSKeyedArchiver", case .array(let objects)? = root["$objects"]
        else { throw Failure(description: "not a keyed archive") }
        var classes: [String: Set<String>] = [:]
        for object in objects {
            guard case .dictionary(let fields) = object, case .uid(let index)? = fields["$class"],
                objects.indices.contains(index), case .dictionary(let info) = objects[index],
                let name = info["$classname"]?.string
            else { continue }
            classes[name, default: []].formUnion(fields.keys.filter { $0 != "$class" })
        }
        return classes
    }

    /// The object graph of the archive in `data` as text, one object per line, indented by depth: each object's
    /// class and its keys in sorted order, with references followed, so that two archives of the same objects print
    /// alike whichever objects they share and in whatever order they numbered them. Dictionaries print their entries
    /// sorted by key. `sameClass` names classes to print as others (`NSMutableArray` as `NSArray`).
    static func tree(_ data: Data, sameClass: [String: String] = [:]) throws -> [String] {
        guard case .dictionary(let root) = try BinaryPropertyListReader(data).read(),
            case .array(let objects)? = root["$objects"], case .dictionary(let top)? = root["$top"],
            let start = top["root"]
        else { throw Failure(description: "not a keyed archive") }
        var lines: [String] = []
        func className(_ fields: [String: PropertyListValue]) -> String {
            guard case .uid(let index)? = fields["$class"], objects.indices.contains(index),
                case .dictionary(let info) = objects[index], let name = info["$classname"]?.string
            else { return "?" }
            return sameClass[name] ?? name
        }
        func render(_ value: PropertyListValue, _ label: String, _ depth: Int) {
            let indent = String(repeating: "  ", count: depth)
            guard depth < 64 else {
                lines.append(indent + label + "…")
                return
            }
            switch value {
            case .uid(0):
                lines.append(indent + label + "$null")
            case .uid(let index) where objects.indices.contains(index):
                render(objects[index], label, depth)
            case .dictionary(let fields) where fields["NS.keys"] != nil:
                lines.append(indent + label + className(fields))
                guard case .array(let keys)? = fields["NS.keys"], case .array(let values)? = fields["NS.objects"]
                else { return }
                var entries: [(String, PropertyListValue)] = []
                for (key, value) in zip(keys, values) {
                    var keyLines: [String] = []
                    swap(&keyLines, &lines)
                    render(key, "", 0)
                    swap(&keyLines, &lines)
                    entries.append((keyLines.joined(separator: " "), value))
                }
                for (key, value) in entries.sorted(by: { $0.0 < $1.0 }) { render(value, "[\(key)] ", depth + 1) }
            case .dictionary(let fields) where fields["NS.objects"] != nil:
                lines.append(indent + label + className(fields))
                guard case .array(let elements)? = fields["NS.objects"] else { return }
                for element in elements { render(element, "- ", depth + 1) }
            case .dictionary(let fields):
                lines.append(indent + label + className(fields))
                for key in fields.keys.sorted() where key != "$class" {
                    if let field = fields[key] { render(field, key + ": ", depth + 1) }
                }
            case .string(let string):
                lines.append(indent + label + "\"" + string + "\"")
            case .data(let data):
                lines.append(indent + label + "<" + data.base64EncodedString() + ">")
            default:
                lines.append(indent + label + "\(value)")
            }
        }
        render(start, "", 0)
        return lines
    }

    /// How an archive written here differs from Apple's for the same model, leaving out what Apple's archives hold
    /// that a model does not (Xcode's compiler version, empty index lists, mutable variants of strings and sets,
    /// objects of the app's own classes as default values). Empty when the archives have the same classes with the
    /// same keys.
    static func differences(written: [String: Set<String>], apple: [String: Set<String>]) -> [String] {
        let optionalKeys: [String: Set<String>] = [
            "NSManagedObjectModel": ["CDMCompilerToolVersion", "CDMCompilerXcodeVersion"],
            "NSEntityDescription": ["NSCompoundIndexes", "NSFetchIndexDescriptions"],
        ]
        let sameClass = ["NSMutableSet": "NSSet", "NSMutableString": "NSString"]
        var appleClasses: [String: Set<String>] = [:]
        for (name, keys) in apple {
            appleClasses[sameClass[name] ?? name, default: []].formUnion(keys)
        }
        var differences: [String] = []
        for (name, keys) in written.sorted(by: { $0.key < $1.key }) {
            guard let appleKeys = appleClasses[name] else {
                differences.append("\(name) is not in Apple's archive")
                continue
            }
            let extra = keys.subtracting(appleKeys)
            let missing = appleKeys.subtracting(keys).subtracting(optionalKeys[name] ?? [])
            if !extra.isEmpty { differences.append("\(name) has keys Apple's lacks: \(extra.sorted())") }
            if !missing.isEmpty { differences.append("\(name) lacks Apple's keys \(missing.sorted())") }
        }
        // Plain strings are archived in $objects itself, not as NSString objects; mutable arrays may be only the
        // empty index lists.
        let mayBeMissing: Set<String> = ["NSString", "NSMutableArray"]
        for name in appleClasses.keys.sorted()
        where written[name] == nil && name.hasPrefix("NS") && !mayBeMissing.contains(name) {
            differences.append("\(name) of Apple's archive is missing")
        }
        return differences
    }
}
