import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@Managed var name: String?` — the stand-in for `@NSManaged` on a stored property of an `NSManagedObject`
/// subclass. The property becomes a computed property whose accessors go through the object's storage, exactly
/// where Core Data's dynamically generated accessors would.
public struct ManagedMacro: AccessorMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingAccessorsOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        guard let variable = declaration.as(VariableDeclSyntax.self) else {
            throw MacroExpansionErrorMessage("@Managed applies to a property (`@Managed var name: String?`)")
        }
        guard variable.bindingSpecifier.tokenKind == .keyword(.var) else {
            throw MacroExpansionErrorMessage("@Managed applies to a `var`, as @NSManaged does")
        }
        guard variable.bindings.count == 1, let binding = variable.bindings.first,
            let identifier = binding.pattern.as(IdentifierPatternSyntax.self)
        else {
            throw MacroExpansionErrorMessage("@Managed applies to one property per declaration")
        }
        if binding.typeAnnotation == nil {
            throw MacroExpansionErrorMessage("@Managed needs a type annotation (`@Managed var name: String?`)")
        }
        if binding.initializer != nil {
            throw MacroExpansionErrorMessage(
                "a @Managed property has no initial value; give the attribute a default value in the model instead")
        }
        let isStatic = variable.modifiers.contains {
            $0.name.tokenKind == .keyword(.static) || $0.name.tokenKind == .keyword(.class)
        }
        if isStatic {
            throw MacroExpansionErrorMessage("@Managed applies to instance properties only")
        }
        let key = identifier.identifier.trimmedDescription.filter { $0 != "`" }
        return [
            "get { _managedValue(forKey: \(literal: key)) }",
            "set { _setManagedValue(newValue, forKey: \(literal: key)) }",
        ]
    }
}

/// `@ManagedAccessor func addToEmployees(_ value: Employee)` — the stand-in for `@NSManaged` on the to-many
/// accessor methods that Xcode generates (`addToX`, `removeFromX`, `insertIntoX`, `replaceX`). The body is
/// derived from the method's name and parameters, as Core Data derives it from the selector.
public struct ManagedAccessorMacro: BodyMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingBodyFor declaration: some DeclSyntaxProtocol & WithOptionalCodeBlockSyntax,
        in context: some MacroExpansionContext
    ) throws -> [CodeBlockItemSyntax] {
        guard let function = declaration.as(FunctionDeclSyntax.self) else {
            throw MacroExpansionErrorMessage("@ManagedAccessor applies to a to-many accessor method")
        }
        let accessor = try ToManyAccessor(function: function)
        return [CodeBlockItemSyntax(stringLiteral: accessor.bodyStatement)]
    }
}

/// The shape of one generated to-many accessor, recognised from its name and parameters.
struct ToManyAccessor {
    enum Operation: String {
        case addObject, addObjects, removeObject, removeObjects
        case insertObjectAtIndex, insertObjectsAtIndexes, removeObjectAtIndex, removeObjectsAtIndexes
        case replaceObjectAtIndex, replaceObjectsAtIndexes
    }

    var operation: Operation
    /// The relationship name as it appears in the method name (`Employees` in `addToEmployees`).
    var capitalizedName: String
    var valueParameter: String?
    var indexParameter: String?

    init(function: FunctionDeclSyntax) throws {
        let name = function.name.text
        let parameters = function.signature.parameterClause.parameters.map { parameter in
            (
                label: parameter.firstName.text,
                name: (parameter.secondName ?? parameter.firstName).text,
                type: parameter.type.trimmedDescription
            )
        }
        func isCollection(_ type: String) -> Bool {
            let bare = type.hasSuffix("?") ? String(type.dropLast()) : type
            return bare == "NSSet" || bare == "NSOrderedSet" || bare.hasPrefix("Set<") || bare.hasPrefix("[")
                || bare.hasPrefix("Array<")
        }
        func isIndexSet(_ type: String) -> Bool { type == "NSIndexSet" || type == "IndexSet" }

        var operation: Operation?
        var stem = ""
        var value: String?
        var index: String?
        if name.hasPrefix("addTo"), parameters.count == 1 {
            stem = String(name.dropFirst(5))
            operation = isCollection(parameters[0].type) ? .addObjects : .addObject
            value = parameters[0].name
        } else if name.hasPrefix("removeFrom"), parameters.count == 1 {
            stem = String(name.dropFirst(10))
            if parameters[0].label == "at" {
                operation = isIndexSet(parameters[0].type) ? .removeObjectsAtIndexes : .removeObjectAtIndex
                index = parameters[0].name
            } else {
                operation = isCollection(parameters[0].type) ? .removeObjects : .removeObject
                value = parameters[0].name
            }
        } else if name.hasPrefix("insertInto"), parameters.count == 2, parameters[1].label == "at" {
            stem = String(name.dropFirst(10))
            operation = isIndexSet(parameters[1].type) ? .insertObjectsAtIndexes : .insertObjectAtIndex
            value = parameters[0].name
            index = parameters[1].name
        } else if name.hasPrefix("replace"), parameters.count == 2, parameters[0].label == "at",
            parameters[1].label == "with"
        {
            stem = String(name.dropFirst(7))
            operation = isIndexSet(parameters[0].type) ? .replaceObjectsAtIndexes : .replaceObjectAtIndex
            index = parameters[0].name
            value = parameters[1].name
        }
        guard let operation, !stem.isEmpty else {
            throw MacroExpansionErrorMessage(
                """
                @ManagedAccessor does not recognise '\(name)': expected one of addToX(_:), removeFromX(_:), \
                removeFromX(at:), insertIntoX(_:at:), replaceX(at:with:), as Xcode generates them
                """)
        }
        self.operation = operation
        self.capitalizedName = stem
        self.valueParameter = value
        self.indexParameter = index
    }

    var bodyStatement: String {
        let value = valueParameter ?? "nil"
        let index = indexParameter ?? "nil"
        return """
            _performToManyAccessor(.\(operation.rawValue), relationship: "\(capitalizedName)", \
            value: \(value), index: \(index))
            """
    }
}
