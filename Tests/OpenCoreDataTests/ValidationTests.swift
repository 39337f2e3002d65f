import OpenCoreDataShim
import Testing

@Suite struct ValidationTests {
    /// A model of one entity named `name`, whose objects are of `objectClass` and whose properties `properties` makes
    /// (given the entity, for relationships to itself).
    static func model(
        of name: String, _ objectClass: NSManagedObject.Type,
        properties: (NSEntityDescription) -> [NSPropertyDescription]
    ) -> NSManagedObjectModel {
        let entity = NSEntityDescription()
        entity.name = name
        entity.managedObjectClassName = String(reflecting: objectClass)
        entity.properties = properties(entity)
        let model = NSManagedObjectModel()
        model.entities = [entity]
        return model
    }

    /// An optional to-many relationship from `entity` to itself of at most `maxCount` objects.
    static func relationship(_ name: String, to entity: NSEntityDescription, maxCount: Int) -> NSRelationshipDescription
    {
        let relationship = NSRelationshipDescription()
        relationship.name = name
        relationship.destinationEntity = entity
        relationship.maxCount = maxCount
        relationship.minCount = 0
        return relationship
    }

    /// Accounts: a name of 2 to 8 characters, a code of three capitals, a balance of at least 0, at most 2 owners.
    static func model() -> NSManagedObjectModel {
        model(of: "Account", Account.self) { entity in
            let name = CompanyModel.attribute("name", .stringAttributeType, optional: false)
            name.setValidationPredicates(
                [NSPredicate(format: "length >= 2"), NSPredicate(format: "length <= 8")],
                withValidationWarnings: ["\(NSValidationStringTooShortError)", "\(NSValidationStringTooLongError)"])
            let code = CompanyModel.attribute("code", .stringAttributeType)
            code.setValidationPredicates(
                [NSPredicate(format: "SELF MATCHES '[A-Z]{3}'")], withValidationWarnings: ["Use three capitals"])
            let balance = CompanyModel.attribute("balance", .integer32AttributeType)
            balance.setValidationPredicates(
                [NSPredicate(format: "SELF >= 0")], withValidationWarnings: ["\(NSValidationNumberTooSmallError)"])
            return [name, code, balance, relationship("owners", to: entity, maxCount: 2)]
        }
    }

    @Test func missingMandatoryValue() throws {
        let context = CompanyModel.context(model: Self.model())
        context.performAndWait {
            let account = Account(context: context)
            let error = #expect(throws: NSError.self) { try context.save() }
            #expect(error?.domain == NSCocoaErrorDomain)
            #expect(error?.code == NSValidationMissingMandatoryPropertyError)
            #expect(error?.userInfo[NSValidationKeyErrorKey] as? String == "name")
            #expect(error?.userInfo[NSValidationObjectErrorKey] as? NSManagedObject === account)
            #expect((error as? CocoaError)?.code == .validationMissingMandatoryProperty)
        }
    }

    @Test func severalFailuresAreReportedTogether() throws {
        let context = CompanyModel.context(model: Self.model())
        context.performAndWait {
            let account = Account(context: context)
            account.name = "x"
            account.code = "abc"
            account.balance = -5
            let error = #expect(throws: NSError.self) { try context.save() }
            #expect(error?.code == NSValidationMultipleErrorsError)
            let details = error?.userInfo[NSDetailedErrorsKey] as? [NSError] ?? []
            let byKey = Dictionary(details.map { ($0.userInfo[NSValidationKeyErrorKey] as? String ?? "", $0) }) {
                a, _ in a
            }
            #expect(byKey["name"]?.code == NSValidationStringTooShortError)
            #expect(byKey["code"]?.code == NSManagedObjectValidationError)
            #expect(byKey["code"]?.localizedDescription == "Use three capitals")
            #expect(byKey["balance"]?.code == NSValidationNumberTooSmallError)
            #expect(byKey["balance"]?.userInfo[NSValidationValueErrorKey] as? Int == -5)
            #expect(details.count == 3)
        }
    }

    @Test func nothingIsSavedWhenValidationFails() throws {
        let context = CompanyModel.context(model: Self.model())
        try context.performAndWait {
            let good = Account(context: context)
            good.name = "good"
            _ = Account(context: context)
            #expect(throws: NSError.self) { try context.save() }
            #expect(good.isInserted, "the context keeps its changes")
            let other = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            other.persistentStoreCoordinator = context.persistentStoreCoordinator
            let stored = try other.performAndWait {
                try other.count(for: NSFetchRequest<Account>(entityName: "Account"))
            }
            #expect(stored == 0)
        }
    }

    @Test func relationshipCounts() throws {
        let context = CompanyModel.context(model: Self.model())
        context.performAndWait {
            let account = Account(context: context)
            account.name = "main"
            for name in ["a1", "a2", "a3"] {
                let owner = Account(context: context)
                owner.name = name
                account.mutableSetValue(forKey: "owners").add(owner)
            }
            let error = #expect(throws: NSError.self) { try account.validateForInsert() }
            #expect(error?.code == NSValidationRelationshipExceedsMaximumCountError)
            #expect(error?.userInfo[NSValidationKeyErrorKey] as? String == "owners")
        }
    }

