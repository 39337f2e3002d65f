import Foundation
import OpenCoreDataShim
import Testing

/// Two coordinators (as two processes would) on one SQLite file: a save over changes saved by the other fails with
/// a merge error and writes nothing; no update is lost.
@Suite struct SQLiteOptimisticLockingTests {
    /// Two contexts on two coordinators of one store, each holding the object named "Ada".
    struct Pair {
        let url: URL
        let first: NSManagedObjectContext
        let second: NSManagedObjectContext
        let coordinators: [NSPersistentStoreCoordinator]
    }

    func pair(_ directory: SQLiteTestDirectory) throws -> Pair {
        let url = directory.store()
        let model = SQLiteSampleModel.make()
        let one = try SQLiteStack.coordinator(model, at: url)
        let two = try SQLiteStack.coordinator(model, at: url)
        let first = SQLiteStack.context(one)
        try first.performAndWait {
            for name in ["Ada", "Bob"] {
                let owner = NSEntityDescription.insertNewObject(forEntityName: "Owner", into: first)
                owner.setValue(name, forKey: "name")
            }
            try first.save()
        }
        return Pair(url: url, first: first, second: SQLiteStack.context(two), coordinators: [one, two])
    }

    func owner(_ name: String, in context: NSManagedObjectContext) throws -> NSManagedObject {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Owner")
        request.predicate = NSPredicate(format: "name == %@", name)
        return try #require(try context.fetch(request).first)
    }

    /// The owners named `names` in `context`, with their values loaded (so that the context holds their versions).
    func loadedOwners(_ names: String..., in context: NSManagedObjectContext) throws -> [NSManagedObject] {
        try context.performAndWait {
            try names.map { name in
                let owner = try owner(name, in: context)
                _ = owner.value(forKey: "name")
                return owner
            }
        }
    }

    /// Renames Ada in `context` and saves.
    func renameAda(to name: String, in context: NSManagedObjectContext) throws {
        try context.performAndWait {
            try owner("Ada", in: context).setValue(name, forKey: "name")
            try context.save()
        }
    }

    /// Makes `changes` in `context` and saves, returning the error the save failed with (`nil` if it succeeded).
    func saveError(of context: NSManagedObjectContext, after changes: () -> Void) -> NSError? {
        context.performAndWait {
            changes()
            do {
                try context.save()
                return nil
            } catch {
                return error as NSError
            }
        }
    }

    @Test func aSaveOverAnotherCoordinatorsSaveFailsWithAMergeErrorAndWritesNothing() throws {
        let directory = SQLiteTestDirectory()
        let stores = try pair(directory)
        let (first, second) = (stores.first, stores.second)
        let theirs = try loadedOwners("Ada", "Bob", in: second)
        try renameAda(to: "Ada (first)", in: first)
        let error = saveError(of: second) {
            theirs[0].setValue("Ada (second)", forKey: "name")
            theirs[1].setValue("Bob (second)", forKey: "name")
        }
        let failure = try #require(error)
        #expect(failure.domain == NSCocoaErrorDomain)
        #expect(failure.code == NSManagedObjectMergeError)
        let conflicts = try #require(failure.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSMergeConflict])
        #expect(conflicts.count == 1)
        let conflict = try #require(conflicts.first)
        second.performAndWait {
            #expect(conflict.sourceObject === theirs[0])
        }
        #expect(conflict.oldVersionNumber == 1)
        #expect(conflict.newVersionNumber == 2)
        #expect(conflict.persistedSnapshot?["name"] as? String == "Ada (first)")

        // Nothing of the failed save was written: not even Bob, who had no conflict.
        let rows = try RawSQLite.query(stores.url, "SELECT ZNAME, Z_OPT FROM ZOWNER ORDER BY ZNAME")
        #expect(rows == [[.text("Ada (first)"), .integer(2)], [.text("Bob"), .integer(1)]])

        // After a refresh the second context sees the first's change and saves over it.
        try second.performAndWait {
            second.refresh(theirs[0], mergeChanges: false)
            #expect(theirs[0].value(forKey: "name") as? String == "Ada (first)")
            theirs[0].setValue("Ada (second)", forKey: "name")
            try second.save()
        }
        let after = try RawSQLite.query(stores.url, "SELECT ZNAME, Z_OPT FROM ZOWNER ORDER BY ZNAME")
        #expect(after == [[.text("Ada (second)"), .integer(3)], [.text("Bob (second)"), .integer(2)]])
    }

