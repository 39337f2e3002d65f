// Core Data's error codes and userInfo keys, under Apple's names: the global `Int` constants of CoreDataErrors.h
// and the `CocoaError.Code` members that Apple's Swift overlay declares.

/// The key for an array of the errors that, together, made an operation fail.
public let NSDetailedErrorsKey = "NSDetailedErrors"
/// The key for the object that failed validation.
public let NSValidationObjectErrorKey = "NSValidationErrorObject"
/// The key for the name of the property that failed validation.
public let NSValidationKeyErrorKey = "NSValidationErrorKey"
/// The key for the predicate that failed validation.
public let NSValidationPredicateErrorKey = "NSValidationErrorPredicate"
/// The key for the value that failed validation.
public let NSValidationValueErrorKey = "NSValidationErrorValue"
/// The key for the stores an error concerns.
public let NSAffectedStoresErrorKey = "NSAffectedStoresErrorKey"
/// The key for the objects an error concerns.
public let NSAffectedObjectsErrorKey = "NSAffectedObjectsErrorKey"
/// The key for the merge conflicts (`[NSMergeConflict]`) of a failed save.
public let NSPersistentStoreSaveConflictsErrorKey = "conflictList"
/// The domain of errors that SQLite itself reports.
public let NSSQLiteErrorDomain = "NSSQLiteErrorDomain"

public let NSManagedObjectValidationError = 1550
public let NSManagedObjectConstraintValidationError = 1551
public let NSValidationMultipleErrorsError = 1560
public let NSValidationMissingMandatoryPropertyError = 1570
public let NSValidationRelationshipLacksMinimumCountError = 1580
public let NSValidationRelationshipExceedsMaximumCountError = 1590
public let NSValidationRelationshipDeniedDeleteError = 1600
public let NSValidationNumberTooLargeError = 1610
public let NSValidationNumberTooSmallError = 1620
public let NSValidationDateTooLateError = 1630
public let NSValidationDateTooSoonError = 1640
public let NSValidationInvalidDateError = 1650
public let NSValidationStringTooLongError = 1660
public let NSValidationStringTooShortError = 1670
public let NSValidationStringPatternMatchingError = 1680
public let NSValidationInvalidURIError = 1690
public let NSManagedObjectContextLockingError = 132_000
public let NSPersistentStoreCoordinatorLockingError = 132_010
public let NSManagedObjectReferentialIntegrityError = 133_000
public let NSManagedObjectExternalRelationshipError = 133_010
public let NSManagedObjectMergeError = 133_020
public let NSManagedObjectConstraintMergeError = 133_021
public let NSPersistentStoreInvalidTypeError = 134_000
public let NSPersistentStoreTypeMismatchError = 134_010
public let NSPersistentStoreIncompatibleSchemaError = 134_020
public let NSPersistentStoreSaveError = 134_030
public let NSPersistentStoreIncompleteSaveError = 134_040
public let NSPersistentStoreSaveConflictsError = 134_050
public let NSCoreDataError = 134_060
public let NSPersistentStoreOperationError = 134_070
public let NSPersistentStoreOpenError = 134_080
public let NSPersistentStoreTimeoutError = 134_090
public let NSPersistentStoreUnsupportedRequestTypeError = 134_091
public let NSPersistentStoreIncompatibleVersionHashError = 134_100
public let NSMigrationError = 134_110
public let NSMigrationConstraintViolationError = 134_111
public let NSMigrationCancelledError = 134_120
public let NSMigrationMissingSourceModelError = 134_130
public let NSMigrationMissingMappingModelError = 134_140
public let NSMigrationManagerSourceStoreError = 134_150
public let NSMigrationManagerDestinationStoreError = 134_160
public let NSEntityMigrationPolicyError = 134_170
public let NSSQLiteError = 134_180
public let NSInferredMappingModelError = 134_190
public let NSExternalRecordImportError = 134_200
public let NSPersistentHistoryTokenExpiredError = 134_301

