// Plain Swift structs and classes have no key-value coding; their stored properties are found by reflection, the
// way Foundation finds an Objective-C object's accessors. Only reading is possible: a `Mirror` cannot write.

/// Reads stored properties by name through `Mirror`, searching superclass mirrors too.
enum KeyValueCodingReflection {
    /// The value of the stored property named `key` (or of the property wrapper backing it), `subject` itself for
    /// `"self"`, or `nil` when there is no such property.
    static func value(of subject: Any, forKey key: String) -> Any? {
        if key == "self" { return subject }
        var mirror: Mirror? = Mirror(reflecting: subject)
        while let current = mirror {
            for child in current.children {
                guard let label = child.label else { continue }
                if label == key {
                    return PredicateValueComparison.unwrap(child.value)
                }
                // A property wrapper stores `_key`; its wrapped value is the property's value.
                if label.utf8.count == key.utf8.count + 1, label.hasPrefix("_"), label.dropFirst() == key {
                    let wrapper = Mirror(reflecting: child.value)
                    if let wrapped = wrapper.children.first(where: { $0.label == "wrappedValue" }) {
                        return PredicateValueComparison.unwrap(wrapped.value)
                    }
                    return PredicateValueComparison.unwrap(child.value)
                }
            }
            mirror = current.superclassMirror
        }
        return nil
    }
}