    /// The error policy reports every conflict of the save in one error, not the first it meets.
    @Test func theErrorPolicyReportsEveryConflictOfTheSave() throws {
        let directory = SQLiteTestDirectory()
        let stores = try pair(directory)
        let theirs = try loadedOwners("Ada", "Bob", in: stores.second)
        try stores.first.performAndWait {
            try owner("Ada", in: stores.first).setValue("Ada (first)", forKey: "name")
            try owner("Bob", in: stores.first).setValue("Bob (first)", forKey: "name")
            try stores.first.save()
        }
        let error = saveError(of: stores.second) {
            theirs[0].setValue("Ada (second)", forKey: "name")
            theirs[1].setValue("Bob (second)", forKey: "name")
        }
        let failure = try #require(error)
        #expect(failure.code == NSManagedObjectMergeError)
        let conflicts = try #require(failure.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSMergeConflict])
        let names = stores.second.performAndWait {
            Set(conflicts.compactMap { $0.persistedSnapshot?["name"] as? String })
        }
        #expect(names == ["Ada (first)", "Bob (first)"])
    }

    @Test func updatingAnObjectDeletedByAnotherCoordinatorConflicts() throws {
        let directory = SQLiteTestDirectory()
        let stores = try pair(directory)
        let (first, second) = (stores.first, stores.second)
        let theirs = try loadedOwners("Ada", in: second)[0]
        try first.performAndWait {
            first.delete(try owner("Ada", in: first))
            try first.save()
        }
        let error = saveError(of: second) {
            theirs.setValue("renamed", forKey: "name")
        }
        #expect(error?.code == NSManagedObjectMergeError)
        let conflicts = error?.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSMergeConflict]
        #expect(conflicts?.first?.newVersionNumber == 0)
        #expect(conflicts?.first?.persistedSnapshot == nil)
        #expect(try RawSQLite.query(stores.url, "SELECT ZNAME FROM ZOWNER") == [[.text("Bob")]])
    }

    @Test func aConflictFoundAfterDeletionsAndInsertionsLeavesTheStoreAsItWas() throws {
        let directory = SQLiteTestDirectory()
        let stores = try pair(directory)
        let (first, second) = (stores.first, stores.second)
        let theirs = try loadedOwners("Ada", "Bob", in: second)
        try renameAda(to: "Ada (first)", in: first)
        let error = saveError(of: second) {
            // Deleting Bob and inserting Cy are fine on their own; changing Ada conflicts.
            second.delete(theirs[1])
            let cy = NSEntityDescription.insertNewObject(forEntityName: "Owner", into: second)
            cy.setValue("Cy", forKey: "name")
            theirs[0].setValue("Ada (second)", forKey: "name")
        }
        #expect(error?.code == NSManagedObjectMergeError)
        let conflicts = error?.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSMergeConflict]
        #expect(conflicts?.count == 1)
        #expect(conflicts?.first?.newVersionNumber == 2)
        let rows = try RawSQLite.query(stores.url, "SELECT ZNAME, Z_OPT FROM ZOWNER ORDER BY ZNAME")
        #expect(rows == [[.text("Ada (first)"), .integer(2)], [.text("Bob"), .integer(1)]])
    }

    @Test func deletingAnObjectChangedByAnotherCoordinatorConflicts() throws {
        let directory = SQLiteTestDirectory()
        let stores = try pair(directory)
        let (first, second) = (stores.first, stores.second)
        let theirs = try loadedOwners("Ada", in: second)[0]
        try renameAda(to: "Ada (first)", in: first)
        let error = saveError(of: second) {
            second.delete(theirs)
        }
        #expect(error?.code == NSManagedObjectMergeError)
        let conflicts = error?.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSMergeConflict]
        #expect(conflicts?.first?.oldVersionNumber == 1)
        #expect(conflicts?.first?.newVersionNumber == 2)
        let rows = try RawSQLite.query(stores.url, "SELECT ZNAME FROM ZOWNER ORDER BY ZNAME")
        #expect(rows == [[.text("Ada (first)")], [.text("Bob")]])
    }

    /// Adds 198 owners to the pair's two (through the first context), and returns all 200 as the second context
    /// holds them, with their values loaded.
    func twoHundredOwners(_ stores: Pair) throws -> [NSManagedObject] {
        let (first, second) = (stores.first, stores.second)
        try first.performAndWait {
            for number in 0..<198 {
                let owner = NSEntityDescription.insertNewObject(forEntityName: "Owner", into: first)
                owner.setValue("Owner \(number)", forKey: "name")
            }
            try first.save()
        }
        return try second.performAndWait {
            let owners = try second.fetch(NSFetchRequest<NSManagedObject>(entityName: "Owner"))
            for owner in owners { _ = owner.value(forKey: "name") }
            return owners
        }
    }

    /// Deletes every one of `owners` in `context` and saves: the save must fail with a merge error naming one conflict,
    /// which is returned.
    func theOneConflictOfDeleting(_ owners: [NSManagedObject], in context: NSManagedObjectContext) -> NSMergeConflict? {
        let error = saveError(of: context) {
            for owner in owners { context.delete(owner) }
        }
        #expect(error?.code == NSManagedObjectMergeError)
        let conflicts = error?.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSMergeConflict]
        #expect(conflicts?.count == 1)
        return conflicts?.first
    }

    @Test func aConflictAmongManyDeletionsNamesTheOneChangedRowAndDeletesNothing() throws {
        let directory = SQLiteTestDirectory()
        let stores = try pair(directory)
        let (first, second) = (stores.first, stores.second)
        let theirs = try twoHundredOwners(stores)
        #expect(theirs.count == 200)
        try first.performAndWait {
            try owner("Owner 150", in: first).setValue("Owner 150 (first)", forKey: "name")
            try first.save()
        }
        let conflict = theOneConflictOfDeleting(theirs, in: second)
        let changed = try first.performAndWait { try owner("Owner 150 (first)", in: first).objectID }
        #expect(conflict?.sourceObject.objectID == changed)
        #expect(conflict?.newVersionNumber == 2)
        #expect(try RawSQLite.query(stores.url, "SELECT COUNT(*) FROM ZOWNER") == [[.integer(200)]])

        // The in-memory state wins: every row goes, the changed one too.
        try second.performAndWait {
            second.mergePolicy = NSMergePolicy.overwrite
            try second.save()
        }
        #expect(try RawSQLite.query(stores.url, "SELECT COUNT(*) FROM ZOWNER") == [[.integer(0)]])
    }

    @Test func manyDeletionsAmongOneDeletedUnderneathConflictAndDeleteNothing() throws {
        let directory = SQLiteTestDirectory()
        let stores = try pair(directory)
        let (first, second) = (stores.first, stores.second)
        let theirs = try twoHundredOwners(stores)
        try first.performAndWait {
            first.delete(try owner("Owner 100", in: first))
            try first.save()
        }
        #expect(theOneConflictOfDeleting(theirs, in: second)?.newVersionNumber == 0)
        #expect(try RawSQLite.query(stores.url, "SELECT COUNT(*) FROM ZOWNER") == [[.integer(199)]])
    }

    @Test func deletingEveryOtherRunOfRowsLeavesExactlyTheRest() throws {
        let directory = SQLiteTestDirectory()
        let stores = try pair(directory)
        let second = stores.second
        let theirs = try twoHundredOwners(stores)
        // Runs of 1, 2, 3, … owners deleted, with runs of as many kept between them, and scattered single ones.
        var kept: Set<String> = []
        try second.performAndWait {
            var position = 0
            var length = 1
            while position < theirs.count {
                for owner in theirs[position..<min(position + length, theirs.count)] { second.delete(owner) }
                for owner in theirs[min(position + length, theirs.count)..<min(position + 2 * length, theirs.count)] {
                    kept.insert(try #require(owner.value(forKey: "name") as? String))
                }
                position += 2 * length
                length += 1
            }
            try second.save()
        }
        let rows = try RawSQLite.query(stores.url, "SELECT ZNAME FROM ZOWNER")
        let names = rows.compactMap { row -> String? in
            if case .text(let name) = row.first { return name }
            return nil
        }
        #expect(Set(names) == kept)
        #expect(rows.count == kept.count)
    }

    @Test func theOverwritePolicyDeletesManyRowsThatAllChangedUnderneath() throws {
        let directory = SQLiteTestDirectory()
        let stores = try pair(directory)
        let (first, second) = (stores.first, stores.second)
        let theirs = try twoHundredOwners(stores)
        try first.performAndWait {
            for owner in try first.fetch(NSFetchRequest<NSManagedObject>(entityName: "Owner")) {
                owner.setValue("renamed", forKey: "name")
            }
            try first.save()
        }
        try second.performAndWait {
            second.mergePolicy = NSMergePolicy.overwrite
            for owner in theirs { second.delete(owner) }
            try second.save()
        }
        #expect(try RawSQLite.query(stores.url, "SELECT COUNT(*) FROM ZOWNER") == [[.integer(0)]])
    }

    @Test func theOverwritePolicyForcesOnlyTheSaveWhoseConflictItResolved() throws {
        let directory = SQLiteTestDirectory()
        let stores = try pair(directory)
        let second = stores.second
        let theirs = try loadedOwners("Ada", in: second)[0]
        try renameAda(to: "Ada (first)", in: stores.first)
        try second.performAndWait {
            second.mergePolicy = NSMergePolicy.overwrite
            theirs.setValue("Ada (second)", forKey: "name")
            try second.save()
        }
        // The other coordinator saves again; the second context, now with the error policy, conflicts as before: the
        // overwrite of its last save does not carry over to the next.
        let other = SQLiteStack.context(stores.coordinators[0])
        try other.performAndWait {
            try owner("Ada (second)", in: other).setValue("Ada (first, again)", forKey: "name")
            try other.save()
        }
        let error = saveError(of: second) {
            second.mergePolicy = NSMergePolicy.error
            theirs.setValue("Ada (second, again)", forKey: "name")
        }
        #expect(error?.code == NSManagedObjectMergeError)
        #expect(
            try RawSQLite.query(stores.url, "SELECT ZNAME FROM ZOWNER WHERE ZNAME LIKE 'Ada%'")
                == [[.text("Ada (first, again)")]])
    }

    /// A coordinator keeps a row while objects use it, as Apple's row cache does: once the object a context saved has
    /// gone, a fault reads the row again, even with cached rows never stale, and sees another coordinator's save.
    @Test func aSavedRowIsReadAgainOnceItsObjectHasGone() throws {
        let directory = SQLiteTestDirectory()
        let url = directory.store()
        let model = SQLiteSampleModel.make()
        let one = try SQLiteStack.coordinator(model, at: url)
        let two = try SQLiteStack.coordinator(model, at: url)
        let writer = SQLiteStack.context(one)
        // An owner, whose to-many relationship the store keeps as a fault in its copy of the row.
        let id = try writer.performAndWait {
            let owner = NSEntityDescription.insertNewObject(forEntityName: "Owner", into: writer)
            owner.setValue("Ada", forKey: "name")
            try writer.save()
            return owner.objectID
        }
        let other = SQLiteStack.context(two)
        try other.performAndWait {
            try owner("Ada", in: other).setValue("Ada (second)", forKey: "name")
            try other.save()
        }
        let reader = SQLiteStack.context(one)
        let name = reader.performAndWait {
            reader.stalenessInterval = -1
            return reader.object(with: id).value(forKey: "name") as? String
        }
        #expect(name == "Ada (second)")
    }

    @Test func aMergePolicyResolvesTheConflictWithoutLosingTheOtherSave() throws {
        let directory = SQLiteTestDirectory()
        let stores = try pair(directory)
        let (first, second) = (stores.first, stores.second)
        let theirs = try loadedOwners("Ada", in: second)[0]
        try first.performAndWait {
            let profile = NSEntityDescription.insertNewObject(forEntityName: "Profile", into: first)
            profile.setValue("first's profile", forKey: "bio")
            try owner("Ada", in: first).setValue(profile, forKey: "profile")
            try first.save()
        }
        try second.performAndWait {
            second.mergePolicy = NSMergePolicy.mergeByPropertyObjectTrump
            theirs.setValue("Ada (second)", forKey: "name")
            try second.save()
        }
        // The second context's name, and the first context's profile: neither update was lost.
        let rows = try RawSQLite.query(
            stores.url, "SELECT o.ZNAME, p.ZBIO, o.Z_OPT FROM ZOWNER o JOIN ZPROFILE p ON p.Z_PK = o.ZPROFILE")
        #expect(rows == [[.text("Ada (second)"), .text("first's profile"), .integer(3)]])
    }
}
