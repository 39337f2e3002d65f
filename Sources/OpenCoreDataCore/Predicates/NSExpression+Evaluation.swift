// Evaluating expressions against an object. Key paths were split when the expression was made, so evaluating one
// against many objects only reads values; constants are returned as they are.

extension NSExpression {
    /// Evaluates the expression against `object`, with `context` holding variable bindings (and receiving the
    /// variables that `SUBQUERY` and `:=` bind).
    ///
    /// ```swift
    /// NSExpression(format: "salary * 2").expressionValue(with: ["salary": 10], context: nil)  // 20
    /// ```
    public func expressionValue(with object: Any?, context: NSMutableDictionary?) -> Any? {
        var variables: [String: Any] = [:]
        if let context {
            for case (let key as String, let value) in context { variables[key] = value }
        }
        return value(object, in: PredicateScope(variables: variables, context: context))
    }

    /// Enables evaluation of an expression decoded from an archive. Expressions decoded here carry no disabled
    /// state, so this does nothing; it exists for source compatibility with Apple platforms.
    public func allowEvaluation() {}

    /// The value of the expression for `object`.
    func value(_ object: Any?, in scope: PredicateScope) -> Any? {
        if let simpleKey {
            return scope.value(of: object, forKey: simpleKey)
        }
        switch kind {
        case .constant(let value):
            return value
        case .evaluatedObject:
            return object
        case .variable(let name):
            return PredicateValueComparison.unwrap(scope.value(of: name))
        case .keyPath(_, let components, let operand):
            let base = operand.map { $0.value(object, in: scope) } ?? object
            if components.count > 1, operand == nil, !components.contains(where: { $0.hasPrefix("@") }) {
                var current = base
                for key in components {
                    current = scope.value(of: current, forKey: key)
                    if current == nil { return nil }
                }
                return current
            }
            return KeyValueCodingPath.value(of: base, components: components[...])
        case .function(let name, let target, let arguments):
            if let target {
                let receiver = target.value(object, in: scope)
                let values = arguments.map { $0.value(object, in: scope) }
                return PredicateFunctionDispatch.call(name, on: receiver, arguments: values)
            }
            return PredicateBuiltinFunctions.evaluate(name, arguments: arguments, object: object, scope: scope)
        case .unionSet(let left, let right):
            return setOperation(left, right, object, scope) { $0.union($1) }
        case .intersectSet(let left, let right):
            return setOperation(left, right, object, scope) { $0.intersection($1) }
        case .minusSet(let left, let right):
            return setOperation(left, right, object, scope) { $0.subtracting($1) }
        case .subquery(let collection, let variable, let predicate):
            guard let source = collection.value(object, in: scope),
                let elements = PredicateValueComparison.elements(source)
            else { return [Any]() }
            let saved = scope.variables[variable]
            defer { scope.variables[variable] = saved }
            var matching: [Any] = []
            for element in elements {
                scope.variables[variable] = element
                if predicate.evaluateChild(element, in: scope) { matching.append(element) }
            }
            return matching
        case .aggregate(let expressions):
            if let constantAggregate { return constantAggregate }
            return expressions.map { $0.value(object, in: scope) ?? NSNull() }
        case .anyKey:
            let message = "ANYKEY expressions are for Spotlight queries and cannot be evaluated"
            if PredicateFunctionDispatch.report(message) { return nil }
            preconditionFailure(message)
        case .block(let block, let arguments):
            return block(object, arguments ?? [], scope.context)
        case .conditional(let predicate, let whenTrue, let whenFalse):
            return predicate.evaluateChild(object, in: scope)
                ? whenTrue.value(object, in: scope) : whenFalse.value(object, in: scope)
        case .assignment(let name, let expression):
            let value = expression.value(object, in: scope)
            scope.bind(name, to: value)
            return value
        case .symbolicIndex(let index):
            return index.rawValue
        case .fetch(let request, let context, let countOnly):
            let requestValue = request.value(object, in: scope)
            guard
                let executor = PredicateValueComparison.unwrap(context.value(object, in: scope))
                    as? any PredicateFetchExecuting
            else {
                let message =
                    "FETCH: \(context.expressionFormat) is not a managed object context; FETCH needs one to execute "
                    + "\(request.expressionFormat)"
                if PredicateFunctionDispatch.report(message) { return nil }
                preconditionFailure(message)
            }
            return executor.executeFetchExpression(requestValue, countOnly: countOnly)
        }
    }

    private func setOperation(
        _ left: NSExpression,
        _ right: NSExpression,
        _ object: Any?,
        _ scope: PredicateScope,
        _ combine: (Set<AnyHashable>, Set<AnyHashable>) -> Set<AnyHashable>
    ) -> Any? {
        let lhs = PredicateValueComparison.elements(left.value(object, in: scope)) ?? []
        let rhs = PredicateValueComparison.elements(right.value(object, in: scope)) ?? []
        return combine(
            Set(lhs.map(KeyValueCodingHashing.hashable)), Set(rhs.map(KeyValueCodingHashing.hashable)))
    }

    /// Returns a copy with `$variables` replaced by constant expressions for the values in `variables`.
    func substituting(_ variables: [String: Any]) -> NSExpression {
        func sub(_ expression: NSExpression) -> NSExpression { expression.substituting(variables) }
        switch kind {
        case .variable(let name):
            guard let value = variables[name] else { return self }
            return value as? NSExpression ?? NSExpression(forConstantValue: value)
        case .constant, .evaluatedObject, .anyKey, .symbolicIndex:
            return self
        case .keyPath(let path, let components, let operand):
            guard let operand else { return self }
            return NSExpression(kind: .keyPath(path, components: components, operand: sub(operand)))
        case .function(let name, let target, let arguments):
            return NSExpression(kind: .function(name, target: target.map(sub), arguments: arguments.map(sub)))
        case .unionSet(let left, let right):
            return NSExpression(kind: .unionSet(sub(left), sub(right)))
        case .intersectSet(let left, let right):
            return NSExpression(kind: .intersectSet(sub(left), sub(right)))
        case .minusSet(let left, let right):
            return NSExpression(kind: .minusSet(sub(left), sub(right)))
        case .subquery(let collection, let variable, let predicate):
            var inner = variables
            inner[variable] = nil
            return NSExpression(
                kind: .subquery(sub(collection), variable: variable, predicate: predicate.substituting(inner)))
        case .aggregate(let expressions):
            return NSExpression(kind: .aggregate(expressions.map(sub)))
        case .block(let block, let arguments):
            return NSExpression(kind: .block(block, arguments: arguments?.map(sub)))
        case .conditional(let predicate, let whenTrue, let whenFalse):
            return NSExpression(kind: .conditional(predicate.substituting(variables), sub(whenTrue), sub(whenFalse)))
        case .assignment(let name, let expression):
            return NSExpression(kind: .assignment(name, sub(expression)))
        case .fetch(let request, let context, let countOnly):
            return NSFetchRequestExpression(kind: .fetch(sub(request), context: sub(context), countOnly: countOnly))
        }
    }
}
