import Foundation
import OpenCoreDataShim
import Testing

/// Version hashes against the ones Apple's Core Data recorded: the compiled models' `VersionInfo.plist`, the
/// property hashes in their optimized models (`.omo`), and the metadata of stores written on Apple platforms.
@Suite struct VersionHashTests {
    /// `User` of the corpus's SampleModel3, built in code: name (String), petName (optional String).
    @Test func anEntityBuiltInCodeHasApplesHash() {
        let name = NSAttributeDescription()
        name.name = "name"
        name.attributeType = .stringAttributeType
        name.isOptional = false
        let petName = NSAttributeDescription()
        petName.name = "petName"
        petName.attributeType = .stringAttributeType
        petName.isOptional = true
        let user = NSEntityDescription()
        user.name = "User"
        user.managedObjectClassName = "User"
        user.properties = [petName, name]
        let model = NSManagedObjectModel()
        model.entities = [user]
        #expect(name.versionHash.hex == "8cb9965c0031ac68913984f3110941ad965395be9fd9b17de7be54bc7ad46890")
        #expect(petName.versionHash.hex == "3600ceedf50b080f90041365395158784f0deb03bc9acddf1cad607c4fe50742")
        #expect(user.versionHash.hex == "6b31f4e97b691d16c4c820bae55f89408d47013bd42151ecfde1eac7fe4be798")
        #expect(model.versionChecksum == "u970QgYhRHEJGIt0zQr1UhuZL2ZJ1KxBS+B7rkAx0ik=")
    }

    @Test func theHashChangesWithWhatApplesDocumentationNames() {
        func hash(_ configure: (NSEntityDescription, NSAttributeDescription) -> Void) -> Data {
            let attribute = NSAttributeDescription()
            attribute.name = "title"
            attribute.attributeType = .stringAttributeType
            let entity = NSEntityDescription()
            entity.name = "Book"
            configure(entity, attribute)
            entity.properties = [attribute]
            let model = NSManagedObjectModel()
            model.entities = [entity]
            return entity.versionHash
        }
        let base = hash { _, _ in }
        #expect(hash { _, attribute in attribute.isOptional = false } != base)
        #expect(hash { _, attribute in attribute.attributeType = .binaryDataAttributeType } != base)
        #expect(hash { _, attribute in attribute.versionHashModifier = "2" } != base)
        #expect(hash { entity, _ in entity.versionHashModifier = "2" } != base)
        #expect(hash { entity, _ in entity.isAbstract = true } != base)
        #expect(hash { _, attribute in attribute.isTransient = true } != base)
        // Not part of the hash: class names, defaults, user info, renaming identifiers, validation.
        #expect(hash { entity, _ in entity.managedObjectClassName = "Book" } == base)
        #expect(hash { _, attribute in attribute.defaultValue = "Untitled" } == base)
        #expect(hash { _, attribute in attribute.userInfo = ["key": "value"] } == base)
        #expect(hash { _, attribute in attribute.renamingIdentifier = "name" } == base)
        #expect(hash { entity, _ in entity.renamingIdentifier = "Volume" } == base)
    }
}

