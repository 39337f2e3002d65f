/// Finds and reads mapping model files: compiled `.cdm` files, which Xcode builds, and Xcode's `.xcmappingmodel`
/// folders, which a SwiftPM package copies as they are (there is no mapping model compiler on Linux).
enum MappingModelFileLoader {
    /// The mapping model at `url`: a `.cdm` file, an `.xcmappingmodel` folder, or the `xcmapping.xml` inside one.
    static func load(_ url: URL) throws -> NSMappingModel {
        let mapping: NSMappingModel
        switch url.pathExtension.lowercased() {
        case "cdm":
            mapping = try CompiledMappingModelReader.load(url)
        case "xcmappingmodel":
            mapping = try XcodeMappingModelReader.load(url.appendingPathComponent("xcmapping.xml"))
        case "xml":
            mapping = try XcodeMappingModelReader.load(url)
        default:
            throw error(
                url, NSCoreDataError,
                "the file is not a mapping model: expected a compiled .cdm file or an Xcode .xcmappingmodel folder")
        }
        mapping._sourceURL = url
        return mapping
    }

    /// The data of the file at `url`, at most `limit` bytes, or the error Core Data reports for it.
    static func read(_ url: URL, limit: Int = 64 << 20) throws -> Data {
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        } catch {
            throw MappingModelFileLoader.error(
                url, NSFileReadNoSuchFileError, "no mapping model exists at this path", underlying: error)
        }
        if let size = (attributes[.size] as? NSNumber)?.intValue, size > limit {
            throw MappingModelFileLoader.error(url, NSCoreDataError, "the file is larger than \(limit >> 20) MB")
        }
        do {
            return try Data(contentsOf: url)
        } catch {
            throw MappingModelFileLoader.error(
                url, NSFileReadUnknownError, "the file cannot be read", underlying: error)
        }
    }

    /// An error in Core Data's shape naming the mapping model file.
    static func error(_ url: URL, _ code: Int, _ reason: String, underlying: (any Error)? = nil) -> NSError {
        var info: [String: Any] = [NSFilePathErrorKey: url.path]
        if let underlying { info[NSUnderlyingErrorKey] = underlying }
        return coreDataError(code, "Cannot load the mapping model \(url.path): \(reason)", userInfo: info)
    }

    // MARK: Finding a mapping model

    /// The first mapping model among the resources of `bundles` that maps `source` to `destination`.
    static func mappingModel(
        in bundles: [Bundle], from source: NSManagedObjectModel, to destination: NSManagedObjectModel
    )
        -> NSMappingModel?
    {
        for url in mappingModelURLs(in: bundles) {
            guard let mapping = try? load(url) else { continue }
            XcodeMappingAutogeneration.complete(mapping, sourceModel: source, destinationModel: destination)
            if mapping._maps(source, to: destination) { return mapping }
        }
        return nil
    }

    /// The mapping model files of each bundle: at the top of its resources, or in plain folders below (SwiftPM copies
    /// a resource folder as it is), a few levels deep. Folders with an extension (`.build`, `.swiftmodule`, other
    /// bundles, which are searched on their own) are not entered: a program's directory may hold thousands of files.
    static func mappingModelURLs(in bundles: [Bundle]) -> [URL] {
        var result: [URL] = []
        var seen = Set<String>()
        for bundle in bundles {
            let root = ModelBundleLocator.resourceDirectory(of: bundle)
            var pending: [(URL, Int)] = [(root, 0)]
            var visited = 0
            while let (directory, depth) = pending.popLast(), visited < 2_000 {
                guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { continue }
                for name in names.sorted() where !name.hasPrefix(".") {
                    visited += 1
                    let url = directory.appendingPathComponent(name)
                    switch url.pathExtension.lowercased() {
                    case "cdm", "xcmappingmodel":
                        if seen.insert(url.standardizedFileURL.path).inserted { result.append(url) }
                    case "momd", "mom", "xcdatamodeld", "xcdatamodel", "omo":
                        continue
                    default:
                        var isDirectory: ObjCBool = false
                        if depth < 3, url.pathExtension.isEmpty,
                            FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory),
                            isDirectory.boolValue
                        {
                            pending.append((url, depth + 1))
                        }
                    }
                }
            }
        }
        return result
    }
}
