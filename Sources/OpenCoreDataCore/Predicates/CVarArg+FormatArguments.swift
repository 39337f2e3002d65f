// On Apple platforms every object is a `CVarArg` and value types bridge to one, so format arguments are written
// `NSPredicate(format: "date > %@", date as CVarArg)` or `…, managedObject)`. swift-corelibs-foundation makes none
// of them `CVarArg`, and that code would not compile. The predicate parser reads the Swift value of each argument
// and never its C encoding; the encodings below matter only to C variadic functions, which receive an object
// pointer as on Apple platforms.

extension NSObject: @retroactive CVarArg {
    /// The object's address, as Objective-C passes an object to a variadic function.
    public var _cVarArgEncoding: [Int] {
        [Int(bitPattern: Unmanaged.passUnretained(self).toOpaque())]
    }
}

/// Value types that Apple code passes as format arguments through bridging (`date as CVarArg`).
protocol BridgedFormatArgument: CVarArg {
    var bridgedObject: NSObject { get }
}

extension BridgedFormatArgument {
    /// The address of a bridged object kept alive for the process, since a C callee cannot release it.
    public var _cVarArgEncoding: [Int] {
        [Int(bitPattern: Unmanaged.passRetained(bridgedObject).toOpaque())]
    }
}

extension Date: @retroactive CVarArg, BridgedFormatArgument {
    var bridgedObject: NSObject { NSDate(timeIntervalSinceReferenceDate: timeIntervalSinceReferenceDate) }
}

extension UUID: @retroactive CVarArg, BridgedFormatArgument {
    var bridgedObject: NSObject { NSUUID(uuidString: uuidString)! }
}

extension URL: @retroactive CVarArg, BridgedFormatArgument {
    var bridgedObject: NSObject { NSURL(string: absoluteString) ?? NSURL(fileURLWithPath: path) }
}

extension Data: @retroactive CVarArg, BridgedFormatArgument {
    var bridgedObject: NSObject { NSData(data: self) }
}

extension Decimal: @retroactive CVarArg, BridgedFormatArgument {
    var bridgedObject: NSObject { NSDecimalNumber(decimal: self) }
}

extension Array: @retroactive CVarArg, BridgedFormatArgument {
    var bridgedObject: NSObject { NSArray(array: self.map { $0 as Any }) }
}

extension Set: @retroactive CVarArg, BridgedFormatArgument {
    var bridgedObject: NSObject { NSSet(array: self.map { $0 as Any }) }
}

extension Dictionary: @retroactive CVarArg, BridgedFormatArgument {
    var bridgedObject: NSObject {
        let dictionary = NSMutableDictionary()
        for (key, value) in self { dictionary[key] = value }
        return dictionary
    }
}
