import XCDataModelFormat

/// The `userInfo` key of the name of the entity a model-loading error concerns.
let ModelLoadingEntityErrorKey = "entity"
/// The `userInfo` key of the name of the property a model-loading error concerns.
let ModelLoadingPropertyErrorKey = "property"
/// The `userInfo` key of the line, in the model file, a model-loading error concerns.
let ModelLoadingLineErrorKey = "line"

/// Errors of model loading in Core Data's shape: `NSCocoaErrorDomain`, a file-system code when the file is missing
/// or unreadable, `NSCoreDataError` (134060) when its content is not a valid model; the message names the file,
/// entity, property and line, which are also in `userInfo` (`NSFilePathErrorKey`, `"entity"`, `"property"`,
/// `"line"`).
enum ModelLoadingError {
    static func error(
        _ code: Int, url: URL, entity: String? = nil, property: String? = nil, line: Int? = nil, message: String,
        underlying: (any Error)? = nil
    ) -> NSError {
        var info: [String: Any] = [NSFilePathErrorKey: url.path]
        if let entity { info[ModelLoadingEntityErrorKey] = entity }
        if let property { info[ModelLoadingPropertyErrorKey] = property }
        if let line { info[ModelLoadingLineErrorKey] = line }
        if let underlying { info[NSUnderlyingErrorKey] = underlying }
        var location = url.path
        if let line { location += ":\(line)" }
        var subject = ""
        if let entity {
            subject = " entity '\(entity)'"
            if let property { subject += ", property '\(property)'" }
            subject += ":"
        }
        return coreDataError(
            code, "Cannot load the managed object model \(location):\(subject) \(message)", userInfo: info)
    }

    static func invalid(
        url: URL, entity: String? = nil, property: String? = nil, line: Int? = nil, _ message: String,
        underlying: (any Error)? = nil
    ) -> NSError {
        error(
            NSCoreDataError, url: url, entity: entity, property: property, line: line, message: message,
            underlying: underlying)
    }

    /// The error for a problem the model file reader found.
    static func error(from failure: XCDataModelError) -> NSError {
        let code: Int
        switch failure.kind {
        case .unreadable:
            code =
                FileManager.default.fileExists(atPath: failure.url.path)
                ? NSFileReadUnknownError
                : NSFileReadNoSuchFileError
        default:
            code = NSCoreDataError
        }
        return error(
            code, url: failure.url, entity: failure.entity, property: failure.property, line: failure.line,
            message: failure.message)
    }
}
