import Foundation
import OpenCoreDataShim
import Testing

/// `NSAsynchronousFetchRequest`: the result comes back at once and is filled later on the context's queue, with
/// progress that counts the objects, and cancellation.
@Suite struct AsynchronousFetchRequestTests {
    final class Box<Value>: @unchecked Sendable {
        var value: Value
        init(_ value: Value) { self.value = value }
    }

    static func request(
        _ completion: @escaping (NSAsynchronousFetchResult<NSManagedObject>) -> Void
    ) -> NSAsynchronousFetchRequest<NSManagedObject> {
        let fetch = NSFetchRequest<NSManagedObject>(entityName: "BatchWorker")
        fetch.sortDescriptors = [NSSortDescriptor(key: "salary", ascending: true)]
        return NSAsynchronousFetchRequest(fetchRequest: fetch, completionBlock: completion)
    }

    @Test(arguments: BatchStoreKind.all)
    func theResultIsFilledAfterTheStartingBlock(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind)
        let context = stack.context()
        let completed = Box<[String]?>(nil)
        let overall = Progress(totalUnitCount: 1)
        let result = try context.performAndWait {
            overall.becomeCurrent(withPendingUnitCount: 1)
            defer { overall.resignCurrent() }
            let request = Self.request { result in
                completed.value = result.finalResult?.compactMap { $0.value(forKey: "name") as? String }
            }
            let result = try #require(try context.execute(request) as? NSAsynchronousFetchResult<NSManagedObject>)
            #expect(result.finalResult == nil)
            #expect(result.managedObjectContext === context)
            #expect(result.fetchRequest === request)
            return result
        }
        context.performAndWait {}
        #expect(completed.value == ["ann", "bob", "cy", "dee", "eve", "max"])
        #expect(result.finalResult?.count == 6)
        #expect(result.operationError == nil)
        #expect(result.progress?.totalUnitCount == 6)
        #expect(result.progress?.completedUnitCount == 6)
        #expect(overall.fractionCompleted == 1)
        context.performAndWait {
            #expect(result.finalResult?.allSatisfy { $0.managedObjectContext === context } == true)
        }
    }

    @Test func manyObjectsComeInBatchesInOrder() throws {
        let stack = try BatchStack(BatchStoreKind.sqlite, fill: false)
        let context = stack.context()
        let names = Box<[String]>([])
        try context.performAndWait {
            let insert = NSBatchInsertRequest(
                entityName: "BatchProject", objects: (0..<600).map { ["title": String(format: "p%04d", 600 - $0)] })
            _ = try context.execute(insert)
            let fetch = NSFetchRequest<NSManagedObject>(entityName: "BatchProject")
            fetch.sortDescriptors = [NSSortDescriptor(key: "title", ascending: true)]
            let request = NSAsynchronousFetchRequest(fetchRequest: fetch) { result in
                names.value = result.finalResult?.compactMap { $0.value(forKey: "title") as? String } ?? []
            }
            _ = try context.execute(request)
        }
        context.performAndWait {}
        #expect(names.value.count == 600)
        #expect(names.value == names.value.sorted())
    }

    @Test(arguments: BatchStoreKind.all)
    func aCancelledFetchCompletesWithTheCancellationError(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind)
        let context = stack.context()
        let error = Box<Error?>(nil)
        let calls = Box(0)
        let result = try context.performAndWait {
            let request = Self.request { result in
                calls.value += 1
                error.value = result.operationError
            }
            let result = try context.execute(request) as? NSAsynchronousFetchResult<NSManagedObject>
            result?.cancel()
            return result
        }
        context.performAndWait {}
        #expect(calls.value == 1)
        #expect((error.value as? CocoaError)?.code == .userCancelled)
        #expect(result?.finalResult == nil)
    }

    @Test(arguments: BatchStoreKind.all)
    func otherResultTypesAreFetchedAtOnce(kind: BatchStoreKind) throws {
        let stack = try BatchStack(kind)
        let context = stack.context()
        let count = Box<Int?>(nil)
        try context.performAndWait {
            let fetch = NSFetchRequest<NSNumber>(entityName: "BatchWorker")
            fetch.resultType = .countResultType
            let request = NSAsynchronousFetchRequest(fetchRequest: fetch) { result in
                count.value = result.finalResult?.first?.intValue
            }
            _ = try context.execute(request)
        }
        context.performAndWait {}
        #expect(count.value == 6)
    }
}
