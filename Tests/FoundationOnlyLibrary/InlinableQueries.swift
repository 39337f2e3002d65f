// Inlinable code that uses the names: Swift lets an inlinable body use only members of modules its own file imports,
// so this file imports OpenCoreData, as a file of a Core Data library imports CoreData. The names in its public
// signature are the plugin's public aliases, which a file's own module declares and so win over the import's.
import Foundation
import OpenCoreData

extension Queries {
    /// The key path expression of `key`.
    @inlinable public static func value(of key: String) -> NSExpression { NSExpression(forKeyPath: key) }

    /// Objects whose `key` equals `value`.
    @inlinable public static func matching(_ key: String, _ value: String) -> NSPredicate {
        NSPredicate(format: "%K == %@", key, value)
    }
}
