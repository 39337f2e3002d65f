import ArgumentParser

@main
struct CoreDataCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coredata",
        abstract: "Work with Core Data models and stores on any platform.",
        subcommands: [
            DemoCommand.self,
            InspectCommand.self,
            QueryCommand.self,
            ExplainCommand.self,
            CheckCommand.self,
            ModelCommand.self,
            DiagramCommand.self,
            CompileCommand.self,
            MigrateCommand.self,
        ]
    )

    /// Runs the command the arguments name, leaving out Core Data's debug switches in their launch-argument form
    /// (`-com.apple.CoreData.SQLDebug 1`): the framework reads them from the process's arguments itself.
    static func main() {
        main(withoutDebugSwitches(Array(CommandLine.arguments.dropFirst())))
    }

    static func withoutDebugSwitches(_ arguments: [String]) -> [String] {
        var kept: [String] = []
        var index = 0
        while index < arguments.count {
            if arguments[index].hasPrefix("-com.apple.CoreData."), index + 1 < arguments.count {
                index += 2
            } else {
                kept.append(arguments[index])
                index += 1
            }
        }
        return kept
    }
}
