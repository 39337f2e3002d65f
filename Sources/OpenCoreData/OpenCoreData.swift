// What clients import. The framework itself is in `OpenCoreDataCore`; this module re-exports it, and re-exports the
// classes that share their name with a Foundation class once more, each with a scoped import.
//
// Why: swift-corelibs-foundation declares `NSPredicate`, `NSCompoundPredicate`, `NSComparisonPredicate`,
// `NSExpression` and `NSSortDescriptor` too, without the parts Core Data needs (`NSPredicate(format:)` and
// `NSExpression` are unavailable or unimplemented there). A source file that imports Foundation and a module
// declaring the same names gets "'NSPredicate' is ambiguous for type lookup", because a module shadows Foundation's
// declarations only where Foundation is reachable solely through that module, and every real file imports
// Foundation itself. Swift's name lookup has one more rule for two top-level declarations from modules that neither
// shadow the other: the one visible through a scoped import (`import class M.Name`) wins. A scoped `@_exported`
// import is seen by every client of this module as such, so unqualified `NSPredicate` means OpenCoreData's class in
// every file that imports OpenCoreData (directly or through OpenCoreDataShim), whatever else it imports, in any
// order: in type position, expressions, casts, extensions and generic constraints.
// `Tests/ImportOrder*Tests` prove it for each order. `Foundation.NSPredicate` still names Foundation's class.
//
// The same holds for functions: `NSClassFromString` also finds classes by their unqualified Swift name.
// A name added to OpenCoreDataCore that Foundation also declares must be added here.
@_exported import OpenCoreDataCore

@_exported import func OpenCoreDataCore.NSClassFromString
@_exported import class OpenCoreDataCore.NSComparisonPredicate
@_exported import class OpenCoreDataCore.NSCompoundPredicate
@_exported import class OpenCoreDataCore.NSExpression
@_exported import class OpenCoreDataCore.NSPredicate
@_exported import class OpenCoreDataCore.NSSortDescriptor
