import Foundation
import OpenCoreDataShim
import Testing

/// What one change costs a fetched results controller that holds 1,000 and 10,000 objects in 100 sections. Off by
/// default; run with `OPENCOREDATA_FRC_TIMING=1 swift test --filter FetchedResultsControllerTimingTests`. It prints
/// the time per change and fails if ten times the objects make a change cost more than ten times as much.
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["OPENCOREDATA_FRC_TIMING"] != nil))
struct FetchedResultsControllerTimingTests {
    final class Counter: NSObject, NSFetchedResultsControllerDelegate {
        var changes = 0
        func controller(
            _ controller: NSFetchedResultsController<NSFetchRequestResult>, didChange anObject: Any,
            at indexPath: IndexPath?, for type: NSFetchedResultsChangeType, newIndexPath: IndexPath?
        ) {
            changes += 1
        }
    }

    /// Seconds per change (a move to another section, then back) with `count` objects.
    static func secondsPerChange(objects count: Int) throws -> Double {
        let chores = (0..<count).map { ("chore \($0)", "room \($0 % 100)", Int64($0)) }
        let context = try FetchedResultsControllerTests.context(chores)
        let counter = Counter()
        return try context.performAndWait {
            let controller = FetchedResultsControllerTests.controller(context)
            controller.delegate = counter
            try controller.performFetch()
            let object = controller.object(at: IndexPath(indexes: [50, 5]))
            // The first change reads every object's sort keys once; it is not what is measured.
            object.setValue(NSNumber(value: -1), forKey: "rank")
            context.processPendingChanges()
            let rounds = 200
            let clock = ContinuousClock()
            let start = clock.now
            for round in 0..<rounds {
                object.setValue(round % 2 == 0 ? "room 7" : "room 50", forKey: "room")
                context.processPendingChanges()
            }
            let elapsed = clock.now - start
            #expect(counter.changes == rounds + 1)
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            return seconds / Double(rounds)
        }
    }

    @Test func oneChangeAmongTenThousandObjects() throws {
        let small = try Self.secondsPerChange(objects: 1_000)
        let large = try Self.secondsPerChange(objects: 10_000)
        print(
            "one change: \(String(format: "%.3f", small * 1000)) ms with 1,000 objects, "
                + "\(String(format: "%.3f", large * 1000)) ms with 10,000")
        #expect(large < small * 10)
    }
}
