/// The key of the inserted objects in context notifications.
public let NSInsertedObjectsKey = "inserted"
/// The key of the updated objects in context notifications.
public let NSUpdatedObjectsKey = "updated"
/// The key of the deleted objects in context notifications.
public let NSDeletedObjectsKey = "deleted"
/// The key of the refreshed objects in context notifications.
public let NSRefreshedObjectsKey = "refreshed"
/// The key of the invalidated objects in context notifications.
public let NSInvalidatedObjectsKey = "invalidated"
/// The key that says all objects were invalidated (after `reset()`).
public let NSInvalidatedAllObjectsKey = "invalidatedAll"

extension Notification.Name {
    /// Posted after a context saved; `userInfo` holds the inserted, updated and deleted objects.
    public static let NSManagedObjectContextDidSave = Notification.Name("NSManagingContextDidSaveChangesNotification")
    /// Posted when a context is about to save.
    public static let NSManagedObjectContextWillSave = Notification.Name("NSManagingContextWillSaveChangesNotification")
    /// Posted at the end of an event in which objects of a context changed.
    public static let NSManagedObjectContextObjectsDidChange = Notification.Name(
        "NSObjectsChangedInManagingContextNotification")
}

extension NSManagedObjectContext {
    /// Posted after the context saved; `userInfo` holds the saved objects.
    public static let didSaveObjectsNotification = Notification.Name.NSManagedObjectContextDidSave
    /// Posted when the context is about to save.
    public static let willSaveObjectsNotification = Notification.Name.NSManagedObjectContextWillSave
    /// Posted at the end of an event in which the context's objects changed.
    public static let didChangeObjectsNotification = Notification.Name.NSManagedObjectContextObjectsDidChange
    /// Posted after the context saved; `userInfo` holds the IDs of the saved objects.
    public static let didSaveObjectIDsNotification = Notification.Name(
        "NSManagedObjectContextDidSaveObjectIDsNotification")
    /// Posted after the context merged changes; `userInfo` holds the IDs of the merged objects.
    public static let didMergeChangesObjectIDsNotification = Notification.Name(
        "NSManagedObjectContextDidMergeChangesObjectIDsNotification")

    /// The keys of context notifications' `userInfo`.
    public enum NotificationKey: String, Sendable {
        case sourceContext = "managedObjectContext"
        case queryGeneration = "managedObjectContextQueryGeneration"
        case invalidatedAllObjects = "invalidatedAll"
        case insertedObjects = "inserted"
        case updatedObjects = "updated"
        case deletedObjects = "deleted"
        case refreshedObjects = "refreshed"
        case invalidatedObjects = "invalidated"
        case insertedObjectIDs = "inserted_objectIDs"
        case updatedObjectIDs = "updated_objectIDs"
        case deletedObjectIDs = "deleted_objectIDs"
        case refreshedObjectIDs = "refreshed_objectIDs"
        case invalidatedObjectIDs = "invalidated_objectIDs"
    }
}
