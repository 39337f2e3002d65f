import Foundation

/// Why a model file could not be read: what is wrong, in which file, and where in it (entity, property, line).
public struct XCDataModelError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kinds of problems, so that callers can map them to their own error codes.
    public enum Kind: Sendable, Equatable {
        /// The file or folder does not exist or cannot be read.
        case unreadable
        /// The XML is not well formed, or is not a Core Data model.
        case malformed
        /// An attribute names a type Core Data does not have.
        case unknownAttributeType
        /// A relationship's destination entity does not exist.
        case missingDestination
        /// A relationship's inverse does not exist, or is not a relationship back to it.
        case missingInverse
        /// An entity's parent entity does not exist.
        case missingParentEntity
        /// Entities inherit from each other in a circle.
        case inheritanceCycle
        /// Two entities, or two properties of one entity, have the same name.
        case duplicateName
        /// A name breaks Xcode's rules for it (an entity's starts with an upper-case letter, a property's with a
        /// lower-case one, and both go on with ASCII letters, digits and underscores).
        case invalidName
        /// A model bundle has several versions and does not say which is current.
        case missingCurrentVersion
        /// Something else the model refers to does not exist (a composite, a configuration's entity…).
        case missingReference
        /// The file is in a format this reader does not handle (Xcode 3's binary `elements`).
        case unsupportedFormat
    }

    /// What kind of problem it is.
    public var kind: Kind
    /// The file the problem is in.
    public var url: URL
    /// The entity the problem is in, if any.
    public var entity: String?
    /// The property the problem is in, if any.
    public var property: String?
    /// The line of the file, when known.
    public var line: Int?
    /// What is wrong, in words a person can act on.
    public var message: String

    /// An error of `kind` in the file at `url`, where `entity`, `property` and `line` say.
    public init(
        _ kind: Kind, url: URL, entity: String? = nil, property: String? = nil, line: Int? = nil, message: String
    ) {
        self.kind = kind
        self.url = url
        self.entity = entity
        self.property = property
        self.line = line
        self.message = message
    }

    /// `path:line: entity 'E', property 'p': message`, as compilers print diagnostics.
    public var description: String {
        var location = url.path
        if let line { location += ":\(line)" }
        var subject = ""
        if let entity {
            subject = " entity '\(entity)'"
            if let property { subject += ", property '\(property)'" }
            subject += ":"
        }
        return "\(location):\(subject) \(message)"
    }
}
