/// What an entity mapping does with the objects of its source entity, with Apple's raw values.
public enum NSEntityMappingType: UInt, Sendable {
    /// A mapping whose kind was not chosen (Xcode's "Undefined"): it migrates like a transform.
    case undefinedEntityMappingType = 0
    /// A mapping whose entity migration policy does the work.
    case customEntityMappingType = 1
    /// A destination entity that is new: no source objects, nothing migrated.
    case addEntityMappingType = 2
    /// A source entity that is gone: its objects are not migrated.
    case removeEntityMappingType = 3
    /// The source objects are copied as they are.
    case copyEntityMappingType = 4
    /// The source objects are migrated with transformations of their values.
    case transformEntityMappingType = 5
}
