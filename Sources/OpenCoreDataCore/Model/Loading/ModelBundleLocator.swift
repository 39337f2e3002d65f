/// Finds model files among a bundle's resources: compiled models (`.momd`, `.mom`), which Xcode and the
/// `CoreDataModelCodeGenerator` build plugin write, and Xcode model bundles (`.xcdatamodeld`, `.xcdatamodel`), which
/// a SwiftPM package may copy as they are.
enum ModelBundleLocator {
    /// The extensions of model files, the preferred first when a bundle holds one model in several forms.
    static let extensions = ["momd", "mom", "xcdatamodeld", "xcdatamodel"]

    /// The top-level model files of each bundle; for a model present in several forms, only the preferred one.
    ///
    /// On Linux `Bundle(for: SomeClass.self)` is the folder of the binary that holds the class — SwiftPM's build
    /// folder — while the class's resources are in a resource bundle there (`<Package>_<Target>.resources`). A
    /// bundle with no model of its own is therefore searched through the resource bundles it contains, so that code
    /// written as `NSManagedObjectModel.mergedModel(from: [Bundle(for: Self.self)])` finds its model. (Other targets'
    /// models there are found too, as Apple's framework finds every model of an app's main bundle.)
    static func modelURLs(in bundles: [Bundle]) -> [URL] {
        var result: [URL] = []
        for bundle in bundles {
            let own = modelURLs(inDirectory: resourceDirectory(of: bundle))
            if !own.isEmpty {
                result += own
                continue
            }
            // Several targets of a build may copy one model; each model name is taken once.
            let directory = resourceDirectory(of: bundle)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            var modelNames: Set<String> = []
            for name in names.sorted() where name.hasSuffix(".resources") {
                for url in modelURLs(inDirectory: directory.appendingPathComponent(name))
                where modelNames.insert(url.deletingPathExtension().lastPathComponent).inserted {
                    result.append(url)
                }
            }
        }
        return result
    }

    /// The top-level model files of one folder, each model in its preferred form.
    private static func modelURLs(inDirectory directory: URL) -> [URL] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return [] }
        var byBaseName: [String: URL] = [:]
        for name in names.sorted() {
            let url = directory.appendingPathComponent(name)
            guard let rank = extensions.firstIndex(of: url.pathExtension.lowercased()) else { continue }
            let base = url.deletingPathExtension().lastPathComponent
            if let existing = byBaseName[base],
                let existingRank = extensions.firstIndex(of: existing.pathExtension.lowercased()),
                existingRank <= rank
            {
                continue
            }
            byBaseName[base] = url
        }
        return byBaseName.keys.sorted().compactMap { byBaseName[$0] }
    }

    /// The model named `name` (`name.momd`, `name.mom`, `name.xcdatamodeld`, `name.xcdatamodel`) in the first of
    /// `bundles` that has one.
    static func modelURL(named name: String, in bundles: [Bundle]) -> URL? {
        for bundle in bundles {
            let directory = resourceDirectory(of: bundle)
            for fileExtension in extensions {
                let url = directory.appendingPathComponent(name).appendingPathExtension(fileExtension)
                if FileManager.default.fileExists(atPath: url.path) { return url }
            }
        }
        return nil
    }

    /// The bundles a program's models may be in: the main bundle, the SwiftPM resource bundles beside its
    /// executable (`<Package>_<Target>.resources` on Linux, `<Package>_<Target>.bundle` on Apple platforms) and
    /// every other loaded bundle.
    static func candidateBundles() -> [Bundle] {
        var bundles: [Bundle] = [Bundle.main]
        var seen: Set<String> = [Bundle.main.bundleURL.standardizedFileURL.path]
        let directories = [
            Bundle.main.bundleURL, Bundle.main.executableURL?.deletingLastPathComponent(), Bundle.main.resourceURL,
        ].compactMap { $0 }
        // The executable's own resource bundle (`<Package>_<Executable>.resources`) first.
        let executable = Bundle.main.executableURL?.deletingPathExtension().lastPathComponent ?? ""
        func isOwn(_ name: String) -> Bool {
            !executable.isEmpty
                && (name.hasSuffix("_\(executable).resources") || name.hasSuffix("_\(executable).bundle"))
        }
        for directory in directories {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { continue }
            let ordered = names.sorted { lhs, rhs in
                isOwn(lhs) != isOwn(rhs) ? isOwn(lhs) : lhs < rhs
            }
            for name in ordered where name.hasSuffix(".resources") || name.hasSuffix(".bundle") {
                let url = directory.appendingPathComponent(name)
                guard seen.insert(url.standardizedFileURL.path).inserted, let bundle = Bundle(url: url) else {
                    continue
                }
                bundles.append(bundle)
            }
        }
        for bundle in Bundle.allBundles + Bundle.allFrameworks
        where seen.insert(bundle.bundleURL.standardizedFileURL.path).inserted {
            bundles.append(bundle)
        }
        return bundles
    }

    /// Where a bundle keeps its resources: `Contents/Resources` in a macOS bundle, the bundle folder itself in a
    /// flat one (iOS, SwiftPM on Linux).
    static func resourceDirectory(of bundle: Bundle) -> URL {
        bundle.resourceURL ?? bundle.bundleURL
    }
}
