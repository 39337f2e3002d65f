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

    /// Entity hashes are SHA-256; these lengths cover a message that ends inside, at and past a block's room for the
    /// length.
    @Test func sha256OfKnownInputs() {
        func hex(_ message: [UInt8]) -> String { SHA256.hash(message).map { String(format: "%02x", $0) }.joined() }
        func a(_ count: Int) -> [UInt8] { Array(repeating: UInt8(ascii: "a"), count: count) }
        #expect(hex([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(hex(a(55)) == "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318")
        #expect(hex(a(56)) == "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a")
        #expect(hex(a(63)) == "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34")
        #expect(hex(a(64)) == "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb")
        #expect(hex(a(65)) == "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0")
        #expect(hex(a(1_000)) == "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3")
    }
}
#endif
