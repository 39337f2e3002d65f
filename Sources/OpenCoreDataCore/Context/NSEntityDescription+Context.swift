extension NSEntityDescription {
    /// The entity named `entityName` in the model of `context`'s coordinator.
    public class func entity(forEntityName entityName: String, in context: NSManagedObjectContext)
        -> NSEntityDescription?
    {
        context._model.entitiesByName[entityName]
    }

    /// Creates an object of the entity named `entityName` and inserts it into `context`; its class is the
    /// entity's `managedObjectClassName`.
    ///
    /// ```swift
    /// let employee = NSEntityDescription.insertNewObject(forEntityName: "Employee", into: context) as! Employee
    /// ```
    public class func insertNewObject(forEntityName entityName: String, into context: NSManagedObjectContext)
        -> NSManagedObject
    {
        guard let entity = context._model.entitiesByName[entityName] else {
            preconditionFailure(
                "+entityForName: could not locate an entity named '\(entityName)' in the context's model")
        }
        let objectClass = ManagedObjectClassRegistry.objectClass(for: entity)
        return objectClass.init(entity: entity, insertInto: context)
    }
}
