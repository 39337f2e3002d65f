import Foundation
import OpenCoreDataShim

/// The model of the batch request and fetched results controller tests, with entity names of its own (statements
/// are counted by table while other suites run):
///
/// - BatchDepartment (name, budget) ⟶> BatchWorker `workers` (cascade) — `department` (nullify)
/// - BatchWorker (name, salary Int64, rating Double, hired Date, active Bool, level Int16) — `badge` ⟶ BatchBadge
///   (cascade; `holder` nullify), `projects` <<⟶>> BatchProject `members` (nullify both ways)
/// - BatchManager: a BatchWorker with a `bonus`
/// - BatchSafe (name) ⟶> BatchDocument `documents` (deny) — `safe` (nullify)
enum BatchModel {
    static func make() -> NSManagedObjectModel {
        func entity(_ name: String, _ attributes: [NSAttributeDescription]) -> NSEntityDescription {
            let entity = NSEntityDescription()
            entity.name = name
            entity.managedObjectClassName = NSStringFromClass(NSManagedObject.self)
            entity.properties = attributes
            return entity
        }
        func attribute(_ name: String, _ type: NSAttributeType, default value: Any? = nil) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.isOptional = true
            attribute.defaultValue = value
            return attribute
        }
        func relationship(_ name: String, to destination: NSEntityDescription, toMany: Bool, rule: NSDeleteRule)
            -> NSRelationshipDescription
        {
            let relationship = NSRelationshipDescription()
            relationship.name = name
            relationship.destinationEntity = destination
            relationship.minCount = 0
            relationship.maxCount = toMany ? 0 : 1
            relationship.deleteRule = rule
            relationship.isOptional = true
            return relationship
        }
        func pair(_ a: NSRelationshipDescription, _ b: NSRelationshipDescription) {
            a.inverseRelationship = b
            b.inverseRelationship = a
        }
        let department = entity(
            "BatchDepartment", [attribute("name", .stringAttributeType), attribute("budget", .doubleAttributeType)])
        let worker = entity(
            "BatchWorker",
            [
                attribute("name", .stringAttributeType), attribute("salary", .integer64AttributeType, default: 0),
                attribute("rating", .doubleAttributeType), attribute("hired", .dateAttributeType),
                attribute("active", .booleanAttributeType, default: true),
                attribute("level", .integer16AttributeType, default: 1),
            ])
        let manager = entity("BatchManager", [attribute("bonus", .integer64AttributeType)])
        let badge = entity("BatchBadge", [attribute("code", .stringAttributeType)])
        let project = entity("BatchProject", [attribute("title", .stringAttributeType)])
        let safe = entity("BatchSafe", [attribute("name", .stringAttributeType)])
        let document = entity("BatchDocument", [attribute("title", .stringAttributeType)])

        let workers = relationship("workers", to: worker, toMany: true, rule: .cascadeDeleteRule)
        let workerDepartment = relationship("department", to: department, toMany: false, rule: .nullifyDeleteRule)
        pair(workers, workerDepartment)
        let workerBadge = relationship("badge", to: badge, toMany: false, rule: .cascadeDeleteRule)
        let badgeHolder = relationship("holder", to: worker, toMany: false, rule: .nullifyDeleteRule)
        pair(workerBadge, badgeHolder)
        let projects = relationship("projects", to: project, toMany: true, rule: .nullifyDeleteRule)
        let members = relationship("members", to: worker, toMany: true, rule: .nullifyDeleteRule)
        pair(projects, members)
        let documents = relationship("documents", to: document, toMany: true, rule: .denyDeleteRule)
        let documentSafe = relationship("safe", to: safe, toMany: false, rule: .nullifyDeleteRule)
        pair(documents, documentSafe)

        department.properties += [workers]
        worker.properties += [workerDepartment, workerBadge, projects]
        badge.properties += [badgeHolder]
        project.properties += [members]
        safe.properties += [documents]
        document.properties += [documentSafe]
        worker.subentities = [manager]

        let model = NSManagedObjectModel()
        model.entities = [department, worker, manager, badge, project, safe, document]
        return model
    }

    static let shared = make()
}

/// The stores the batch request suites run against: Apple executes batch requests in SQLite stores only;
/// OpenCoreData's in-memory store executes them too, with the same results.
enum BatchStoreKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case sqlite
    case inMemory

    static var all: [BatchStoreKind] {
        #if canImport(CoreData)
        return [.sqlite]
        #else
        return allCases
        #endif
    }

    var description: String { rawValue }
}