extension CocoaError.Code {
    public static var managedObjectValidation: CocoaError.Code { .init(rawValue: NSManagedObjectValidationError) }
    public static var managedObjectConstraintValidation: CocoaError.Code {
        .init(rawValue: NSManagedObjectConstraintValidationError)
    }
    public static var validationMultipleErrors: CocoaError.Code { .init(rawValue: NSValidationMultipleErrorsError) }
    public static var validationMissingMandatoryProperty: CocoaError.Code {
        .init(rawValue: NSValidationMissingMandatoryPropertyError)
    }
    public static var validationRelationshipLacksMinimumCount: CocoaError.Code {
        .init(rawValue: NSValidationRelationshipLacksMinimumCountError)
    }
    public static var validationRelationshipExceedsMaximumCount: CocoaError.Code {
        .init(rawValue: NSValidationRelationshipExceedsMaximumCountError)
    }
    public static var validationRelationshipDeniedDelete: CocoaError.Code {
        .init(rawValue: NSValidationRelationshipDeniedDeleteError)
    }
    public static var validationNumberTooLarge: CocoaError.Code { .init(rawValue: NSValidationNumberTooLargeError) }
    public static var validationNumberTooSmall: CocoaError.Code { .init(rawValue: NSValidationNumberTooSmallError) }
    public static var validationDateTooLate: CocoaError.Code { .init(rawValue: NSValidationDateTooLateError) }
    public static var validationDateTooSoon: CocoaError.Code { .init(rawValue: NSValidationDateTooSoonError) }
    public static var validationInvalidDate: CocoaError.Code { .init(rawValue: NSValidationInvalidDateError) }
    public static var validationStringTooLong: CocoaError.Code { .init(rawValue: NSValidationStringTooLongError) }
    public static var validationStringTooShort: CocoaError.Code { .init(rawValue: NSValidationStringTooShortError) }
    public static var validationStringPatternMatching: CocoaError.Code {
        .init(rawValue: NSValidationStringPatternMatchingError)
    }
    public static var validationInvalidURI: CocoaError.Code { .init(rawValue: NSValidationInvalidURIError) }
    public static var managedObjectContextLocking: CocoaError.Code {
        .init(rawValue: NSManagedObjectContextLockingError)
    }
    public static var persistentStoreCoordinatorLocking: CocoaError.Code {
        .init(rawValue: NSPersistentStoreCoordinatorLockingError)
    }
    public static var managedObjectReferentialIntegrity: CocoaError.Code {
        .init(rawValue: NSManagedObjectReferentialIntegrityError)
    }
    public static var managedObjectExternalRelationship: CocoaError.Code {
        .init(rawValue: NSManagedObjectExternalRelationshipError)
    }
    public static var managedObjectMerge: CocoaError.Code { .init(rawValue: NSManagedObjectMergeError) }
    public static var managedObjectConstraintMerge: CocoaError.Code {
        .init(rawValue: NSManagedObjectConstraintMergeError)
    }
    public static var persistentStoreInvalidType: CocoaError.Code { .init(rawValue: NSPersistentStoreInvalidTypeError) }
    public static var persistentStoreTypeMismatch: CocoaError.Code {
        .init(rawValue: NSPersistentStoreTypeMismatchError)
    }
    public static var persistentStoreIncompatibleSchema: CocoaError.Code {
        .init(rawValue: NSPersistentStoreIncompatibleSchemaError)
    }
    public static var persistentStoreSave: CocoaError.Code { .init(rawValue: NSPersistentStoreSaveError) }
    public static var persistentStoreIncompleteSave: CocoaError.Code {
        .init(rawValue: NSPersistentStoreIncompleteSaveError)
    }
    public static var persistentStoreSaveConflicts: CocoaError.Code {
        .init(rawValue: NSPersistentStoreSaveConflictsError)
    }
    public static var coreData: CocoaError.Code { .init(rawValue: NSCoreDataError) }
    public static var persistentStoreOperation: CocoaError.Code { .init(rawValue: NSPersistentStoreOperationError) }
    public static var persistentStoreOpen: CocoaError.Code { .init(rawValue: NSPersistentStoreOpenError) }
    public static var persistentStoreTimeout: CocoaError.Code { .init(rawValue: NSPersistentStoreTimeoutError) }
    public static var persistentStoreUnsupportedRequestType: CocoaError.Code {
        .init(rawValue: NSPersistentStoreUnsupportedRequestTypeError)
    }
    public static var persistentStoreIncompatibleVersionHash: CocoaError.Code {
        .init(rawValue: NSPersistentStoreIncompatibleVersionHashError)
    }
    public static var migration: CocoaError.Code { .init(rawValue: NSMigrationError) }
    public static var migrationConstraintViolation: CocoaError.Code {
        .init(rawValue: NSMigrationConstraintViolationError)
    }
    public static var migrationCancelled: CocoaError.Code { .init(rawValue: NSMigrationCancelledError) }
    public static var migrationMissingSourceModel: CocoaError.Code {
        .init(rawValue: NSMigrationMissingSourceModelError)
    }
    public static var migrationMissingMappingModel: CocoaError.Code {
        .init(rawValue: NSMigrationMissingMappingModelError)
    }
    public static var migrationManagerSourceStore: CocoaError.Code {
        .init(rawValue: NSMigrationManagerSourceStoreError)
    }
    public static var migrationManagerDestinationStore: CocoaError.Code {
        .init(rawValue: NSMigrationManagerDestinationStoreError)
    }
    public static var entityMigrationPolicy: CocoaError.Code { .init(rawValue: NSEntityMigrationPolicyError) }
    public static var sqlite: CocoaError.Code { .init(rawValue: NSSQLiteError) }
    public static var inferredMappingModel: CocoaError.Code { .init(rawValue: NSInferredMappingModelError) }
    public static var externalRecordImport: CocoaError.Code { .init(rawValue: NSExternalRecordImportError) }
    public static var persistentHistoryTokenExpired: CocoaError.Code {
        .init(rawValue: NSPersistentHistoryTokenExpiredError)
    }
}

