import Foundation

/// What Foundation's `XMLParser` on Linux must not be given: input on which it crashes the process instead of
/// reporting an error. Every reader of XML files that may come from elsewhere (model bundles, mapping models, XML
/// property lists) checks its input here first and refuses it with the reason.
///
/// - Names that are not valid UTF-8: the parser traps converting them.
/// - A processing instruction with no data (`<?target?>`, even `<?xml?>`): the parser reads the missing data as a
///   string and crashes.
package enum XMLParserInputCheck {
    /// Why `data` cannot be parsed safely, and the line where that shows; `nil` when it can.
    package static func problem(in data: Data) -> (message: String, line: Int)? {
        let isUTF16 = data.starts(with: [0xFE, 0xFF]) || data.starts(with: [0xFF, 0xFE])
        guard let text = String(data: data, encoding: isUTF16 ? .utf16 : .utf8) else {
            return ("the file is not valid UTF-8", lineOfFirstInvalidUTF8(in: data))
        }
        return emptyProcessingInstruction(in: Array(text.utf8))
    }

    private static func lineOfFirstInvalidUTF8(in data: Data) -> Int {
        var line = 1
        var decoder = UTF8()
        var iterator = data.makeIterator()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): if scalar == "\n" { line += 1 }
            case .emptyInput, .error: return line
            }
        }
    }

    /// The first `<?name?>` — a name followed straight by `?>` —, if any.
    private static func emptyProcessingInstruction(in bytes: [UInt8]) -> (message: String, line: Int)? {
        let questionMark = UInt8(ascii: "?")
        var line = 1
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\n") { line += 1 }
            if byte == UInt8(ascii: "<"), index + 1 < bytes.count, bytes[index + 1] == questionMark {
                var end = index + 2
                while end < bytes.count, isNameByte(bytes[end]) { end += 1 }
                if end > index + 2, end + 1 < bytes.count, bytes[end] == questionMark,
                    bytes[end + 1] == UInt8(ascii: ">")
                {
                    let instruction = String(decoding: bytes[index...(end + 1)], as: UTF8.self)
                    return (
                        "a processing instruction without data (\(instruction)), which is not XML a model holds", line
                    )
                }
            }
            index += 1
        }
        return nil
    }

    /// Bytes of an XML name: letters, digits, `_`, `-`, `.`, `:` and every byte of a non-ASCII character.
    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: ":"), 0x80...0xFF:
            return true
        default:
            return false
        }
    }
}
