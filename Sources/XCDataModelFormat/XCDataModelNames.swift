/// The rules Xcode's model editor holds names to. A model file may come from anywhere (a downloaded bundle, a
/// compiled `.momd`), and its names become class names in generated code and table and column names in SQLite
/// stores, so readers check them rather than trust the editor that normally wrote the file.
public enum XCDataModelNames {
    /// How every name goes on after its first character, for messages.
    public static let rest = "ASCII letters, digits and underscores only"

    /// An entity name: an upper-case ASCII letter, then ASCII letters, digits and underscores.
    public static func isEntityName(_ name: String) -> Bool {
        guard let first = name.utf8.first, first >= UInt8(ascii: "A"), first <= UInt8(ascii: "Z") else { return false }
        return name.utf8.dropFirst().allSatisfy(isNamePart)
    }

    /// A property name: a lower-case ASCII letter, then ASCII letters, digits and underscores.
    public static func isPropertyName(_ name: String) -> Bool {
        guard let first = name.utf8.first, first >= UInt8(ascii: "a"), first <= UInt8(ascii: "z") else { return false }
        return name.utf8.dropFirst().allSatisfy(isNamePart)
    }

    /// A fetch index name: an ASCII letter, then ASCII letters, digits and underscores.
    public static func isIndexName(_ name: String) -> Bool {
        guard let first = name.utf8.first, first | 0x20 >= UInt8(ascii: "a"), first | 0x20 <= UInt8(ascii: "z") else {
            return false
        }
        return name.utf8.dropFirst().allSatisfy(isNamePart)
    }

    private static func isNamePart(_ byte: UInt8) -> Bool {
        (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_")
    }
}