    @Test func validateValueCorrectsAndRejects() throws {
        let context = CompanyModel.context(model: Self.model())
        try context.performAndWait {
            let account = Account(context: context)
            var value: AnyObject? = "  pad  " as NSString
            try account.validateValue(&value, forKey: "name")
            #expect(value as? String == "pad", "the per-key hook trimmed it")
            var bad: AnyObject? = "" as NSString
            #expect(throws: NSError.self) { try account.validateValue(&bad, forKey: "name") }
            var forbidden: AnyObject? = "root" as NSString
            let error = #expect(throws: NSError.self) { try account.validateValue(&forbidden, forKey: "name") }
            #expect(error?.code == 4242)
        }
    }

    @Test func saveAsksTheHookOfTheObjectsClass() throws {
        let context = CompanyModel.context(model: Self.model())
        context.performAndWait {
            let account = Account(context: context)
            account.name = "root"
            let error = #expect(throws: NSError.self) { try context.save() }
            #expect(error?.domain == "Accounts")
            #expect(error?.code == 4242)
            #expect(account.isInserted, "nothing was saved")
        }
    }

    @Test func saveAsksAHookTheClassInherits() throws {
        // No validation predicates, and values set: the model's rules alone would pass them.
        let model = Self.model(of: "PettyLedger", PettyLedger.self) { _ in
            [
                CompanyModel.attribute("total", .integer64AttributeType, optional: false),
                CompanyModel.attribute("ratio", .doubleAttributeType),
            ]
        }
        let context = CompanyModel.context(model: model)
        try context.performAndWait {
            let ledger = PettyLedger(context: context)
            ledger.total = 5_000
            ledger.ratio = 0.5
            let error = #expect(throws: NSError.self) { try context.save() }
            #expect(error?.domain == "Ledgers")
            #expect(error?.userInfo["key"] as? String == "total")
            #expect(error?.userInfo["value"] as? NSNumber == NSNumber(value: 5_000), "the hook sees an NSNumber")
            ledger.total = 50
            try context.save()
            #expect(!ledger.hasChanges)
        }
    }

    @Test func classesWithoutTheHookAreStillHeldToTheModel() throws {
        let model = Self.model(of: "Voucher", Voucher.self) { entity in
            let amount = CompanyModel.attribute("amount", .integer64AttributeType)
            amount.setValidationPredicates(
                [NSPredicate(format: "SELF >= 0")], withValidationWarnings: ["\(NSValidationNumberTooSmallError)"])
            return [
                CompanyModel.attribute("code", .stringAttributeType, optional: false), amount,
                CompanyModel.attribute("note", .stringAttributeType),
                Self.relationship("related", to: entity, maxCount: 2),
            ]
        }
        let context = CompanyModel.context(model: model)
        try context.performAndWait {
            let voucher = Voucher(context: context)
            voucher.amount = -3
            for _ in 0..<3 {
                let other = Voucher(context: context)
                other.code = "other"
                voucher.mutableSetValue(forKey: "related").add(other)
            }
            let error = #expect(throws: NSError.self) { try context.save() }
            let details = error?.userInfo[NSDetailedErrorsKey] as? [NSError] ?? []
            let codes = Dictionary(details.map { ($0.userInfo[NSValidationKeyErrorKey] as? String ?? "", $0.code) }) {
                a, _ in a
            }
            #expect(codes["code"] == NSValidationMissingMandatoryPropertyError)
            #expect(codes["amount"] == NSValidationNumberTooSmallError)
            #expect(codes["related"] == NSValidationRelationshipExceedsMaximumCountError)
            #expect(details.count == 3, "the others are valid, the optional note included")
            voucher.code = "V1"
            voucher.amount = 3
            voucher.mutableSetValue(forKey: "related").removeAllObjects()
            try context.save()
            #expect(!context.hasChanges)
        }
    }
}

/// Rejects totals above 1,000 in its per-key hook, which its subclass inherits.
class Ledger: NSManagedObject {
    override func validate(value: inout Any?, forKey key: String) throws {
        try super.validate(value: &value, forKey: key)
        if key == "total", let number = value as? NSNumber, number.int64Value > 1_000 {
            throw NSError(domain: "Ledgers", code: 1, userInfo: ["key": key, "value": number])
        }
    }
}

final class PettyLedger: Ledger {
    @Managed var total: Int64
    @Managed var ratio: Double
}

/// Has no per-key hook.
final class Voucher: NSManagedObject {
    @Managed var code: String?
    @Managed var amount: Int64
}

final class Account: NSManagedObject {
    @Managed var name: String?
    @Managed var code: String?
    @Managed var balance: Int32

    override func validate(value: inout Any?, forKey key: String) throws {
        try super.validate(value: &value, forKey: key)
        guard key == "name", let text = value as? String else { return }
        if text == "root" { throw NSError(domain: "Accounts", code: 4242) }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed != text { value = trimmed }
    }
}
