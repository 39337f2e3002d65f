/// What a command could not do: the reason a person can act on, and the Core Data error code it stands for.
struct ToolFailure: Error, CustomStringConvertible {
    let message: String
    let code: Int

    var description: String { "\(message) (error \(code))" }
}
