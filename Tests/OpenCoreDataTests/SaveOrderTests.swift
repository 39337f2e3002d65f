import Foundation
import Testing

@testable import OpenCoreDataCore

/// The order in which a save goes over the objects it updates and deletes: the order of their addresses (see
/// `_inMemoryOrder`), so that its passes walk memory forward, without losing what validation changed. Apple's Core
/// Data leaves that order undefined, so these tests are OpenCoreData's own.
@Suite struct SaveOrderTests {
    /// Notes the objects whose validation and did-save hooks a save calls, in the order it calls them.
    final class Log {
        var validatedForUpdate: [ObjectIdentifier] = []
        var validatedForDelete: [ObjectIdentifier] = []
        var saved: [ObjectIdentifier] = []
    }

    final class Note: NSManagedObject {
        @Managed var text: String?
        var log: Log?

        override func validateForUpdate() throws {
            try super.validateForUpdate()
            log?.validatedForUpdate.append(ObjectIdentifier(self))
        }

        override func validateForDelete() throws {
            try super.validateForDelete()
            log?.validatedForDelete.append(ObjectIdentifier(self))
        }

        override func didSave() {
            super.didSave()
            log?.saved.append(ObjectIdentifier(self))
        }
    }

    /// A model of one entity named after `objectClass`, with an optional string `text`.
    static func model(of objectClass: NSManagedObject.Type) -> NSManagedObjectModel {
        let entity = NSEntityDescription()
        entity.name = String(describing: objectClass)
        entity.managedObjectClassName = String(reflecting: objectClass)
        entity.properties = [CompanyModel.attribute("text", .stringAttributeType)]
        let model = NSManagedObjectModel()
        model.entities = [entity]
        return model
    }

    static func isAscending(_ identifiers: [ObjectIdentifier]) -> Bool {
        zip(identifiers, identifiers.dropFirst()).allSatisfy { $0 < $1 }
    }

    @Test func aSaveGoesOverTheObjectsItUpdatesAndDeletesInTheOrderOfTheirAddresses() throws {
        let context = CompanyModel.context(model: Self.model(of: Note.self))
        try context.performAndWait {
            let log = Log()
            // Enough objects that the context's hash order is all but certain to differ from their addresses'.
            let notes = (0..<300).map { index in
                let note = Note(context: context)
                note.text = "note \(index)"
                note.log = log
                return note
            }
            try context.save()
            log.saved = []
            for note in notes { note.text = (note.text ?? "") + " changed" }
            try context.save()
            let byAddress = notes.map(ObjectIdentifier.init).sorted()
            #expect(log.validatedForUpdate == byAddress)
            #expect(log.saved == byAddress)

            log.saved = []
            for note in notes { context.delete(note) }
            try context.save()
            #expect(log.validatedForDelete == byAddress)
            #expect(log.saved == byAddress)
        }
    }

    /// A note that, when validated for update, changes another one (which validation should not do, but code does).
    final class Meddler: NSManagedObject {
        @Managed var text: String?
        var other: Meddler?

        override func validateForUpdate() throws {
            try super.validateForUpdate()
            if let other, other.text != "changed while validating" { other.text = "changed while validating" }
        }
    }

    /// Reusing the list validated must not lose a change validation made. Apple's documentation asks validation not
    /// to change objects and says nothing of what a save then does; this pins OpenCoreData's answer: it is saved.
    @Test func aChangeMadeWhileValidatingIsSavedWithTheRest() throws {
        let context = CompanyModel.context(model: Self.model(of: Meddler.self))
        try context.performAndWait {
            let meddler = Meddler(context: context)
            let other = Meddler(context: context)
            try context.save()
            meddler.other = other
            meddler.text = "edited"
            try context.save()
            #expect(other.text == "changed while validating")
            #expect(!context.hasChanges, "the change made while validating was written, not dropped")
            #expect(other.changedValues().isEmpty)
            #expect(other.committedValues(forKeys: ["text"])["text"] as? String == "changed while validating")
        }
    }

    /// Insertions are saved in the order the objects were made (their stores hand out keys in that order), also
    /// when they were inserted in another.
    @Test func objectsInsertedOutOfTheOrderTheyWereMadeAreSavedInTheOrderTheyWereMade() throws {
        let model = Self.model(of: Note.self)
        let entity = try #require(model.entitiesByName["Note"])
        let context = CompanyModel.context(model: model)
        try context.performAndWait {
            let log = Log()
            let notes = (0..<5).map { _ in Note(entity: entity, insertInto: nil) }
            for note in notes { note.log = log }
            for index in [3, 0, 4, 1, 2] { context.insert(notes[index]) }
            try context.save()
            #expect(log.saved == notes.map(ObjectIdentifier.init))
        }
    }

    @Test func theOrderTakesOnlyTheObjectsAskedForAndEachOnce() {
        let context = CompanyModel.context(model: Self.model(of: Note.self))
        context.performAndWait {
            let notes = (0..<100).map { index in
                let note = Note(context: context)
                note.text = index.isMultiple(of: 3) ? "left out" : "taken"
                return note
            }
            var table = ObjectIdentityDictionary<NSManagedObject>()
            for note in notes.reversed() { table[ObjectIdentifier(note)] = note }
            let ordered = table.values._inMemoryOrder { ($0 as? Note)?.text == "taken" }
            let identifiers = ordered.map(ObjectIdentifier.init)
            #expect(Self.isAscending(identifiers))
            #expect(identifiers.sorted() == notes.filter { $0.text == "taken" }.map(ObjectIdentifier.init).sorted())
            #expect(table.values._inMemoryOrder().count == notes.count)
        }
    }
}
