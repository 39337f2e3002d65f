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
