/// The key of the stores a coordinator added, in its stores-did-change notifications.
public let NSAddedPersistentStoresKey = "added"
/// The key of the stores a coordinator removed, in its stores-did-change notifications.
public let NSRemovedPersistentStoresKey = "removed"
/// The key of the stores whose identifier changed, in its stores-did-change notifications.
public let NSUUIDChangedPersistentStoresKey = "changedUUID"

/// The key of the store's URL in `.NSPersistentStoreRemoteChange` notifications.
public let NSPersistentStoreURLKey = "storeURL"

extension Notification.Name {
    /// Posted, on a private queue, after a commit to a store added with
    /// `NSPersistentStoreRemoteChangeNotificationPostOptionKey` — by this coordinator, another one or another process.
    /// The object is the coordinator; `userInfo` holds the store's URL (`NSPersistentStoreURLKey`), its identifier
    /// (`NSStoreUUIDKey`) and, when it records persistent history, the token of its last transaction
    /// (`NSPersistentHistoryTokenKey`).
    ///
    /// ```swift
    /// NotificationCenter.default.addObserver(forName: .NSPersistentStoreRemoteChange, object: coordinator,
    ///                                        queue: nil) { note in
    ///     let token = note.userInfo?[NSPersistentHistoryTokenKey] as? NSPersistentHistoryToken
    ///     context.perform { /* fetch the history after the last token seen, merge it */ }
    /// }
    /// ```
    public static let NSPersistentStoreRemoteChange = Notification.Name("NSPersistentStoreRemoteChangeNotification")
    /// Posted before a coordinator adds or removes stores; `userInfo` lists them under `NSAddedPersistentStoresKey`
    /// and `NSRemovedPersistentStoresKey`. The object is the coordinator.
    public static let NSPersistentStoreCoordinatorStoresWillChange = Notification.Name(
        "NSPersistentStoreCoordinatorStoresWillChangeNotification")
    /// Posted after a coordinator added or removed stores; `userInfo` as for the will-change notification.
    public static let NSPersistentStoreCoordinatorStoresDidChange = Notification.Name(
        "NSPersistentStoreCoordinatorStoresDidChangeNotification")
    /// Posted before a coordinator removes a store; there is no `userInfo`. The object is the coordinator.
    public static let NSPersistentStoreCoordinatorWillRemoveStore = Notification.Name(
        "NSPersistentStoreCoordinatorWillRemoveStoreNotification")
}

extension NSPersistentStoreCoordinator {
    /// Posted before the coordinator adds or removes stores.
    public static let storesWillChangeNotification = Notification.Name.NSPersistentStoreCoordinatorStoresWillChange
    /// Posted after the coordinator added or removed stores.
    public static let storesDidChangeNotification = Notification.Name.NSPersistentStoreCoordinatorStoresDidChange
    /// Posted before the coordinator removes a store.
    public static let willRemoveStoreNotification = Notification.Name.NSPersistentStoreCoordinatorWillRemoveStore

    /// Posts `name` about the coordinator's stores. Called without the coordinator's lock held, so that observers
    /// may use the coordinator.
    func _postStoresChange(
        _ name: Notification.Name, added: [NSPersistentStore] = [], removed: [NSPersistentStore] = []
    ) {
        var userInfo: [AnyHashable: Any] = [:]
        if !added.isEmpty { userInfo[NSAddedPersistentStoresKey] = added }
        if !removed.isEmpty { userInfo[NSRemovedPersistentStoresKey] = removed }
        NotificationCenter.default.post(name: name, object: self, userInfo: userInfo)
    }
}
