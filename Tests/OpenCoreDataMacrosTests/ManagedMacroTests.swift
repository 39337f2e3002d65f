import OpenCoreDataMacros
import SwiftSyntaxMacros
import SwiftSyntaxMacrosTestSupport
import XCTest

private let macros: [String: Macro.Type] = [
    "Managed": ManagedMacro.self,
    "ManagedAccessor": ManagedAccessorMacro.self,
]

final class ManagedMacroTests: XCTestCase {
    func testPropertyBecomesStorageAccessors() {
        assertMacroExpansion(
            """
            class Employee: NSManagedObject {
                @Managed public var firstName: String?
            }
            """,
            expandedSource: """
                class Employee: NSManagedObject {
                    public var firstName: String? {
                        get {
                            _managedValue(forKey: "firstName")
                        }
                        set {
                            _setManagedValue(newValue, forKey: "firstName")
                        }
                    }
                }
                """,
            macros: macros
        )
    }

    func testPropertyWithInitialValueIsRejected() {
        assertMacroExpansion(
            "@Managed var age: Int16 = 3",
            expandedSource: "var age: Int16 = 3",
            diagnostics: [
                DiagnosticSpec(
                    message:
                        "a @Managed property has no initial value; give the attribute a default value in the model instead",
                    line: 1, column: 1)
            ],
            macros: macros
        )
    }

    func testLetIsRejected() {
        assertMacroExpansion(
            "@Managed let age: Int16",
            expandedSource: "let age: Int16",
            diagnostics: [
                DiagnosticSpec(message: "@Managed applies to a `var`, as @NSManaged does", line: 1, column: 1)
            ],
            macros: macros
        )
    }

    func testUnorderedAccessors() {
        assertMacroExpansion(
            """
            @ManagedAccessor public func addToEmployees(_ value: Employee)
            @ManagedAccessor public func removeFromEmployees(_ values: NSSet)
            """,
            expandedSource: """
                public func addToEmployees(_ value: Employee) {
                    _performToManyAccessor(.addObject, relationship: "Employees", value: value, index: nil)
                }
                public func removeFromEmployees(_ values: NSSet) {
                    _performToManyAccessor(.removeObjects, relationship: "Employees", value: values, index: nil)
                }
                """,
            macros: macros
        )
    }

    func testOrderedAccessors() {
        assertMacroExpansion(
            """
            @ManagedAccessor public func insertIntoPages(_ value: Page, at idx: Int)
            @ManagedAccessor public func removeFromPages(at indexes: NSIndexSet)
            @ManagedAccessor public func replacePages(at idx: Int, with value: Page)
            """,
            expandedSource: """
                public func insertIntoPages(_ value: Page, at idx: Int) {
                    _performToManyAccessor(.insertObjectAtIndex, relationship: "Pages", value: value, index: idx)
                }
                public func removeFromPages(at indexes: NSIndexSet) {
                    _performToManyAccessor(.removeObjectsAtIndexes, relationship: "Pages", value: nil, index: indexes)
                }
                public func replacePages(at idx: Int, with value: Page) {
                    _performToManyAccessor(.replaceObjectAtIndex, relationship: "Pages", value: value, index: idx)
                }
                """,
            macros: macros
        )
    }

    func testUnknownAccessorNameIsRejected() {
        assertMacroExpansion(
            "@ManagedAccessor func frobnicate(_ value: Int)",
            expandedSource: "func frobnicate(_ value: Int)",
            diagnostics: [
                DiagnosticSpec(
                    message: """
                        @ManagedAccessor does not recognise 'frobnicate': expected one of addToX(_:), removeFromX(_:), \
                        removeFromX(at:), insertIntoX(_:at:), replaceX(at:with:), as Xcode generates them
                        """,
                    line: 1, column: 1)
            ],
            macros: macros
        )
    }
}
