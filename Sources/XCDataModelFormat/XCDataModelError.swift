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
        /// A model bundle has several versions and does not say which is current.
        case missingCurrentVersion
        /// Something else the model refers to does not exist (a composite, a configuration's entity…).
        case missingReference
        /// The file is in a format this reader does not handle (Xcode 3's binary `elements`).
        case unsupportedFormat
    }

    public var kind: Kind
    /// The file the problem is in.
    public var url: URL
    public var entity: String?
    public var property: String?
    public var line: Int?
    /// What is wrong, in words a person can act on.
    public var message: String

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
