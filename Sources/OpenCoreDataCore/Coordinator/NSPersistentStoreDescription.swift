/// A description of a store to add: its type, location, configuration and options.
///
/// ```swift
/// let description = NSPersistentStoreDescription(url: url)
/// description.type = NSSQLiteStoreType
/// container.persistentStoreDescriptions = [description]
/// ```
open class NSPersistentStoreDescription: NSObject, NSCopying, @unchecked Sendable {
    // @unchecked: a description is configured and then handed to `loadPersistentStores`, which copies what it needs;
    // changing it during the load is a programmer error, as in Apple's framework.
    /// The store type; `NSSQLiteStoreType` by default.
    open var type: String = NSSQLiteStoreType
    /// The configuration of the model whose entities the store holds.
    open var configuration: String?
    /// Where the store lives: `/dev/null` unless set, as Apple's descriptions start — which for the SQLite store
    /// means a store that lives in memory.
    open var url: URL? = URL(fileURLWithPath: "/dev/null")
    /// The store options.
    open private(set) var options: [String: NSObject] = [:]
    /// SQLite pragmas to set when the store opens.
    open private(set) var sqlitePragmas: [String: NSObject] = [:]
    /// Whether the store is opened read-only.
    open var isReadOnly = false
    /// How long, in seconds, to wait for a busy store file.
    open var timeout: TimeInterval = 240
    /// Whether `loadPersistentStores` adds the store on another thread.
    open var shouldAddStoreAsynchronously = false
    /// Whether a store of an older model version is migrated when added.
    open var shouldMigrateStoreAutomatically = true
    /// Whether that migration infers its mapping model.
    open var shouldInferMappingModelAutomatically = true

    public override init() {
        super.init()
    }

    /// A description of the SQLite store at `url`.
    public convenience init(url: URL) {
        self.init()
        self.url = url
    }

    /// Sets (or, with `nil`, removes) a store option.
    open func setOption(_ option: NSObject?, forKey key: String) {
        options[key] = option
    }

    /// Sets (or removes) a SQLite pragma.
    open func setValue(_ value: NSObject?, forPragmaNamed name: String) {
        sqlitePragmas[name] = value
    }

    /// The options the coordinator is given: the explicit ones plus those the properties stand for.
    var _effectiveOptions: [AnyHashable: Any] {
        var result: [AnyHashable: Any] = [:]
        for (key, value) in options { result[key] = value }
        if isReadOnly { result[NSReadOnlyPersistentStoreOption] = true }
        result[NSPersistentStoreTimeoutOption] = timeout
        result[NSMigratePersistentStoresAutomaticallyOption] = shouldMigrateStoreAutomatically
        result[NSInferMappingModelAutomaticallyOption] = shouldInferMappingModelAutomatically
        if !sqlitePragmas.isEmpty { result[NSSQLitePragmasOption] = sqlitePragmas }
        return result
    }

    open func copy(with zone: NSZone? = nil) -> Any {
        let copy = NSPersistentStoreDescription()
        copy.type = type
        copy.configuration = configuration
        copy.url = url
        copy.options = options
        copy.sqlitePragmas = sqlitePragmas
        copy.isReadOnly = isReadOnly
        copy.timeout = timeout
        copy.shouldAddStoreAsynchronously = shouldAddStoreAsynchronously
        copy.shouldMigrateStoreAutomatically = shouldMigrateStoreAutomatically
        copy.shouldInferMappingModelAutomatically = shouldInferMappingModelAutomatically
        return copy
    }

    open override var description: String {
        "<NSPersistentStoreDescription: \(Unmanaged.passUnretained(self).toOpaque())> (type: \(type), url: "
            + "\(url?.absoluteString ?? "(null)"))"
    }
}

/// The option holding SQLite pragmas (`[String: NSObject]`) to set when a SQLite store opens.
public let NSSQLitePragmasOption = "NSSQLitePragmasOption"
/// The option that vacuums a SQLite store file when it is saved.
public let NSSQLiteManualVacuumOption = "NSSQLiteManualVacuumOption"
/// The option that analyzes a SQLite store's tables when it opens.
public let NSSQLiteAnalyzeOption = "NSSQLiteAnalyzeOption"
