// Lets one source file build against Apple's Core Data on Apple platforms and against OpenCoreData
// everywhere else: `import OpenCoreDataShim` and write Apple's API.
#if canImport(CoreData)
@_exported import CoreData
#else
@_exported import OpenCoreData
#endif
