// Spellings that real Core Data code uses and that only exist as Objective-C-era globals or top-level types in
// Apple's Swift API: merge policies by global name, NSManagedObjectContextConcurrencyType, the coordinator's
// store notifications.
import Foundation
import Testing

#if canImport(CoreData)
import CoreData
#else
import OpenCoreData
#endif

@Suite struct ApplePortingSpellingsTests {
    @Test func mergePoliciesHaveTheirGlobalNames() {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        let policies: [(Any, NSMergePolicyType)] = [
            (NSErrorMergePolicy, .errorMergePolicyType),
            (NSMergeByPropertyStoreTrumpMergePolicy, .mergeByPropertyStoreTrumpMergePolicyType),
            (NSMergeByPropertyObjectTrumpMergePolicy, .mergeByPropertyObjectTrumpMergePolicyType),
            (NSOverwriteMergePolicy, .overwriteMergePolicyType),
            (NSRollbackMergePolicy, .rollbackMergePolicyType),
        ]
        for (policy, type) in policies {
            context.mergePolicy = policy
            #expect((context.mergePolicy as? NSMergePolicy)?.mergeType == type)
        }
    }

    @Test func dispatchTimeUnitsAreAvailable() {
        let deadline = DispatchTime.now() + Double(Int64(NSEC_PER_SEC / 2)) / Double(NSEC_PER_SEC)
        #expect(deadline > DispatchTime.now())
        #expect(NSEC_PER_SEC == NSEC_PER_MSEC * 1_000 && USEC_PER_SEC * NSEC_PER_USEC == NSEC_PER_SEC)
    }

    @Test func concurrencyTypesHaveTheirTopLevelName() {
        let types: [NSManagedObjectContextConcurrencyType] = [.privateQueueConcurrencyType, .mainQueueConcurrencyType]
        for type in types {
            #expect(NSManagedObjectContext(concurrencyType: type).concurrencyType == type)
        }
    }

    @Test func coordinatorsPostStoreChanges() throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: LibraryModel.shared)
        let center = NotificationCenter.default
        final class Log: @unchecked Sendable {
            var entries: [(Notification.Name, added: Int, removed: Int)] = []
        }
        let log = Log()
        let names: [Notification.Name] = [
            .NSPersistentStoreCoordinatorStoresWillChange, .NSPersistentStoreCoordinatorStoresDidChange,
            .NSPersistentStoreCoordinatorWillRemoveStore,
        ]
        let observers = names.map { name in
            center.addObserver(forName: name, object: coordinator, queue: nil) { note in
                let added = (note.userInfo?[NSAddedPersistentStoresKey] as? [NSPersistentStore])?.count ?? 0
                let removed = (note.userInfo?[NSRemovedPersistentStoresKey] as? [NSPersistentStore])?.count ?? 0
                log.entries.append((note.name, added, removed))
            }
        }
        defer { observers.forEach(center.removeObserver) }

        let store = try coordinator.addPersistentStore(
            ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
        let changes: [Notification.Name] = [
            .NSPersistentStoreCoordinatorStoresWillChange, .NSPersistentStoreCoordinatorStoresDidChange,
        ]
        #expect(log.entries.map(\.0) == changes)
        #expect(log.entries.allSatisfy { $0.added == 1 && $0.removed == 0 })

        log.entries = []
        try coordinator.remove(store)
        #expect(log.entries.map(\.0).contains(.NSPersistentStoreCoordinatorWillRemoveStore))
        #expect(log.entries.last?.0 == .NSPersistentStoreCoordinatorStoresDidChange)
        #expect(log.entries.last?.removed == 1)
    }

    #if !canImport(CoreData)
    /// Ported classes lose their `@objc(Author)` runtime names (there is no Objective-C runtime), which code uses to
    /// find an entity's class: `NSClassFromString(entity.managedObjectClassName)`. The unqualified name still finds
    /// the class here; on Apple platforms it is `@objc(Author)` that makes it so.
    @Test func classesAreFoundByTheirUnqualifiedNames() throws {
        #expect(NSClassFromString("Author") == Author.self)
        let entity = try #require(LibraryModel.shared.entitiesByName["Book"])
        #expect(NSClassFromString(try #require(entity.managedObjectClassName)) == Book.self)
        #expect(NSClassFromString("NSNumber") == NSNumber.self)
        #expect(NSClassFromString("NoSuchClassAnywhere") == nil)
    }
    #endif
}
