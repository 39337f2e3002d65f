import Synchronization

/// Finds the `NSEntityMigrationPolicy` subclass an entity mapping names — what Apple's framework does with
/// `NSClassFromString`: a registered class, else the module-qualified name through the Swift runtime, else the
/// unqualified name among the classes of every loaded Swift image (Xcode writes the app's module name, which a
/// port's module rarely shares).
enum MigrationPolicyClassRegistry {
    private struct State {
        var registered: [String: NSEntityMigrationPolicy.Type] = [:]
        var resolved: [String: NSEntityMigrationPolicy.Type] = [:]
        var imageIndex: [String: [String]]?
    }

    private static let state = LockedState(State())

    static func register(_ policyClass: NSEntityMigrationPolicy.Type) {
        state.withLock { state in
            state.registered[String(reflecting: policyClass)] = policyClass
            state.registered[String(describing: policyClass)] = policyClass
        }
    }

    /// The class named `name`, or `nil` if no loaded class has that name or it is not a policy.
    static func policyClass(named name: String) -> NSEntityMigrationPolicy.Type? {
        let trimmed = name.hasPrefix(".") ? String(name.dropFirst()) : name
        if trimmed.isEmpty || trimmed == "NSEntityMigrationPolicy" { return NSEntityMigrationPolicy.self }
        if let known = state.withLock({ $0.registered[trimmed] ?? $0.resolved[trimmed] }) { return known }
        let shortName = trimmed.split(separator: ".").last.map(String.init) ?? trimmed
        var found: NSEntityMigrationPolicy.Type?
        if trimmed.contains("."), let type = _typeByName(trimmed) as? NSEntityMigrationPolicy.Type {
            found = type
        } else if let registered = state.withLock({ $0.registered[shortName] }) {
            found = registered
        } else {
            let index = state.withLock { $0.imageIndex } ?? SwiftImageClassIndex.build()
            state.withLock { $0.imageIndex = index }
            found =
                (index[shortName] ?? []).lazy.compactMap { _typeByName($0) as? NSEntityMigrationPolicy.Type }
                .first
        }
        if let found { state.withLock { $0.resolved[trimmed] = found } }
        return found
    }
}
