import ArgumentParser
import Foundation
import OpenCoreData

/// `coredata explain <store> --model <bundle> --entity E [--predicate …]`: the SQL the SQLite store runs for a fetch
/// request, the values it binds, and SQLite's query plan for it — what to read before adding a fetch index.
struct ExplainCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "explain",
        abstract: "Print the SQL a fetch runs on a SQLite store and SQLite's query plan for it.",
        discussion: """
            The SQL is what the store's own generator writes for the request; nothing is fetched. A plan line \
            "SCAN t0" reads the whole table; "SEARCH t0 USING INDEX …" uses a fetch index.

            Examples:
              coredata explain Books.sqlite --model Model.momd --entity Book \\
                --predicate 'title == "Emma"'
              coredata explain Books.sqlite --model Model.momd --entity Book \\
                --sort published:desc --limit 5
            """
    )

    @OptionGroup var fetch: FetchOptions

    func run() throws {
        try StoreAccess.reportingErrors {
            let (coordinator, store) = try StoreAccess.open(fetch.store, modelPath: fetch.model)
            let request: NSFetchRequest<NSFetchRequestResult> = try fetch.request(in: coordinator.managedObjectModel)
            let explanation = try SQLiteFetchExplanation.explain(request, in: store)
            print(Self.render(explanation), terminator: "")
        }
    }

    static func render(_ explanation: SQLiteFetchExplanation) -> String {
        var lines = [Terminal.bold("SQL:"), "  " + explanation.sql]
        if !explanation.arguments.isEmpty {
            lines.append(Terminal.bold("Bound values:"))
            for (index, argument) in explanation.arguments.enumerated() {
                lines.append("  bind[\(index)] = \(argument)")
            }
        }
        if !explanation.isExact {
            lines.append(
                "Note: part of the predicate has no SQL translation; the store returns these rows as candidates and "
                    + "the predicate is evaluated in memory.")
        }
        lines.append(Terminal.bold("Query plan:"))
        lines += SQLiteQueryPlanStep.tree(explanation.plan).dropFirst().map { "  " + $0 }
        return lines.joined(separator: "\n") + "\n"
    }
}
