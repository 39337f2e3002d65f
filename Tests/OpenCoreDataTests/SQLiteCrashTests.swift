import Foundation
import OpenCoreDataShim
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A process killed with SIGKILL in the middle of saving leaves a store that opens with every completed save and
/// no part of an interrupted one.
@Suite struct SQLiteCrashTests {
    static let itemsPerSave = 60

    @Test(arguments: [120, 260, 450])
    func killNineDuringSavesLosesNoCompletedSaveAndKeepsNoPartialOne(_ delay: Int) async throws {
        let directory = SQLiteTestDirectory()
        let path = directory.store().path
        let logPath = directory.url.appendingPathComponent("completed.log").path

        await #expect(processExitsWith: .signal(SIGKILL)) {
            [path = path as String, logPath = logPath as String, delay = delay as Int] in
            // The child: save batches in a loop, logging each save once it has returned, until killed.
            let coordinator = try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: URL(fileURLWithPath: path))
            let context = SQLiteStack.context(coordinator)
            _ = FileManager.default.createFile(atPath: logPath, contents: nil)
            let log = try #require(FileHandle(forWritingAtPath: logPath))
            let killer = Thread {
                usleep(useconds_t(delay * 1000))
                kill(getpid(), SIGKILL)
            }
            killer.start()
            var counter: NSManagedObject?
            for batch in 1... {
                try context.performAndWait {
                    let owner = NSEntityDescription.insertNewObject(forEntityName: "Owner", into: context)
                    owner.setValue("batch \(batch)", forKey: "name")
                    for index in 0..<SQLiteCrashTests.itemsPerSave {
                        let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
                        item.setValue("batch \(batch) item \(index)", forKey: "name")
                        item.setValue(Int64(batch), forKey: "int64")
                        item.setValue(owner, forKey: "owner")
                    }
                    if counter == nil {
                        counter = NSEntityDescription.insertNewObject(forEntityName: "Profile", into: context)
                    }
                    counter?.setValue("\(batch)", forKey: "bio")
                    try context.save()
                    context.reset()
                    counter = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Profile")).first
                }
                log.write(Data("\(batch)\n".utf8))
            }
        }

        let logged =
            (try? String(contentsOfFile: logPath, encoding: .utf8))?.split(separator: "\n")
            .compactMap { Int($0) } ?? []
        let lastLogged = logged.last ?? 0
        let url = URL(fileURLWithPath: path)
        guard FileManager.default.fileExists(atPath: url.path) else {
            // Killed before the store was created: nothing was saved.
            #expect(lastLogged == 0)
            return
        }
        #expect(try RawSQLite.query(url, "PRAGMA integrity_check") == [[.text("ok")]])
        let coordinator = try SQLiteStack.coordinator(SQLiteSampleModel.make(), at: url)
        let context = SQLiteStack.context(coordinator)
        try context.performAndWait {
            let owners = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Owner"))
            let batches = owners.compactMap { ($0.value(forKey: "name") as? String)?.split(separator: " ").last }
                .compactMap { Int($0) }.sorted()
            let saved = batches.last ?? 0
            // Every save that returned is there; at most the one being saved when killed is there as well.
            #expect(batches == Array(1..<(saved + 1)))
            #expect(saved >= lastLogged)
            #expect(saved <= lastLogged + 1)
            // No partial save: each batch has all its items, and the counter updated with it.
            let items = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item"))
            #expect(items.count == saved * Self.itemsPerSave)
            for owner in owners {
                #expect((owner.value(forKey: "items") as? Set<NSManagedObject>)?.count == Self.itemsPerSave)
            }
            let counter = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Profile"))
            #expect(counter.count == (saved > 0 ? 1 : 0))
            #expect(counter.first.map { $0.value(forKey: "bio") as? String } ?? "0" == "\(saved)")
        }
        #expect(lastLogged > 0, "the child should complete a few saves before it is killed")
    }
}
