import Foundation
import PackagePlugin

/// Makes `NSPredicate`, `NSExpression`, `NSComparisonPredicate`, `NSCompoundPredicate` and `NSSortDescriptor` mean
/// OpenCoreData's classes in every file of a target, also in files that import only Foundation — where code written
/// for Apple platforms finds them, since they are Foundation's there. Without it, such a file gets Foundation's
/// classes on Linux, which lack what they need to work (`NSPredicate(format:)` is unavailable), and must import
/// OpenCoreData itself.
///
/// ```swift
/// .target(
///     name: "Queries",
///     dependencies: [.product(name: "OpenCoreData", package: "OpenCoreData")],
///     plugins: [.plugin(name: "OpenCoreDataFoundationNames", package: "OpenCoreData")]
/// )
/// ```
@main
struct OpenCoreDataFoundationNames: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("OpenCoreDataFoundationNames.swift")
        return [
            .buildCommand(
                displayName: "Naming OpenCoreData's Foundation classes for \(target.name)",
                executable: try context.tool(named: "CoreDataModelGenerator").url,
                arguments: ["--foundation-names", output.path],
                outputFiles: [output])
        ]
    }
}
