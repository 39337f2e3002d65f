import Foundation

/// The real Core Data files of `shared/corpus` (Xcode models, compiled models, store metadata), beside the
/// package's checkout.
enum ModelCorpus {
    static let root: URL = {
        var directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        for _ in 0..<8 {
            let candidate = directory.appendingPathComponent("shared/corpus")
            if FileManager.default.fileExists(atPath: candidate.path) { return candidate }
            directory.deleteLastPathComponent()
        }
        return URL(fileURLWithPath: "/work/shared/corpus")
    }()

    static var exists: Bool { FileManager.default.fileExists(atPath: root.path) }

    /// Every file under the corpus whose name or extension matches.
    static func files(where matches: (URL) -> Bool) -> [URL] {
        guard let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else {
            return []
        }
        var result: [URL] = []
        for case let url as URL in enumerator where matches(url) {
            result.append(url)
        }
        return result.sorted { $0.path < $1.path }
    }

    /// The `.xcdatamodel` folders that hold an XML `contents` file: every model version of the corpus.
    static let modelVersions: [URL] = files { $0.lastPathComponent == "contents" }.map {
        $0.deletingLastPathComponent()
    }

    static let modelBundles: [URL] = files { $0.pathExtension == "xcdatamodeld" }
    static let compiledModels: [URL] = files { $0.pathExtension == "momd" }
    static let storeMetadata: [URL] = files { $0.lastPathComponent.hasSuffix(".metadata.plist.xml") }

    /// A path relative to the corpus, for test names and messages.
    static func relativePath(_ url: URL) -> String {
        let base = root.standardizedFileURL.path + "/"
        let path = url.standardizedFileURL.path
        return path.hasPrefix(base) ? String(path.dropFirst(base.count)) : path
    }

    static func propertyList(_ url: URL) throws -> [String: Any] {
        let data = try Data(contentsOf: url)
        return try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any] ?? [:]
    }
}

/// A fresh directory under the system's temporary directory, removed when the value goes away.
final class ModelScratchDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "OpenCoreDataModelTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// Writes `text` to `relativePath`, creating folders on the way.
    @discardableResult
    func write(_ text: String, to relativePath: String) throws -> URL {
        let file = url.appendingPathComponent(relativePath)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: file)
        return file
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}
