#if !canImport(CoreData)
import Foundation
@testable import OpenCoreDataCore
import Testing

/// `NSStoreModelVersionHashesDigest`, which stores record beside the hashes and which Apple exposes no API for:
/// the Base64 SHA-512 of each entity's name and hash in name order, checked against the corpus stores.
@Suite struct VersionHashDigestTests {
    @Test func digestsMatchTheStores() throws {
        var checked = 0
        for url in ModelCorpus.storeMetadata {
            let metadata = try ModelCorpus.propertyList(url)
            guard let digest = metadata["NSStoreModelVersionHashesDigest"] as? String,
                let hashes = metadata[NSStoreModelVersionHashesKey] as? [String: Data]
            else { continue }
            #expect(ModelVersionHasher.versionHashesDigest(of: hashes) == digest, "\(url.lastPathComponent)")
            checked += 1
        }
        #expect(checked == 5)
    }

    @Test func sha512OfKnownInputs() {
        let empty = Data(SHA512.hash([])).map { String(format: "%02x", $0) }.joined()
        #expect(empty.hasPrefix("cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce"))
        let long = Data(SHA512.hash(Array(repeating: UInt8(ascii: "a"), count: 1_000))).map {
            String(format: "%02x", $0)
        }.joined()
        #expect(long.hasPrefix("67ba5535a46e3f86dbfbed8cbbaf0125c76ed549ff8b0b9e03e0c88cf90fa634"))
    }
}
#endif