/// A coordinator on a fresh store of one kind, with the sample objects, and contexts on it.
final class BatchStack {
    let directory = SQLiteTestDirectory()
    let coordinator: NSPersistentStoreCoordinator
    let kind: BatchStoreKind

    init(_ kind: BatchStoreKind, fill: Bool = true) throws {
        self.kind = kind
        coordinator = NSPersistentStoreCoordinator(managedObjectModel: BatchModel.shared)
        switch kind {
        case .sqlite:
            try coordinator.addPersistentStore(
                ofType: NSSQLiteStoreType, configurationName: nil, at: directory.store(), options: nil)
        case .inMemory:
            try coordinator.addPersistentStore(
                ofType: NSInMemoryStoreType, configurationName: nil, at: URL(fileURLWithPath: "/dev/null"), options: nil
            )
        }
        if fill { try self.fill() }
    }

    var url: URL { directory.store() }

    /// A new private-queue context on the coordinator.
    func context() -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    /// Sales: ann (100, 3.5, badge A1, apollo), bob (200, 4.0, badge B1, apollo and gemini), cy (300, 2.5);
    /// Lab: dee (400, 5.0, badge D1), eve (500, 1.0), max (a manager: 600, 4.5, bonus 50). Safes: vault (holding
    /// the document "plans"), empty.
    private func fill() throws {
        let context = context()
        try context.performAndWait {
            func insert(_ entity: String, _ values: [String: Any]) -> NSManagedObject {
                let object = NSEntityDescription.insertNewObject(forEntityName: entity, into: context)
                for (key, value) in values { object.setValue(value, forKey: key) }
                return object
            }
            let sales = insert("BatchDepartment", ["name": "Sales", "budget": 1000.0])
            let lab = insert("BatchDepartment", ["name": "Lab", "budget": 2000.0])
            let apollo = insert("BatchProject", ["title": "apollo"])
            let gemini = insert("BatchProject", ["title": "gemini"])
            let rows: [(String, Int64, Double, NSManagedObject, String?, [NSManagedObject])] = [
                ("ann", 100, 3.5, sales, "A1", [apollo]), ("bob", 200, 4.0, sales, "B1", [apollo, gemini]),
                ("cy", 300, 2.5, sales, nil, []), ("dee", 400, 5.0, lab, "D1", []), ("eve", 500, 1.0, lab, nil, []),
            ]
            for (name, salary, rating, department, badge, projects) in rows {
                let worker = insert(
                    "BatchWorker",
                    ["name": name, "salary": NSNumber(value: salary), "rating": rating, "department": department])
                if let badge { worker.setValue(insert("BatchBadge", ["code": badge]), forKey: "badge") }
                worker.setValue(Set(projects), forKey: "projects")
            }
            _ = insert(
                "BatchManager",
                [
                    "name": "max", "salary": NSNumber(value: 600), "rating": 4.5, "bonus": NSNumber(value: 50),
                    "department": lab,
                ])
            let vault = insert("BatchSafe", ["name": "vault"])
            _ = insert("BatchSafe", ["name": "empty"])
            _ = insert("BatchDocument", ["title": "plans", "safe": vault])
            try context.save()
        }
    }

    /// `key` of every object of `entity` (subentities included) that has a value for it, by name (or title,
    /// code), read by a new context.
    func values<Value>(_ entity: String, _ key: String, as type: Value.Type, nameKey: String = "name") throws
        -> [String: Value]
    {
        let context = context()
        return try context.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: entity)
            var result: [String: Value] = [:]
            for object in try context.fetch(request) {
                let name = object.value(forKey: nameKey) as? String ?? "?"
                if let value = object.value(forKey: key) as? Value { result[name] = value }
            }
            return result
        }
    }

    /// The names (or titles, codes) of every object of `entity`, sorted, read by a new context.
    func names(_ entity: String, nameKey: String = "name") throws -> [String] {
        try values(entity, nameKey, as: String.self, nameKey: nameKey).keys.sorted()
    }

    /// The ID of the object of `entity` named `name`.
    func objectID(_ entity: String, _ name: String, nameKey: String = "name") throws -> NSManagedObjectID {
        let context = context()
        return try context.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: entity)
            request.predicate = NSPredicate(format: "%K == %@", nameKey, name)
            guard let object = try context.fetch(request).first else {
                throw BatchTestFailure(description: "no \(entity) named \(name)")
            }
            return object.objectID
        }
    }
}

struct BatchTestFailure: Error, CustomStringConvertible {
    let description: String
}
