import Foundation
import XCDataModelFormat

#if canImport(FoundationXML)
import FoundationXML
#endif

/// Reads Apple's XML property list format, the other form of a keyed archive: `NSKeyedArchiver` writes it when asked
/// for `.xml` output, and a compiled model (`.mom`) converted with `plutil -convert xml1` is one. References are the
/// one-key dictionaries `<dict><key>CF$UID</key><integer>n</integer></dict>`, read as UIDs, as Apple's reader does.
/// Foundation's `PropertyListSerialization` reads the format too, but on Linux gives UIDs as an opaque internal type.
struct XMLPropertyListReader {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Property lists nest a few levels (a keyed archive two); deeper nesting is refused while parsing.
    static let maximumDepth = 512

    private let data: Data

    init(_ data: Data) {
        self.data = data
    }

    /// Whether `data` starts like an XML property list (after a byte order mark and white space).
    static func looksLikeXML(_ data: Data) -> Bool {
        var bytes = data.prefix(64)[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        let text = bytes.drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        return text.starts(with: Array("<?xml".utf8)) || text.starts(with: Array("<plist".utf8))
            || text.starts(with: Array("<!DOCTYPE plist".utf8))
    }

    func read() throws -> PropertyListValue {
        if let problem = XMLParserInputCheck.problem(in: data) {
            throw Failure(description: "not a well-formed XML property list (line \(problem.line)): \(problem.message)")
        }
        let builder = Builder()
        let parser = XMLParser(data: data)
        parser.delegate = builder
        parser.shouldResolveExternalEntities = false
        let parsed = parser.parse()
        if let failure = builder.failure { throw Failure(description: failure) }
        guard parsed else {
            throw Failure(
                description:
                    "not a well-formed XML property list (line \(parser.lineNumber)): "
                    + (parser.parserError.map { "\($0)" } ?? "unknown error"))
        }
        guard let root = builder.root else { throw Failure(description: "the XML property list holds no value") }
        return root
    }

    private final class Builder: NSObject, XMLParserDelegate {
        enum Frame {
            case array([PropertyListValue])
            case dictionary([String: PropertyListValue], key: String?)
        }

        var stack: [Frame] = []
        var root: PropertyListValue?
        var text = ""
        var collecting = false
        var failure: String?
        var depth = 0

        func fail(_ parser: XMLParser, _ message: String) {
            if failure == nil { failure = "\(message) (line \(parser.lineNumber))" }
            parser.abortParsing()
        }

        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
            qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]
        ) {
            depth += 1
            guard depth <= XMLPropertyListReader.maximumDepth else {
                return fail(parser, "the property list nests deeper than \(XMLPropertyListReader.maximumDepth) levels")
            }
            switch elementName {
            case "plist": break
            case "array": stack.append(.array([]))
            case "dict": stack.append(.dictionary([:], key: nil))
            case "key", "string", "integer", "real", "date", "data", "true", "false":
                text = ""
                collecting = true
            default: fail(parser, "unknown property list element <\(elementName)>")
            }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            if collecting { text += string }
        }

        func parser(
            _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?
        ) {
            depth -= 1
            collecting = false
            let value: PropertyListValue
            switch elementName {
            case "plist":
                return
            case "key":
                guard case .dictionary(let entries, nil)? = stack.last else {
                    return fail(parser, "a <key> outside a dictionary, or two keys in a row")
                }
                stack[stack.count - 1] = .dictionary(entries, key: text)
                return
            case "array":
                guard case .array(let items)? = stack.popLast() else { return fail(parser, "unbalanced <array>") }
                value = .array(items)
            case "dict":
                guard case .dictionary(let entries, let key)? = stack.popLast(), key == nil else {
                    return fail(parser, "unbalanced <dict>, or a key without a value")
                }
                if entries.count == 1, let uid = entries["CF$UID"]?.integer, uid >= 0, uid <= Int64(Int32.max) {
                    value = .uid(Int(uid))
                } else {
                    value = .dictionary(entries)
                }
            case "string":
                value = .string(text)
            case "integer":
                let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
                if let integer = Int64(trimmed) {
                    value = .integer(integer)
                } else if let unsigned = UInt64(trimmed) {
                    value = .integer(Int64(bitPattern: unsigned))
                } else {
                    return fail(parser, "'\(trimmed)' is not an integer")
                }
            case "real":
                guard let real = Double(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                    return fail(parser, "'\(text)' is not a real number")
                }
                value = .real(real)
            case "true": value = .bool(true)
            case "false": value = .bool(false)
            case "date":
                guard let date = ISO8601DateFormatter().date(from: text.trimmingCharacters(in: .whitespacesAndNewlines))
                else { return fail(parser, "'\(text)' is not a date") }
                value = .date(date)
            case "data":
                let compact = text.filter { !$0.isWhitespace }
                guard let data = Data(base64Encoded: compact) else { return fail(parser, "<data> is not base64") }
                value = .data(data)
            default:
                return
            }
            // Popped before changing, so that the container is not copied for every value.
            switch stack.popLast() {
            case nil:
                guard root == nil else { return fail(parser, "the property list holds more than one value") }
                root = value
            case .array(var items):
                items.append(value)
                stack.append(.array(items))
            case .dictionary(var entries, let key):
                guard let key else { return fail(parser, "a dictionary value without a <key>") }
                entries[key] = value
                stack.append(.dictionary(entries, key: nil))
            }
        }
    }
}
