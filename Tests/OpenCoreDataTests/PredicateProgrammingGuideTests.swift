import OpenCoreDataShim
import Testing

/// The examples of Apple's "Predicate Programming Guide", with the results the guide states.
@Suite struct PredicateProgrammingGuideTests {
    /// "Using Predicates": evaluating a predicate against an object.
    @Test func evaluatingPredicates() {
        let predicate = NSPredicate(format: "SELF IN %@", ["Stig", "Shaffiq", "Chris"] as NSArray)
        #expect(predicate.evaluate(with: "Shaffiq"))
    }

    /// "Using Predicates with Arrays": filtering an array, and filtering a mutable array in place.
    @Test func usingPredicatesWithArrays() {
        let array = NSMutableArray(array: ["Nick", "Ben", "Adam", "Melissa"])
        let beginsWithA = NSPredicate(format: "SELF beginswith[c] 'a'")
        #expect(array.filtered(using: beginsWithA) as? [String] == ["Adam"])
        let containsE = NSPredicate(format: "SELF contains[c] 'e'")
        array.filter(using: containsE)
        #expect(array as? [String] == ["Ben", "Melissa"])
    }

    /// "Using Predicates with Key-Paths" and relationships: `ANY children.age > 12`, `ALL children.age > 12`,
    /// `group.name matches 'work.*'`.
    @Test func keyPathsAndRelationships() {
        let person: NSDictionary = [
            "group": ["name": "workshop"],
            "children": [["age": 13], ["age": 10]],
            "department": ["name": "Sales"],
        ]
        #expect(NSPredicate(format: "group.name matches 'work.*'").evaluate(with: person))
        #expect(NSPredicate(format: "ANY children.age > 12").evaluate(with: person))
        #expect(!NSPredicate(format: "ALL children.age > 12").evaluate(with: person))
        #expect(NSPredicate(format: "department.name like %@", "Sales").evaluate(with: person))
    }

    /// "Null Values": a comparison matches null only against null.
    @Test func nullValues() {
        let array: NSArray = [
            ["lastName": "Smith"],
            ["firstName": "Ben", "lastName": "Ravenscroft"],
            ["firstName": "Ben", "lastName": "Turner"],
        ]
        let ben = NSPredicate(format: "firstName like %@", "Ben")
        #expect(array.filtered(using: ben).count == 2)
        let benOrNil = NSPredicate(format: "(firstName == %@) || (firstName = nil)", "Ben")
        #expect(array.filtered(using: benOrNil).count == 3)
        let noFirstName = NSPredicate(format: "firstName = nil")
        #expect(
            (array.filtered(using: noFirstName).first as? NSDictionary)?["lastName"] as? String == "Smith")
    }

    /// "Creating Predicates Using Predicate Templates".
    @Test func predicateTemplates() {
        let template = NSPredicate(format: "lastName like[c] $LAST_NAME")
        let predicate = template.withSubstitutionVariables(["LAST_NAME": "Turner"])
        #expect(predicate.predicateFormat == "lastName LIKE[c] \"Turner\"")
        #expect(predicate.evaluate(with: ["lastName": "TURNER"]))
    }

    /// "Creating Predicates Directly in Code": `(revenue >= 1000000) and (revenue < 100000000)`.
    @Test func creatingPredicatesInCode() {
        let lhs = NSExpression(forKeyPath: "revenue")
        let greaterThan = NSComparisonPredicate(
            leftExpression: lhs, rightExpression: NSExpression(forConstantValue: 1_000_000), modifier: .direct,
            type: .greaterThanOrEqualTo, options: [])
        let lessThan = NSComparisonPredicate(
            leftExpression: lhs, rightExpression: NSExpression(forConstantValue: 100_000_000), modifier: .direct,
            type: .lessThan, options: [])
        let predicate = NSCompoundPredicate(andPredicateWithSubpredicates: [greaterThan, lessThan])
        #expect(predicate.predicateFormat == "revenue >= 1000000 AND revenue < 100000000")
        #expect(predicate == NSPredicate(format: "(revenue >= 1000000) and (revenue < 100000000)"))
        #expect(predicate.evaluate(with: ["revenue": 5_000_000]))
        #expect(!predicate.evaluate(with: ["revenue": 500]))
    }

    /// "Predicate Format String Syntax": `%K like %@` gives `firstName like "Adam"`; string constants in quotes;
    /// `1 BETWEEN { 0 , 33 }`; `name IN { 'Ben', 'Melissa', 'Nick' }`.
    @Test func formatStringSyntaxExamples() {
        let predicate = NSPredicate(format: "%K like %@", "firstName", "Adam")
        #expect(predicate.predicateFormat == "firstName LIKE \"Adam\"")
        #expect(NSPredicate(format: "lastName like[c] \"S*\"").evaluate(with: ["lastName": "smith"]))
        #expect(NSPredicate(format: "lastName like[c] 'S*'").evaluate(with: ["lastName": "Smith"]))
        #expect(NSPredicate(format: "1 BETWEEN { 0 , 33 }").evaluate(with: nil))
        #expect(NSPredicate(format: "name IN { 'Ben', 'Melissa', 'Nick' }").evaluate(with: ["name": "Nick"]))
        #expect(NSPredicate(format: "name contains[cd] 'citroen'").evaluate(with: ["name": "Citroën"]))
        #expect(
            NSPredicate(format: "(firstName beginswith 'M') AND (lastName like 'Adderley')").evaluate(
                with: ["firstName": "Mark", "lastName": "Adderley"]))
        #expect(NSPredicate(format: "grade == 7").evaluate(with: ["grade": 7]))
        #expect(NSPredicate(format: "@sum.items.price < 1000").evaluate(with: [["items": ["price": 10]]] as NSArray))
    }

    /// "Using Predicates with Core Data" / arrays of dates: `birthday > %@`.
    @Test func dateComparisons() {
        let reference = Date(timeIntervalSinceReferenceDate: 0)
        let predicate = NSPredicate(format: "birthday > %@", reference as NSDate)
        #expect(predicate.evaluate(with: ["birthday": Date(timeIntervalSinceReferenceDate: 1)]))
        #expect(!predicate.evaluate(with: ["birthday": Date(timeIntervalSinceReferenceDate: -1)]))
    }

    /// Evaluating math with NSExpression: `4 + 5 - 2**3` is 1.
    @Test func expressionArithmetic() {
        let value = NSExpression(format: "4 + 5 - 2**3").expressionValue(with: nil, context: nil) as? NSNumber
        #expect(value?.intValue == 1)
    }
}
