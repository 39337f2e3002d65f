import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How the tool writes to standard output: with colour only when it is a terminal and the user did not ask for none
/// (`NO_COLOR`, https://no-color.org), so that piped output stays plain text.
enum Terminal {
    static let isColored: Bool = {
        let environment = ProcessInfo.processInfo.environment
        guard isatty(STDOUT_FILENO) != 0, environment["TERM"] != "dumb" else { return false }
        return environment["NO_COLOR"].map(\.isEmpty) ?? true
    }()

    static func bold(_ text: String) -> String { isColored ? "\u{1B}[1m\(text)\u{1B}[0m" : text }
    static func dim(_ text: String) -> String { isColored ? "\u{1B}[2m\(text)\u{1B}[0m" : text }
    static func red(_ text: String) -> String { isColored ? "\u{1B}[31m\(text)\u{1B}[0m" : text }
    static func green(_ text: String) -> String { isColored ? "\u{1B}[32m\(text)\u{1B}[0m" : text }
}

/// Rows drawn as aligned columns: text to the left, numbers to the right, a rule under the header.
struct TextTable {
    var columns: [String]
    var rows: [[String]] = []
    /// Columns whose cells are numbers, aligned right.
    var numeric: Set<Int> = []

    func render() -> String {
        var widths = columns.map(\.count)
        for row in rows {
            for (index, cell) in row.enumerated() where index < widths.count {
                widths[index] = max(widths[index], cell.count)
            }
        }
        func line(_ cells: [String], style: (String) -> String = { $0 }) -> String {
            var parts: [String] = []
            for (index, width) in widths.enumerated() {
                let cell = index < cells.count ? cells[index] : ""
                let padding = String(repeating: " ", count: max(0, width - cell.count))
                let isLast = index == widths.count - 1
                if numeric.contains(index) {
                    parts.append(padding + style(cell))
                } else {
                    parts.append(style(cell) + (isLast ? "" : padding))
                }
            }
            return parts.joined(separator: "  ")
        }
        var lines = [line(columns, style: Terminal.bold)]
        lines.append(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  "))
        for row in rows { lines.append(line(row)) }
        return lines.joined(separator: "\n") + "\n"
    }
}
