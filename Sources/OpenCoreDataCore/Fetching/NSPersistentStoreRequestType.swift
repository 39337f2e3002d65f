/// The kinds of persistent store requests (`NSPersistentStoreRequest.requestType`).
public enum NSPersistentStoreRequestType: UInt, Sendable {
    /// A fetch request (`NSFetchRequest`).
    case fetchRequestType = 1
    /// A save request (`NSSaveChangesRequest`).
    case saveRequestType = 2
    /// A batch insert request (`NSBatchInsertRequest`).
    case batchInsertRequestType = 5
    /// A batch update request (`NSBatchUpdateRequest`).
    case batchUpdateRequestType = 6
    /// A batch delete request (`NSBatchDeleteRequest`).
    case batchDeleteRequestType = 7
}
