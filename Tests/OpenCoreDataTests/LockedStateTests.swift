import Foundation
import Testing

@testable import OpenCoreDataCore

@Suite struct LockedStateTests {
    @Test func changesFromManyThreadsAreNeitherLostNorTorn() {
        let state = LockedState((count: 0, log: [Int]()))
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for step in 0..<2_000 {
                state.withLock { value in
                    value.count += 1
                    value.log.append(thread * 10_000 + step)
                }
            }
        }
        let (count, log) = state.withLock { ($0.count, $0.log) }
        #expect(count == 16_000)
        #expect(Set(log).count == 16_000)
    }
}
