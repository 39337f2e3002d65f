import SwiftCompilerPlugin
import SwiftSyntaxMacros

@main
struct OpenCoreDataMacrosPlugin: CompilerPlugin {
    let providingMacros: [Macro.Type] = [ManagedMacro.self, ManagedAccessorMacro.self]
}
