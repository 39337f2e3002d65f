import Foundation

/// An Xcode model bundle (`.xcdatamodeld`): every version of a model and the name of the current one.
///
/// ```swift
/// let bundle = try XCDataModelBundle(contentsOf: URL(fileURLWithPath: "Model.xcdatamodeld"))
/// let current = bundle.currentVersion
/// ```
public struct XCDataModelBundle: Sendable, Equatable {
    /// The `.xcdatamodeld` folder.
    public var url: URL
    /// The bundle's name: the folder name without `.xcdatamodeld`.
    public var name: String
    /// Every version, sorted by name as Finder sorts them (`Model`, `Model 2`, …, `Model 10`).
    public var versions: [XCDataModel]
    /// The name of the current version (from `.xccurrentversion`); `nil` when the bundle does not say and holds
    /// several versions.
    public var currentVersionName: String?
    /// Why the current version is unknown, when it is.
    private var currentVersionProblem: XCDataModelError?

    /// The current version.
    ///
    /// - Throws: `XCDataModelError` (`.missingCurrentVersion`) when the bundle has several versions and
    ///   `.xccurrentversion` is missing, unreadable, or names no version of the bundle.
    public func currentVersion() throws(XCDataModelError) -> XCDataModel {
        if let currentVersionName, let version = version(named: currentVersionName) { return version }
        throw currentVersionProblem
            ?? XCDataModelError(.missingCurrentVersion, url: url, message: "the bundle names no current version")
    }

    /// Reads every version of the bundle at `url` and finds the current one.
    ///
    /// - Throws: `XCDataModelError` if the folder cannot be read, holds no version, or if any version cannot be
    ///   read. A missing current version is reported by ``currentVersion()`` instead, so that every version stays
    ///   available (for migration) when `.xccurrentversion` is wrong.
    public init(contentsOf url: URL) throws(XCDataModelError) {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: url.path)
        } catch {
            throw XCDataModelError(
                .unreadable, url: url, message: "the model bundle cannot be read (\(error.localizedDescription))")
        }
        let versionFolders = names.filter { $0.hasSuffix(".xcdatamodel") }.sorted {
            Self.finderOrder(String($0.dropLast(".xcdatamodel".count)), String($1.dropLast(".xcdatamodel".count)))
        }
        guard !versionFolders.isEmpty else {
            throw XCDataModelError(.unreadable, url: url, message: "the model bundle holds no .xcdatamodel version")
        }
        var versions: [XCDataModel] = []
        for folder in versionFolders {
            versions.append(try XCDataModel(contentsOf: url.appendingPathComponent(folder)))
        }
        do {
            currentVersionName = try Self.currentVersionName(of: url, versions: versions.map(\.name))
        } catch {
            currentVersionName = nil
            currentVersionProblem = error
        }
        self.url = url
        var bundleName = url.lastPathComponent
        if bundleName.hasSuffix(".xcdatamodeld") { bundleName = String(bundleName.dropLast(".xcdatamodeld".count)) }
        name = bundleName
        self.versions = versions
    }

    /// The version named `name`.
    public func version(named name: String) -> XCDataModel? {
        versions.first { $0.name == name }
    }

    /// Reads `.xccurrentversion` (a property list whose `_XCCurrentVersionName` is `Model 2.xcdatamodel`).
    static func currentVersionName(of url: URL, versions: [String]) throws(XCDataModelError) -> String {
        let fileURL = url.appendingPathComponent(".xccurrentversion")
        guard let data = try? Data(contentsOf: fileURL) else {
            if versions.count == 1 { return versions[0] }
            throw XCDataModelError(
                .missingCurrentVersion, url: url,
                message: "the bundle has \(versions.count) versions but no .xccurrentversion file saying which is "
                    + "current; choose the current version in Xcode's File inspector")
        }
        let plist = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any]
        guard let rawName = plist?["_XCCurrentVersionName"] as? String else {
            throw XCDataModelError(
                .missingCurrentVersion, url: fileURL,
                message: "the file is not a property list with a '_XCCurrentVersionName' string")
        }
        let name = rawName.hasSuffix(".xcdatamodel") ? String(rawName.dropLast(".xcdatamodel".count)) : rawName
        guard versions.contains(name) else {
            throw XCDataModelError(
                .missingCurrentVersion, url: fileURL,
                message: "the current version '\(rawName)' is not in the bundle (it holds "
                    + versions.map { "'\($0).xcdatamodel'" }.joined(separator: ", ") + ")")
        }
        return name
    }

    /// Orders names with their embedded numbers compared as numbers, so that `Model 10` follows `Model 9`.
    static func finderOrder(_ lhs: String, _ rhs: String) -> Bool {
        lhs.compare(rhs, options: [.numeric, .caseInsensitive]) == .orderedAscending
    }
}