extension CocoaError {
    /// The object that failed validation, for errors in the validation range.
    public var validationObject: Any? { userInfo[NSValidationObjectErrorKey] }
    /// The property that failed validation.
    public var validationKey: String? { userInfo[NSValidationKeyErrorKey] as? String }
    /// The value that failed validation.
    public var validationValue: Any? { userInfo[NSValidationValueErrorKey] }
    /// The errors that together make up a multiple-errors error.
    public var detailedErrors: [Error]? { userInfo[NSDetailedErrorsKey] as? [Error] }
}

/// Builds a Core Data error in `NSCocoaErrorDomain`: the code, a message a person can act on, and context.
///
/// A store's URL may carry a password (a PostgreSQL store's, in its user part or as a `password` query item), and
/// errors are what programs log: the password is replaced by `***` in the message and in every URL of `userInfo`.
func coreDataError(_ code: Int, _ message: String, userInfo extra: [String: Any] = [:]) -> NSError {
    var info = extra
    for (key, value) in extra {
        if let url = value as? URL { info[key] = CredentialRedaction.redacting(url) }
    }
    info[NSLocalizedDescriptionKey] = CredentialRedaction.redacting(message)
    return NSError(domain: NSCocoaErrorDomain, code: code, userInfo: info)
}

/// Keeps passwords that URLs carry out of messages.
enum CredentialRedaction {
    /// `url` with its password, if it has one, replaced by `***`.
    static func redacting(_ url: URL) -> URL {
        guard url.scheme != "file", var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return url
        }
        var changed = false
        if components.password != nil {
            components.password = "***"
            changed = true
        }
        if let items = components.queryItems, items.contains(where: { $0.name.lowercased() == "password" }) {
            components.queryItems = items.map { item in
                item.name.lowercased() == "password" ? URLQueryItem(name: item.name, value: "***") : item
            }
            changed = true
        }
        return changed ? components.url ?? url : url
    }

    /// `text` with the password of every URL in it (`scheme://user:password@…`, `password=…`) replaced by `***`.
    static func redacting(_ text: String) -> String {
        guard text.contains("://") else { return text }
        var result = text.replacing(/(?<prefix>[A-Za-z][A-Za-z0-9+.\-]*:\/\/[^\s:\/@]*):[^\s@\/]*@/) { match in
            "\(match.output.prefix):***@"
        }
        result = result.replacing(/(?<key>[?&][Pp][Aa][Ss][Ss][Ww][Oo][Rr][Dd]=)[^&\s]*/) { match in
            "\(match.output.key)***"
        }
        return result
    }
}
