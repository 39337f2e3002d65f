import Foundation
import OpenCoreData
import StoreConformance
import Testing

/// `NSPersistentStoreRemoteChangeNotificationPostOptionKey`: a store posts `.NSPersistentStoreRemoteChange` after
/// every commit to its file — its own coordinator's, another coordinator's, another process's.
@Suite struct RemoteChangeNotificationTests {
    static var options: [AnyHashable: Any] {
        [NSPersistentHistoryTrackingKey: true, NSPersistentStoreRemoteChangeNotificationPostOptionKey: true]
    }

    /// The notifications posted for `coordinator`, in order.
    final class Received: @unchecked Sendable {
        private let lock = NSCondition()
        private var notes: [Notification] = []
        private var observer: NSObjectProtocol?

        init(_ coordinator: NSPersistentStoreCoordinator) {
            observer = NotificationCenter.default.addObserver(
                forName: .NSPersistentStoreRemoteChange, object: coordinator, queue: nil
            ) { [weak self] note in
                guard let self else { return }
                self.lock.lock()
                self.notes.append(note)
                self.lock.broadcast()
                self.lock.unlock()
            }
        }

        deinit {
            if let observer { NotificationCenter.default.removeObserver(observer) }
        }

        /// Waits up to `seconds` for a notification whose `userInfo` satisfies `condition`.
        func wait(seconds: Double = 10, until condition: ([AnyHashable: Any]) -> Bool = { _ in true })
            -> Notification?
        {
            let deadline = Date().addingTimeInterval(seconds)
            lock.lock()
            defer { lock.unlock() }
            while true {
                if let note = notes.first(where: { condition($0.userInfo ?? [:]) }) { return note }
                guard lock.wait(until: deadline) else { return nil }
            }
        }

        var count: Int {
            lock.lock()
            defer { lock.unlock() }
            return notes.count
        }
    }

    static func insertItem(_ name: String, into coordinator: NSPersistentStoreCoordinator) throws {
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            NSEntityDescription.insertNewObject(forEntityName: "Item", into: context).setValue(name, forKey: "name")
            try context.save()
        }
    }

    @Test func anotherCoordinatorsCommitIsPostedWithTheStoreAndItsHistoryToken() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let model = HistoryStack.model
        let watching = try SQLiteStack.coordinator(model, at: url, options: Self.options)
        let received = Received(watching)
        let before = try #require(watching.currentPersistentHistoryToken(fromStores: nil))

        let other = try SQLiteStack.coordinator(model, at: url, options: [NSPersistentHistoryTrackingKey: true])
        try Self.insertItem("remote", into: other)
        let storeID = try #require(watching.persistentStores.first?.identifier)
        let note = try #require(
            received.wait { $0[NSPersistentHistoryTokenKey] as? NSPersistentHistoryToken != before })
        #expect(note.object as? NSPersistentStoreCoordinator === watching)
        #expect((note.userInfo?[NSPersistentStoreURLKey] as? URL)?.standardizedFileURL == url.standardizedFileURL)
        #expect(note.userInfo?[NSStoreUUIDKey] as? String == storeID)
        // The token marks the other coordinator's transaction: the history after the old one is that transaction.
        let token = try #require(note.userInfo?[NSPersistentHistoryTokenKey] as? NSPersistentHistoryToken)
        let context = SQLiteStack.context(watching)
        let transactions = try context.performAndWait {
            let result = try context.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: before))
            return (result as? NSPersistentHistoryResult)?.result as? [NSPersistentHistoryTransaction] ?? []
        }
        #expect(transactions.map(\.token) == [token])
    }

    @Test func theStoresOwnCommitsArePostedToo() throws {
        let directory = SQLiteTestDirectory()
        let coordinator = try SQLiteStack.coordinator(
            HistoryStack.model, at: directory.store(), options: Self.options)
        let received = Received(coordinator)
        try Self.insertItem("local", into: coordinator)
        #expect(received.wait() != nil)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3")))
    func anotherProcesssCommitIsPosted() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let coordinator = try SQLiteStack.coordinator(
            HistoryStack.model, at: url,
            options: [NSPersistentStoreRemoteChangeNotificationPostOptionKey: true])
        let received = Received(coordinator)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [url.path, "UPDATE Z_METADATA SET Z_VERSION = Z_VERSION"]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(received.wait() != nil)
    }

    @Test func withoutTheOptionNothingIsPosted() throws {
        let directory = SQLiteTestDirectory()
        let coordinator = try SQLiteStack.coordinator(HistoryStack.model, at: directory.store())
        let received = Received(coordinator)
        try Self.insertItem("quiet", into: coordinator)
        #expect(received.wait(seconds: 0.3) == nil)
    }

    @Test func removingTheStoreStopsTheNotifications() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let model = HistoryStack.model
        let watching = try SQLiteStack.coordinator(model, at: url, options: Self.options)
        let received = Received(watching)
        try SQLiteStack.close(watching)
        try Self.insertItem(
            "after", into: try SQLiteStack.coordinator(model, at: url, options: [NSPersistentHistoryTrackingKey: true]))
        #expect(received.wait(seconds: 0.3) == nil)
    }
}
