// A library written for Apple platforms whose public API takes and returns NSPredicate and NSSortDescriptor, as
// query-building libraries do, in a file that imports only Foundation. With the OpenCoreDataFoundationNames plugin
// applied to it, the names are OpenCoreData's classes — in its public interface too, so its clients can call it
// whatever they import. (Inlinable code is in InlinableQueries.swift.)
import Foundation

public enum Queries {
    /// People at least `age` years old.
    public static func adults(from age: Int) -> NSPredicate {
        NSPredicate(format: "age >= %d", age)
    }

    /// Both conditions.
    public static func both(_ first: NSPredicate, _ second: NSPredicate) -> NSCompoundPredicate {
        NSCompoundPredicate(andPredicateWithSubpredicates: [first, second])
    }

    /// By name, then by age, oldest first.
    public static let byNameThenAge: [NSSortDescriptor] = [
        NSSortDescriptor(key: "name", ascending: true), NSSortDescriptor(key: "age", ascending: false),
    ]
}
