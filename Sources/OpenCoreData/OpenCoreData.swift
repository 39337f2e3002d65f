// OpenCoreData re-exports Foundation, as Apple's Core Data does, so that `import OpenCoreData` alone gives a
// Core Data user everything `import CoreData` gives them. Declarations in this module that carry the name of a
// Foundation type which swift-corelibs-foundation lacks or marks unavailable (`NSPredicate`, `NSExpression`,
// `NSSortDescriptor`, `UndoManager`, `ValueTransformer`) shadow Foundation's for every client importing both.
@_exported import Foundation
