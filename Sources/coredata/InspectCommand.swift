import ArgumentParser
import Foundation
import OpenCoreData

/// `coredata inspect <store.sqlite>`: a SQLite store's metadata and how many objects of each entity it holds, read
/// without the store's model and without writing to the file.
///
/// ```
/// $ coredata inspect Recipes.sqlite
/// ```
struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Print a SQLite store's metadata and its row count per entity, without its model."
    )

    @Argument(help: "The SQLite store file (with its -wal file beside it, if any).")
    var store: String

    func run() throws {
        let url = URL(fileURLWithPath: store)
        let summary: SQLiteStoreSummary
        do {
            summary = try SQLiteStoreInspector.summary(of: url)
        } catch {
            throw Failure(message: (error as NSError).localizedDescription, code: (error as NSError).code)
        }
        print(Self.render(summary, path: url.path), terminator: "")
    }

    /// A store that cannot be inspected: the reason, and the Core Data error code.
    struct Failure: Error, CustomStringConvertible {
        let message: String
        let code: Int
        var description: String { "\(message) (error \(code))" }
    }

    /// The report printed for `summary`.
    static func render(_ summary: SQLiteStoreSummary, path: String) -> String {
        var lines: [String] = []
        lines.append("Store: \(path)")
        lines.append("Type: \(summary.metadata[NSStoreTypeKey] as? String ?? "(unknown)")")
        lines.append("UUID: \(summary.metadata[NSStoreUUIDKey] as? String ?? "(none)")")
        lines.append("Journal mode: \(summary.journalMode)")
        lines.append("Size: \(summary.pageCount) pages of \(summary.pageSize) bytes")
        lines.append("")
        lines.append("Metadata:")
        for (key, value) in summary.metadata.sorted(by: { $0.key < $1.key })
        where key != NSStoreUUIDKey && key != NSStoreTypeKey {
            lines.append("  \(key): \(describe(value, indent: "  "))")
        }
        lines.append("")
        lines.append("Entities:")
        let names = summary.entities.map(\.name)
        let nameWidth = max(6, names.map(\.count).max() ?? 0)
        let superNames = Dictionary(
            summary.entities.map { ($0.number, $0.name) }, uniquingKeysWith: { first, _ in first })
        let superWidth = max(11, summary.entities.map { superNames[$0.superNumber]?.count ?? 0 }.max() ?? 0)
        func pad(_ text: String, _ width: Int) -> String {
            text + String(repeating: " ", count: max(0, width - text.count))
        }
        lines.append(
            "  \(pad("Z_ENT", 6)) \(pad("Entity", nameWidth)) \(pad("Superentity", superWidth)) \(pad("Rows", 8)) Z_MAX"
        )
        for entity in summary.entities {
            let rows = entity.rows.map(String.init) ?? "(no table)"
            let superName = superNames[entity.superNumber] ?? ""
            lines.append(
                "  \(pad(String(entity.number), 6)) \(pad(entity.name, nameWidth)) \(pad(superName, superWidth)) "
                    + "\(pad(rows, 8)) \(entity.maxKey)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A metadata value: hashes as base64, collections one entry per line.
    static func describe(_ value: Any, indent: String) -> String {
        switch value {
        case let data as Data:
            return data.base64EncodedString()
        case let dictionary as [String: Any]:
            let entries = dictionary.sorted(by: { $0.key < $1.key }).map { key, value in
                "\(indent)  \(key): \(describe(value, indent: indent + "  "))"
            }
            return entries.isEmpty ? "{}" : "\n" + entries.joined(separator: "\n")
        case let array as [Any]:
            return "[" + array.map { describe($0, indent: indent) }.joined(separator: ", ") + "]"
        default:
            return String(describing: value)
        }
    }
}