#if !canImport(CoreData)
/// Loaded models' hashes against the ones Apple's Core Data recorded in the corpus (loading Xcode sources is
/// OpenCoreData's own).
@Suite struct RecordedVersionHashTests {
    /// Every entity hash of every compiled model's `VersionInfo.plist` equals the hash of the version loaded from
    /// its Xcode source and from its compiled `.mom`.
    @Test func compiledModelHashesAreApples() throws {
        var compared = 0
        for momd in ModelCorpus.compiledModels {
            let info = try ModelCorpus.propertyList(momd.appendingPathComponent("VersionInfo.plist"))
            let recorded = try #require(info["NSManagedObjectModel_VersionHashes"] as? [String: [String: Data]])
            let sourceFolder = momd.deletingLastPathComponent().deletingLastPathComponent()
            for (version, hashes) in recorded {
                let source = try #require(
                    ModelCorpus.modelVersions.first {
                        $0.path.hasPrefix(sourceFolder.path + "/") && $0.lastPathComponent == version + ".xcdatamodel"
                    })
                let fromSource = try NSManagedObjectModel(validatingContentsOf: source)
                let fromCompiled = try NSManagedObjectModel(
                    validatingContentsOf: momd.appendingPathComponent(version + ".mom"))
                #expect(fromSource.entityVersionHashesByName == hashes, "\(version) from its source")
                #expect(fromCompiled.entityVersionHashesByName == hashes, "\(version) from its .mom")
                if let checksums = info["NSManagedObjectModel_VersionChecksums"] as? [String: String] {
                    #expect(fromSource.versionChecksum == checksums[version], "\(version) checksum")
                }
                compared += hashes.count
            }
        }
        #expect(compared == 18)
    }

    /// The optimized model (`.omo`) Xcode builds beside a `.mom` holds Apple's hash of every entity and every
    /// property; each of ours is among them.
    @Test func propertyHashesAreApples() throws {
        let momd = try #require(ModelCorpus.compiledModels.first { $0.lastPathComponent == "SampleModel.momd" })
        let recorded = Self.embeddedHashes(in: try Data(contentsOf: momd.appendingPathComponent("SampleModel.omo")))
        let source = try #require(
            ModelCorpus.modelVersions.first {
                $0.path.contains("source_at_c42926a") && $0.lastPathComponent == "SampleModel.xcdatamodel"
            })
        let model = try NSManagedObjectModel(validatingContentsOf: source)
        var properties = 0
        for entity in model.entities {
            #expect(recorded.contains(entity.versionHash), "\(entity.name ?? "")")
            for property in entity.properties where property.entity === entity {
                #expect(recorded.contains(property.versionHash), "\(entity.name ?? "").\(property.name)")
                properties += 1
            }
        }
        #expect(properties == 14)
        #expect(recorded.count == 18)
    }

    /// The stores' metadata: each store's hashes equal those of one version of the model it was made with. The
    /// one exception is MagicalRecord's Recipes store, whose model is only in Xcode 3's binary format.
    @Test func storeHashesAreApples() throws {
        var matched = 0
        var unmatched: [String] = []
        for url in ModelCorpus.storeMetadata {
            let metadata = try ModelCorpus.propertyList(url)
            let recorded = try #require(metadata[NSStoreModelVersionHashesKey] as? [String: Data])
            let models = try Self.candidateModels(for: url)
            let best =
                models.map { model in
                    recorded.filter { model.entityVersionHashesByName[$0.key] == $0.value }.count
                }.max() ?? 0
            matched += best
            if best < recorded.count { unmatched.append(url.lastPathComponent) }
            if best == recorded.count, let checksum = metadata["NSStoreModelVersionChecksumKey"] as? String {
                let model = try #require(models.first { $0.entityVersionHashesByName == recorded })
                #expect(model.versionChecksum == checksum, "\(url.lastPathComponent)")
                #expect(model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
            }
        }
        #expect(matched == 29, "29 of the 33 recorded hashes; Recipes' 4 need an Xcode 3 model reader")
        #expect(unmatched == ["Recipes.metadata.plist.xml"])
    }

    /// A store's metadata selects its model's version among a bundle's versions.
    @Test func mergedModelForStoreMetadataPicksTheStoresVersion() throws {
        let directory = try ModelScratchDirectory()
        let bundleURL = try #require(ModelCorpus.modelBundles.first { $0.path.contains("CoreDataPlus/SampleModel/") })
        try FileManager.default.copyItem(
            at: bundleURL, to: directory.url.appendingPathComponent("SampleModel.xcdatamodeld"))
        let bundle = try #require(Bundle(url: directory.url))
        for version in ["V1", "V2"] {
            let metadataURL = try #require(
                ModelCorpus.storeMetadata.first { $0.lastPathComponent == "SampleModel_\(version).metadata.plist.xml" })
            let metadata = try ModelCorpus.propertyList(metadataURL)
            let model = try #require(NSManagedObjectModel.mergedModel(from: [bundle], forStoreMetadata: metadata))
            #expect(model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
            #expect(model.entityVersionHashesByName == metadata[NSStoreModelVersionHashesKey] as? [String: Data])
        }
        let current = try #require(NSManagedObjectModel.mergedModel(from: [bundle]))
        let expected = try #require(
            NSManagedObjectModel(contentsOf: directory.url.appendingPathComponent("SampleModel.xcdatamodeld")))
        #expect(current.entityVersionHashesByName == expected.entityVersionHashesByName)
        let foreign: [String: Any] = [NSStoreModelVersionHashesKey: ["Car": Data(repeating: 0, count: 32)]]
        #expect(NSManagedObjectModel.mergedModel(from: [bundle], forStoreMetadata: foreign) == nil)
    }

    /// The models a store may have been made with: every version in its repository's corpus folders, and the
    /// model the store cached (`.modelcache.bplist`, a keyed archive like a `.mom`).
    static func candidateModels(for metadataURL: URL) throws -> [NSManagedObjectModel] {
        let relative = ModelCorpus.relativePath(metadataURL)
        let repository = relative.split(separator: "/").dropFirst().first.map(String.init) ?? ""
        var models: [NSManagedObjectModel] = []
        for version in ModelCorpus.modelVersions where version.path.contains("/\(repository)/") {
            if let model = NSManagedObjectModel(contentsOf: version) { models.append(model) }
        }
        let cache = URL(
            fileURLWithPath: metadataURL.path.replacingOccurrences(
                of: ".metadata.plist.xml", with: ".modelcache.bplist"))
        if FileManager.default.fileExists(atPath: cache.path) {
            let directory = try ModelScratchDirectory()
            let mom = directory.url.appendingPathComponent("Cached.mom")
            try FileManager.default.copyItem(at: cache, to: mom)
            models.append(try NSManagedObjectModel(validatingContentsOf: mom))
        }
        return models
    }

    /// The 32-byte values an optimized model stores, each after a 32-bit length of 32 and 4 bytes of padding.
    static func embeddedHashes(in data: Data) -> Set<Data> {
        let bytes = Array(data)
        let marker: [UInt8] = [0, 0, 0, 0x20, 0, 0, 0, 0]
        var hashes = Set<Data>()
        var index = 0
        while index + marker.count + 32 <= bytes.count {
            if bytes[index..<(index + marker.count)].elementsEqual(marker) {
                let start = index + marker.count
                let value = Data(bytes[start..<(start + 32)])
                // Strings share the layout; hashes are the values with no UTF-16 zero bytes pattern.
                if !stride(from: 1, to: 32, by: 2).allSatisfy({ value[$0] == 0 }) { hashes.insert(value) }
                index = start + 32
            } else {
                index += 1
            }
        }
        return hashes
    }
}

#endif

extension Data {
    var hex: String { map { String(format: "%02x", $0) }.joined() }
}
