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
            let bundle = try readBundle(url)
            let current: XCDataModel
            do {
                current = try bundle.currentVersion()
            } catch {
                throw ModelLoadingError.error(from: error)
            }
            try XMLModelReader(current).load(into: model)
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
            let bundle = try readBundle(url)
            var versions: [(name: String, model: NSManagedObjectModel)] = []
            for version in bundle.versions {
                let model = NSManagedObjectModel()
                try XMLModelReader(version).load(into: model)
                versions.append((version.name, model))
            }
            return (versions, bundle.currentVersionName)
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

    static func readBundle(_ url: URL) throws -> XCDataModelBundle {
        do {
            return try XCDataModelBundle(contentsOf: url)
        } catch {
            throw ModelLoadingError.error(from: error)
        }
    }

    static func readVersion(_ url: URL) throws -> XCDataModel {
        do {
            return try XCDataModel(contentsOf: url)
        } catch {
            throw ModelLoadingError.error(from: error)
        }
    }
}
