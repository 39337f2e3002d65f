import Foundation

/// The key of the history token in the `userInfo` of a `.NSPersistentStoreRemoteChange` notification.
public let NSPersistentHistoryTokenKey = "historyToken"

/// A bookmark in persistent history: for each store, the number of the last transaction it covers. Keep the token
/// of the last transaction you processed (it archives with `NSKeyedArchiver`) and ask for the history after it.
///
/// ```swift
/// let request = NSPersistentHistoryChangeRequest.fetchHistory(after: lastToken)
/// let result = try context.execute(request) as? NSPersistentHistoryResult
/// let transactions = result?.result as? [NSPersistentHistoryTransaction] ?? []
/// lastToken = transactions.last?.token ?? lastToken
/// ```
///
/// A token names its stores by their identifier (`NSStoreUUID`), which stays with the file: a token outlives the
/// coordinator and the process that made it. Asking a store for history after a token that names only other stores
/// is an error.
open class NSPersistentHistoryToken: NSObject, NSCopying, NSSecureCoding, @unchecked Sendable {
    // @unchecked: `_storeTokens` is a constant.
    /// Transaction numbers by store identifier.
    let _storeTokens: [String: Int64]

    package init(storeTokens: [String: Int64]) {
        _storeTokens = storeTokens
        super.init()
    }

    public static var supportsSecureCoding: Bool { true }

    private static let storesKey = "storeIdentifiers"
    private static let numbersKey = "transactionNumbers"

    public func encode(with coder: NSCoder) {
        let stores = _storeTokens.keys.sorted()
        coder.encode(stores.map { NSString(string: $0) } as NSArray, forKey: Self.storesKey)
        coder.encode(stores.map { NSNumber(value: _storeTokens[$0]!) } as NSArray, forKey: Self.numbersKey)
    }

    public required init?(coder: NSCoder) {
        let classes: [AnyClass] = [NSArray.self, NSString.self, NSNumber.self]
        guard let stores = coder.decodeObject(of: classes, forKey: Self.storesKey) as? NSArray,
            let numbers = coder.decodeObject(of: classes, forKey: Self.numbersKey) as? NSArray,
            stores.count == numbers.count
        else { return nil }
        var tokens: [String: Int64] = [:]
        for (store, number) in zip(stores, numbers) {
            guard let identifier = (store as? NSString).map(String.init), let number = number as? NSNumber else {
                return nil
            }
            tokens[identifier] = number.int64Value
        }
        _storeTokens = tokens
        super.init()
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSPersistentHistoryToken else { return false }
        return other._storeTokens == _storeTokens
    }

    open override var hash: Int { _storeTokens.hashValue }

    open override var description: String {
        let entries = _storeTokens.keys.sorted().map { "\"\($0)\" = \(_storeTokens[$0]!);" }
        return "<NSPersistentHistoryToken - {\(entries.joined(separator: " "))}>"
    }
}
