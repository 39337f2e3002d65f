// Coordinators of one model made on several threads at once, as test suites running in parallel do: the first
// freezes the model, the others see it frozen. (Run under ThreadSanitizer by .ci/run.)
import Foundation
import Testing

#if canImport(CoreData)
import CoreData
#else
import OpenCoreData
#endif

@Suite struct ModelFreezeConcurrencyTests {
    @Test func coordinatorsOfOneModelAreMadeOnManyThreadsAtOnce() throws {
        let model = LibraryModel.make()
        final class Made: @unchecked Sendable {
            let lock = NSLock()
            var coordinators: [NSPersistentStoreCoordinator] = []
        }
        let made = Made()
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            made.lock.withLock { made.coordinators.append(coordinator) }
        }
        #expect(made.coordinators.count == 8)
        #expect(made.coordinators.allSatisfy { $0.managedObjectModel.entitiesByName.count == 3 })
        let fresh = LibraryModel.make()
        #expect(model.entitiesByName["Author"]?.versionHash == fresh.entitiesByName["Author"]?.versionHash)
    }
}
