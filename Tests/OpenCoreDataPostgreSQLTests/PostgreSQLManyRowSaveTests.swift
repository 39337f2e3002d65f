import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL
import StoreConformance
import Testing

/// Saves of many rows at once (a statement per table and shape of change, not per row) still check every row's
/// version: the rows another process changed are the conflicts, and only they.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, Comment(rawValue: PostgreSQLTestServer.skipMessage)))
struct PostgreSQLManyRowSaveTests {
    /// Two coordinators (two processes) on one new store holding `count` people named `person <n>`, aged `n`.
    func stores(count: Int) throws -> (NSPersistentStoreCoordinator, NSPersistentStoreCoordinator, URL) {
        PostgreSQLStore.register()
        let url = try #require(PostgreSQLTestServer.newURL())
        let first = NSPersistentStoreCoordinator(managedObjectModel: ConformanceModel.shared)
        try first.addPersistentStore(ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: nil)
        let second = NSPersistentStoreCoordinator(managedObjectModel: ConformanceModel.shared)
        try second.addPersistentStore(ofType: PostgreSQLStoreType, configurationName: nil, at: url, options: nil)
        let context = NSManagedObjectContext.conformance(first)
        try context.run {
            for index in 0..<count { context.make("Person", ["name": "person \(index)", "age": index]) }
            try context.save()
        }
        return (first, second, url)
    }

    @Test func updatesOfManyRowsConflictOnlyWhereAnotherProcessWrote() throws {
        let (first, second, url) = try stores(count: 12_000)
        defer { PostgreSQLTestServer.drop(url) }
        let mine = NSManagedObjectContext.conformance(first)
        try mine.run {
            let people = try mine.objects("Person")
            #expect(people.count == 12_000)
            for person in people {
                // Two shapes of change: some rows change one column, the others two.
                let age = (person.value(forKey: "age") as? NSNumber)?.intValue ?? 0
                person.setValue(age + 1_000, forKey: "age")
                if age.isMultiple(of: 2) { person.setValue("even", forKey: "nickname") }
            }
        }
        let theirs = NSManagedObjectContext.conformance(second)
        try theirs.run {
            for name in ["person 7", "person 10"] {
                try ConformanceData.one(theirs, "Person", "name", name).setValue("theirs", forKey: "nickname")
            }
            try theirs.save()
        }
        try mine.run {
            do {
                try mine.save()
                Issue.record("the save should have found conflicts")
            } catch let error as NSError {
                #expect(error.code == NSManagedObjectMergeError)
                let conflicts = error.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSMergeConflict] ?? []
                let names = Set(conflicts.map { $0.sourceObject.value(forKey: "name") as? String })
                #expect(!names.isEmpty && names.isSubset(of: ["person 7", "person 10"]))
            }
            // Nothing was written.
            let check = NSManagedObjectContext.conformance(second)
            try check.run {
                let written = try check.objects("Person", "nickname == 'even'")
                #expect(written.isEmpty)
            }
            // Both rows the other process changed are conflicts: the store's nickname wins in each, the rest is ours.
            mine.mergePolicy = NSMergeByPropertyStoreTrumpMergePolicy
            try mine.save()
        }
        let check = NSManagedObjectContext.conformance(second)
        try check.run {
            func person(_ index: Int) throws -> (age: Int?, nickname: String?) {
                let person = try ConformanceData.one(check, "Person", "name", "person \(index)")
                return (
                    (person.value(forKey: "age") as? NSNumber)?.intValue, person.value(forKey: "nickname") as? String
                )
            }
            #expect(try person(7) == (1_007, "theirs"))
            #expect(try person(10) == (1_010, "theirs"))
            #expect(try person(12) == (1_012, "even"))
            #expect(try person(11_999) == (12_999, nil))
            let count = try check.count(for: NSFetchRequest<NSManagedObject>(entityName: "Person"))
            #expect(count == 12_000)
        }
    }

    @Test func deletionsOfManyRowsConflictWhereAnotherProcessWrote() throws {
        let (first, second, url) = try stores(count: 50)
        defer { PostgreSQLTestServer.drop(url) }
        let mine = NSManagedObjectContext.conformance(first)
        try mine.run {
            for person in try mine.objects("Person", "age < 20") { mine.delete(person) }
        }
        let theirs = NSManagedObjectContext.conformance(second)
        try theirs.run {
            try ConformanceData.one(theirs, "Person", "name", "person 4").setValue(99, forKey: "age")
            try theirs.save()
        }
        try mine.run {
            #expect(throws: (any Error).self) { try mine.save() }
            mine.mergePolicy = NSOverwriteMergePolicy
            try mine.save()
        }
        let check = NSManagedObjectContext.conformance(second)
        try check.run {
            let count = try check.count(for: NSFetchRequest<NSManagedObject>(entityName: "Person"))
            #expect(count == 30)
        }
    }

    @Test func rowsWithLargeValuesAreSavedWhole() throws {
        let (first, second, url) = try stores(count: 0)
        defer { PostgreSQLTestServer.drop(url) }
        // A megabyte and a half each, three as hexadecimal text: more than one statement's worth, so the rows go out
        // in two.
        let blobs = (0..<3).map { Data(repeating: UInt8(10 + $0), count: 1_500_000) + Data([UInt8($0)]) }
        let context = NSManagedObjectContext.conformance(first)
        try context.run {
            for (index, blob) in blobs.enumerated() { context.make("Item", ["int16": index, "data": blob]) }
            try context.save()
            for item in try context.objects("Item") {
                item.setValue(Data(((item.value(forKey: "data") as? Data) ?? Data()).reversed()), forKey: "data")
            }
            try context.save()
        }
        let check = NSManagedObjectContext.conformance(second)
        try check.run {
            let items = try check.objects("Item", sortedBy: ["int16"])
            #expect(items.map { $0.value(forKey: "data") as? Data } == blobs.map { Data($0.reversed()) })
        }
    }
}
