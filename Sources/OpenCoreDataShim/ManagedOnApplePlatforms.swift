// On Apple platforms the shim re-exports Apple's Core Data, which has no `@Managed`. So that one source file can
// declare typed subclasses for both, the shim provides `@Managed` and `@ManagedAccessor` there too, implemented
// with Core Data's own key-value coding (`@NSManaged` remains the idiomatic choice for Apple-only code).
#if canImport(CoreData)
import CoreData

@attached(accessor)
public macro Managed() = #externalMacro(module: "OpenCoreDataMacros", type: "ManagedMacro")

@attached(body)
public macro ManagedAccessor() = #externalMacro(module: "OpenCoreDataMacros", type: "ManagedAccessorMacro")

/// What a generated to-many accessor does. Public only for the macro's expansion.
public enum _ToManyAccessorOperation: Sendable {
    case addObject, addObjects, removeObject, removeObjects
    case insertObjectAtIndex, insertObjectsAtIndexes, removeObjectAtIndex, removeObjectsAtIndexes
    case replaceObjectAtIndex, replaceObjectsAtIndexes
}

extension NSManagedObject {
    /// The getter of a `@Managed` property.
    public func _managedValue<T>(forKey key: String) -> T {
        let value = self.value(forKey: key)
        if let typed = value as? T { return typed }
        if value == nil, let none = Optional<Any>.none as? T { return none }
        if let number = value as? NSNumber {
            // Scalars of a width other than the model's, as @NSManaged accessors convert them.
            switch T.self {
            case is Int.Type: return number.intValue as! T
            case is Int16.Type: return number.int16Value as! T
            case is Int32.Type: return number.int32Value as! T
            case is Int64.Type: return number.int64Value as! T
            case is Double.Type: return number.doubleValue as! T
            case is Float.Type: return number.floatValue as! T
            case is Bool.Type: return number.boolValue as! T
            default: break
            }
        }
        if value == nil {
            switch T.self {
            case is Int.Type: return 0 as! T
            case is Int16.Type: return Int16(0) as! T
            case is Int32.Type: return Int32(0) as! T
            case is Int64.Type: return Int64(0) as! T
            case is Double.Type: return 0.0 as! T
            case is Float.Type: return Float(0) as! T
            case is Bool.Type: return false as! T
            default: break
            }
        }
        preconditionFailure("The managed property '\(key)' does not hold a \(T.self)")
    }

    /// The setter of a `@Managed` property.
    public func _setManagedValue<T>(_ newValue: T, forKey key: String) {
        setValue(newValue as Any?, forKey: key)
    }

    /// The getter of a `@Managed` enumeration property: the attribute holds the raw value.
    public func _managedValue<T: RawRepresentable>(forKey key: String) -> T {
        let raw = value(forKey: key)
        // Numbers bridge to the raw value's type when it can hold them exactly.
        if let value = (raw as? T.RawValue).flatMap(T.init(rawValue:)) { return value }
        preconditionFailure("The managed property '\(key)' holds \(String(describing: raw)), no case of \(T.self)")
    }

    /// The getter of an optional `@Managed` enumeration property.
    public func _managedValue<T: RawRepresentable>(forKey key: String) -> T? {
        value(forKey: key) == nil ? nil : (_managedValue(forKey: key) as T)
    }

    /// The setter of a `@Managed` enumeration property.
    public func _setManagedValue<T: RawRepresentable>(_ newValue: T, forKey key: String) {
        setValue(newValue.rawValue, forKey: key)
    }

    /// The setter of an optional `@Managed` enumeration property.
    public func _setManagedValue<T: RawRepresentable>(_ newValue: T?, forKey key: String) {
        setValue(newValue?.rawValue, forKey: key)
    }

    /// The body of a `@ManagedAccessor` method.
    public func _performToManyAccessor(
        _ operation: _ToManyAccessorOperation, relationship name: String, value: Any?, index: Any?
    ) {
        let lowered = name.prefix(1).lowercased() + name.dropFirst()
        let key = entity.relationshipsByName[lowered] != nil ? lowered : name
        let isOrdered = entity.relationshipsByName[key]?.isOrdered ?? false
        func objects(_ value: Any?) -> [Any] {
            switch value {
            case let set as NSOrderedSet: return set.array
            case let set as NSSet: return set.allObjects
            case let array as [Any]: return array
            case let value?: return [value]
            default: return []
            }
        }
        let indexes: IndexSet = (index as? IndexSet) ?? (index as? NSIndexSet).map { $0 as IndexSet } ?? []
        if isOrdered {
            let set = mutableOrderedSetValue(forKey: key)
            switch operation {
            case .addObject, .addObjects: set.addObjects(from: objects(value))
            case .removeObject, .removeObjects: set.removeObjects(in: objects(value))
            case .insertObjectAtIndex: set.insert(value as Any, at: index as? Int ?? set.count)
            case .insertObjectsAtIndexes: set.insert(objects(value), at: indexes)
            case .removeObjectAtIndex: set.removeObject(at: index as? Int ?? 0)
            case .removeObjectsAtIndexes: set.removeObjects(at: indexes)
            case .replaceObjectAtIndex: set.replaceObject(at: index as? Int ?? 0, with: value as Any)
            case .replaceObjectsAtIndexes: set.replaceObjects(at: indexes, with: objects(value))
            }
        } else {
            let set = mutableSetValue(forKey: key)
            switch operation {
            case .removeObject, .removeObjects, .removeObjectAtIndex, .removeObjectsAtIndexes:
                for object in objects(value) { set.remove(object) }
            default:
                set.addObjects(from: objects(value))
            }
        }
    }
}
#endif
