import Foundation
import OpenCoreData
import Testing

/// One case of the store conformance suite: a body of checks that runs against a store fixture and records its
/// failures with Swift Testing's `#expect`.
///
/// Every store must pass every case. A case that needs what a kind of store cannot have by its nature (a second
/// coordinator seeing the first one's data, for the in-memory store) checks that part only where the fixture says
/// the store has it (`StoreFixture.persists`, `sharesLiveChanges`).
public struct StoreConformanceCase: Sendable, CustomTestStringConvertible {
    /// What the case checks, as tests are reported.
    public let name: String
    let body: @Sendable (StoreFixture) throws -> Void

    public init(_ name: String, _ body: @escaping @Sendable (StoreFixture) throws -> Void) {
        self.name = name
        self.body = body
    }

    public var testDescription: String { name }

    /// Runs the case against `fixture`.
    public func run(_ fixture: StoreFixture) throws {
        try body(fixture)
    }

    /// Every case.
    public static var all: [StoreConformanceCase] {
        crud + attributes + relationships + deleteRules + inheritance + predicates + fetchShapes + dictionaryResults
            + batchRequests + faulting
            + optimisticLocking + metadata + multipleStores + concurrency
    }
}
