import Foundation
import Testing

@testable import OpenCoreDataCore

/// How a save finds out whether a class overrides the per-key validation hook (an internal question, so these tests
/// are OpenCoreData's own; `ValidationTests` checks that the hook runs where it must). A wrong "no" would skip a
/// class's validation, so every way of inheriting or overriding the hook is asked about.
@Suite struct ValidationHookOverridesTests {
    @Test func theHooksEntryIsFoundOnLinux() {
        #if os(Linux) && (arch(x86_64) || arch(arm64))
        #expect(ValidationHookOverrides.tableEntry != nil, "without it every save boxes every value for the hook")
        #endif
    }

    @Test func classesThatLeaveTheHookAloneDoNotCallIt() throws {
        try #require(ValidationHookOverrides.tableEntry != nil)
        #expect(!ValidationHookOverrides.overridesHook(NSManagedObject.self))
        #expect(!ValidationHookOverrides.overridesHook(PlainRecord.self))
        #expect(!ValidationHookOverrides.overridesHook(RecordWithOtherOverrides.self))
        #expect(!ValidationHookOverrides.overridesHook(GenericRecord<String>.self))
    }

    @Test func classesThatOverrideOrInheritTheHookCallIt() {
        #expect(ValidationHookOverrides.overridesHook(ValidatingRecord.self))
        #expect(ValidationHookOverrides.overridesHook(InheritingRecord.self))
        #expect(ValidationHookOverrides.overridesHook(OverridingAgainRecord.self))
        #expect(ValidationHookOverrides.overridesHook(ValidatingGenericRecord<Int>.self))
        #expect(ValidationHookOverrides.overridesHook(RecordWithOtherOverridesThenHook.self))
    }
}

private class PlainRecord: NSManagedObject {}

private class RecordWithOtherOverrides: NSManagedObject {
    var note = ""
    override func willSave() { note = "saving" }
    override func validateForInsert() throws { try super.validateForInsert() }
    func extra() -> Int { 1 }
}

private final class RecordWithOtherOverridesThenHook: RecordWithOtherOverrides {
    override func validate(value: inout Any?, forKey key: String) throws {}
}

private class GenericRecord<Tag>: NSManagedObject {
    var tag: Tag?
}

private final class ValidatingGenericRecord<Tag>: GenericRecord<Tag> {
    override func validate(value: inout Any?, forKey key: String) throws {}
}

private class ValidatingRecord: NSManagedObject {
    override func validate(value: inout Any?, forKey key: String) throws {
        try super.validate(value: &value, forKey: key)
    }
}

private class InheritingRecord: ValidatingRecord {}

private final class OverridingAgainRecord: InheritingRecord {
    override func validate(value: inout Any?, forKey key: String) throws {}
}
