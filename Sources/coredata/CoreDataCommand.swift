import ArgumentParser

@main
struct CoreDataCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coredata",
        abstract: "Work with Core Data models and stores on any platform.",
        subcommands: [
            DemoCommand.self,
            InspectCommand.self,
            ModelCommand.self,
            DiagramCommand.self,
            CompileCommand.self,
            MigrateCommand.self,
        ]
    )
}
