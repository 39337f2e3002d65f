import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

/// One element of an XML document: its name, attributes, child elements and the line it starts on. The model
/// files are small, so reading them whole into this tree keeps the interpretation simple.
struct XMLTreeElement {
    var name: String
    var attributes: [String: String]
    var children: [XMLTreeElement] = []
    var line: Int

    func children(named name: String) -> [XMLTreeElement] {
        children.filter { $0.name == name }
    }

    func child(named name: String) -> XMLTreeElement? {
        children.first { $0.name == name }
    }

    subscript(attribute: String) -> String? { attributes[attribute] }

    /// Xcode writes Boolean attributes as `YES`/`NO` and leaves them out when they have their default.
    func flag(_ attribute: String, default value: Bool = false) -> Bool {
        guard let text = attributes[attribute] else { return value }
        return text == "YES" || text == "true" || text == "1"
    }
}

/// Parses XML data into an `XMLTreeElement` tree with Foundation's `XMLParser`.
enum XMLTreeParser {
    /// Xcode's model files nest five levels (model, entity, attribute, user info, entry); a file nesting deeper is
    /// not a model, and refusing it while parsing keeps a hostile file from building a tree whose release, like its
    /// reading, would recurse once per level.
    static let maximumDepth = 64

    struct Failure: Error {
        var message: String
        var line: Int
    }

    static func parse(_ data: Data) throws(Failure) -> XMLTreeElement {
        if let problem = XMLParserInputCheck.problem(in: data) {
            throw Failure(message: "malformed XML: \(problem.message)", line: problem.line)
        }
        let parser = XMLParser(data: data)
        let builder = Builder(parser: parser)
        parser.delegate = builder
        parser.shouldProcessNamespaces = false
        parser.shouldResolveExternalEntities = false
        let succeeded = parser.parse()
        if let failure = builder.failure { throw failure }
        guard succeeded, let root = builder.root else {
            let message = parser.parserError.map { ($0 as NSError).localizedDescription } ?? "the document is empty"
            throw Failure(message: message, line: parser.lineNumber)
        }
        return root
    }

    private final class Builder: NSObject, XMLParserDelegate {
        private weak var parser: XMLParser?
        private var stack: [XMLTreeElement] = []
        var root: XMLTreeElement?
        var failure: Failure?

        init(parser: XMLParser) {
            self.parser = parser
        }

        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
            qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]
        ) {
            guard stack.count < XMLTreeParser.maximumDepth else {
                if failure == nil {
                    failure = Failure(
                        message: "malformed XML: elements nest more than \(XMLTreeParser.maximumDepth) deep",
                        line: parser.lineNumber)
                }
                parser.abortParsing()
                return
            }
            stack.append(XMLTreeElement(name: elementName, attributes: attributeDict, line: parser.lineNumber))
        }

        func parser(
            _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?
        ) {
            guard let element = stack.popLast() else { return }
            if stack.isEmpty {
                root = element
            } else {
                stack[stack.count - 1].children.append(element)
            }
        }

        func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
            if failure == nil {
                failure = Failure(
                    message: "malformed XML: \((parseError as NSError).localizedDescription)",
                    line: parser.lineNumber)
            }
        }
    }
}
