import XCDataModelFormat

/// Finds and reads the model files Core Data knows: Xcode's `.xcdatamodeld` bundles and `.xcdatamodel` versions
/// (XML), and compiled `.momd` folders and `.mom` files.
enum ModelFileLoader {
    /// The kinds of model files, told apart by extension (and, for a folder without one, by its content).
    enum Kind {
        case xcdatamodeld, xcdatamodel, momd, mom
    }

    static func kind(of url: URL) -> Kind? {
        switch url.pathExtension.lowercased() {
        case "xcdatamodeld": return .xcdatamodeld
        case "xcdatamodel": return .xcdatamodel
        case "momd": return .momd
        case "mom": return .mom
        default:
            if url.lastPathComponent == "contents" { return .xcdatamodel }
            return nil
        }
    }

    /// Reads the current version of the model at `url` into `model`.
    static func load(_ url: URL, into model: NSManagedObjectModel) throws {
        switch kind(of: url) {
        case .xcdatamodeld:
            let bundle = try bundleVersions(url)
            guard let current = bundle.current else {
                throw ModelLoadingError.error(
                    from: bundle.currentProblem
                        ?? XCDataModelError(.missingCurrentVersion, url: url, message: "no current version"))
            }
            try XMLModelReader(try readVersion(url.appendingPathComponent(current + ".xcdatamodel"))).load(
                into: model)
        case .xcdatamodel:
            try XMLModelReader(try readVersion(url)).load(into: model)
        case .momd:
            let compiled = try CompiledModelBundle(contentsOf: url)
            try compiled.loadVersion(try compiled.currentVersion(), into: model)
        case .mom:
            try CompiledModelReader.load(url, into: model)
        case nil:
            throw ModelLoadingError.invalid(
                url: url,
                "the file is not a model: expected an .xcdatamodeld or .momd bundle, an .xcdatamodel folder or a "
                    + ".mom file")
        }
    }

    /// Every version of the model at `url`, in version order, and the name of the current one (`nil` when the
    /// bundle does not say). A single-version file (`.xcdatamodel`, `.mom`) is its own current version.
    static func versions(of url: URL) throws -> (
        versions: [(name: String, model: NSManagedObjectModel)], current: String?
    ) {
        switch kind(of: url) {
        case .xcdatamodeld:
            let bundle = try bundleVersions(url)
            var versions: [(name: String, model: NSManagedObjectModel)] = []
            for name in bundle.names {
                let model = NSManagedObjectModel()
                try XMLModelReader(try readVersion(url.appendingPathComponent(name + ".xcdatamodel"))).load(
                    into: model)
                versions.append((name, model))
            }
            return (versions, bundle.current)
        case .momd:
            let compiled = try CompiledModelBundle(contentsOf: url)
            var versions: [(name: String, model: NSManagedObjectModel)] = []
            for name in compiled.versionNames {
                let model = NSManagedObjectModel()
                try compiled.loadVersion(name, into: model)
                versions.append((name, model))
            }
            return (versions, compiled.currentVersionName)
        case .xcdatamodel, .mom, nil:
            let model = NSManagedObjectModel()
            try load(url, into: model)
            let name = model._versionName ?? url.deletingPathExtension().lastPathComponent
            return ([(name, model)], name)
        }
    }

    /// The version names of an `.xcdatamodeld` bundle, in version order, and the current one's (with why it is
    /// unknown, when it is).
    static func bundleVersions(_ url: URL) throws -> (
        names: [String], current: String?, currentProblem: XCDataModelError?
    ) {
        let entries: [String]
        do {
            entries = try FileManager.default.contentsOfDirectory(atPath: url.path)
        } catch {
            let missing = !FileManager.default.fileExists(atPath: url.path)
            throw ModelLoadingError.error(
                missing ? NSFileReadNoSuchFileError : NSFileReadUnknownError, url: url,
                message: "the model bundle cannot be read (\(error.localizedDescription))", underlying: error)
        }
        let names = entries.filter { $0.hasSuffix(".xcdatamodel") }.map { String($0.dropLast(".xcdatamodel".count)) }
            .sorted(by: XCDataModelBundle.finderOrder)
        guard !names.isEmpty else {
            throw ModelLoadingError.invalid(url: url, "the model bundle holds no .xcdatamodel version")
        }
        do {
            return (names, try XCDataModelBundle.currentVersionName(of: url, versions: names), nil)
        } catch {
            return (names, nil, error)
        }
    }

    /// One model version: the XML `contents` of an `.xcdatamodel` folder, or Xcode 3's binary `elements`.
    static func readVersion(_ url: URL) throws -> XCDataModel {
        let isLegacy =
            url.pathExtension == "xcdatamodel"
            && !FileManager.default.fileExists(atPath: url.appendingPathComponent("contents").path)
            && FileManager.default.fileExists(atPath: url.appendingPathComponent("elements").path)
        if isLegacy { return try LegacyModelReader.model(at: url) }
        do {
            return try XCDataModel(contentsOf: url)
        } catch {
            throw ModelLoadingError.error(from: error)
        }
    }
}
