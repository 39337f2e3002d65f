/// The base of the requests a persistent store coordinator sends to its stores: fetch requests, save requests
/// (`NSSaveChangesRequest`) and batch requests. An `NSIncrementalStore` receives them in `execute(_:with:)` and tells
/// them apart by `requestType`.
///
/// ```swift
/// switch request.requestType {
/// case .fetchRequestType: return try fetch(request as! NSFetchRequest<NSFetchRequestResult>, in: context)
/// case .saveRequestType: return try save(request as! NSSaveChangesRequest)
/// default: throw CocoaError(.persistentStoreUnsupportedRequestType)
/// }
/// ```
open class NSPersistentStoreRequest: NSObject, NSCopying, @unchecked Sendable {
    // @unchecked: a request is configured and then executed, as in Apple's framework, which does not lock it either:
    // changing a request while another thread executes it is a programmer error (and so, as in NSFetchRequest, the
    // stored property skips Swift's run-time exclusivity checks).
    /// The stores the request is sent to; all stores when `nil`.
    @exclusivity(unchecked) open var affectedStores: [NSPersistentStore]?

    public override init() {
        super.init()
    }

    /// What kind of request this is.
    open var requestType: NSPersistentStoreRequestType { .fetchRequestType }

    open func copy(with zone: NSZone? = nil) -> Any {
        let copy = NSPersistentStoreRequest()
        copy.affectedStores = affectedStores
        return copy
    }
}
