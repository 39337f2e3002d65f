extension NSPersistentContainer {
    /// A container whose model is the one named `name` among the program's resources: `name.momd` or `name.mom`
    /// (built by Xcode), or `name.xcdatamodeld` (copied as a SwiftPM resource), looked for in the main bundle, the
    /// SwiftPM resource bundles beside the executable, then every other loaded bundle.
    ///
    /// As in Apple's framework, a missing model is not fatal here: the container logs where it looked and gets an
    /// empty model, with which loading stores and fetching fail later with errors naming the missing entities.
    ///
    /// ```swift
    /// // Package.swift: .executableTarget(name: "App", resources: [.copy("Company.xcdatamodeld")])
    /// let container = NSPersistentContainer(name: "Company")
    /// ```
    public convenience init(name: String) {
        let bundles = ModelBundleLocator.candidateBundles()
        if let url = ModelBundleLocator.modelURL(named: name, in: bundles) {
            do {
                let model = try NSManagedObjectModel(validatingContentsOf: url)
                self.init(name: name, managedObjectModel: model)
                return
            } catch {
                Self._log("CoreData: error: Failed to load model named \(name): \(error.localizedDescription)")
            }
        } else {
            let places = bundles.prefix(8).map { ModelBundleLocator.resourceDirectory(of: $0).path }
            Self._log(
                """
                CoreData: error: Failed to load model named \(name): no \(name).momd, \(name).mom or \
                \(name).xcdatamodeld in \(places.joined(separator: ", "))\(bundles.count > 8 ? ", …" : ""). \
                In a SwiftPM target, declare the model as a resource: resources: [.copy("\(name).xcdatamodeld")]
                """)
        }
        self.init(name: name, managedObjectModel: NSManagedObjectModel())
    }

    private static func _log(_ message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }
}
