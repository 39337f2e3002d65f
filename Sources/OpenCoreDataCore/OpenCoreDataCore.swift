// The framework's implementation. Clients import `OpenCoreData` (or `OpenCoreDataShim`), never this module: see
// `Sources/OpenCoreData/OpenCoreData.swift` for why the two are separate.
//
// OpenCoreData re-exports Foundation, as Apple's Core Data does, so that `import OpenCoreData` alone gives a
// Core Data user everything `import CoreData` gives them.
@_exported import Foundation
