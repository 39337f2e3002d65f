/// The entities that describe history transactions and changes to `fetchHistory(withFetch:)`: their attributes are
/// the keys a predicate or sort descriptor of such a request may use. (They describe values, not rows of a model:
/// the SQLite store keeps history in Apple's tables, not in these entities' tables.)
enum PersistentHistoryModel {
    static let model: NSManagedObjectModel = {
        func attribute(_ name: String, _ type: NSAttributeType) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.isOptional = true
            return attribute
        }
        let transaction = NSEntityDescription()
        transaction.name = "Transaction"
        transaction.properties = [
            attribute("author", .stringAttributeType), attribute("bundleID", .stringAttributeType),
            attribute("contextName", .stringAttributeType), attribute("processID", .stringAttributeType),
            attribute("storeID", .stringAttributeType), attribute("timestamp", .dateAttributeType),
            attribute("transactionNumber", .integer64AttributeType),
        ]
        let change = NSEntityDescription()
        change.name = "Change"
        change.properties = [
            attribute("changeID", .integer64AttributeType), attribute("changeType", .integer64AttributeType),
            attribute("changedObjectID", .objectIDAttributeType),
        ]
        let toTransaction = NSRelationshipDescription()
        toTransaction.name = "transaction"
        toTransaction.destinationEntity = transaction
        toTransaction.maxCount = 1
        change.properties.append(toTransaction)
        let model = NSManagedObjectModel()
        model.entities = [transaction, change]
        model._freeze()
        return model
    }()

    static var transaction: NSEntityDescription { model.entitiesByName["Transaction"]! }
    static var change: NSEntityDescription { model.entitiesByName["Change"]! }
}
