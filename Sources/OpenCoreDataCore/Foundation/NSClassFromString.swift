/// The class named `aClassName`, as Foundation finds it, and also by its unqualified Swift name
/// (`NSClassFromString("Author")` for `MyApp.Author`) when one loaded class of that name descends from `NSObject`.
///
/// On Apple platforms a class declared `@objc(Author)` — as Xcode's generated managed object classes are — has the
/// runtime name `Author`, and code finds it from an entity's `managedObjectClassName` that way. `@objc` does not
/// exist on Linux, so the unqualified name is looked up among the loaded Swift images instead. This function
/// shadows Foundation's for files that import OpenCoreData.
public func NSClassFromString(_ aClassName: String) -> AnyClass? {
    if let found = Foundation.NSClassFromString(aClassName) { return found }
    return ManagedObjectClassRegistry.objectiveCStyleClass(named: aClassName)
}
