extension NSManagedObjectModel {
    /// The model's fetch request templates, by name.
    public var fetchRequestTemplatesByName: [String: NSFetchRequest<NSFetchRequestResult>] {
        _fetchRequestTemplates
    }

    /// The fetch request template named `name`, or `nil`.
    ///
    /// ```swift
    /// let request = model.fetchRequestTemplate(forName: "RecentEvents")
    /// ```
    public func fetchRequestTemplate(forName name: String) -> NSFetchRequest<NSFetchRequestResult>? {
        _fetchRequestTemplates[name]
    }

    /// A copy of the template named `name` whose predicate has `variables` substituted for its `$` variables, or
    /// `nil` if there is no such template.
    ///
    /// ```swift
    /// let request = model.fetchRequestFromTemplate(withName: "ByName", substitutionVariables: ["NAME": "Ada"])
    /// ```
    public func fetchRequestFromTemplate(withName name: String, substitutionVariables variables: [String: Any])
        -> NSFetchRequest<NSFetchRequestResult>?
    {
        guard let template = _fetchRequestTemplates[name],
            let request = template.copy() as? NSFetchRequest<NSFetchRequestResult>
        else { return nil }
        request.predicate = template.predicate?.withSubstitutionVariables(variables)
        return request
    }

    /// Stores `fetchRequestTemplate` under `name`, or removes the template named `name` when `nil`.
    ///
    /// - Precondition: the model is editable (no coordinator uses it yet).
    public func setFetchRequestTemplate(
        _ fetchRequestTemplate: NSFetchRequest<NSFetchRequestResult>?, forName name: String
    ) {
        _checkEditable("fetchRequestTemplates")
        _fetchRequestTemplates[name] = fetchRequestTemplate
    }
}
