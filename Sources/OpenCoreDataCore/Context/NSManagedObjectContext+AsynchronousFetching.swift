/// Asynchronous fetches: started by `execute(_:)`, run in a block of their own on the context's queue.
protocol AsynchronousFetchStarting {
    func _start(in context: NSManagedObjectContext) -> NSPersistentStoreResult
}

extension NSAsynchronousFetchRequest: AsynchronousFetchStarting {
    func _start(in context: NSManagedObjectContext) -> NSPersistentStoreResult {
        precondition(
            context.concurrencyType != .confinementConcurrencyType,
            """
            NSAsynchronousFetchRequest can only be used with a context of private or main queue concurrency type \
            (context \(context._debugName))
            """)
        // A child of the progress that is current now, if any.
        let progress = Progress(totalUnitCount: Int64(max(estimatedResultCount, 1)))
        let result = NSAsynchronousFetchResult(request: self, context: context, progress: progress)
        let work = UncheckedSendable((self, result))
        context.perform {
            let (request, result) = work.value
            context._runAsynchronousFetch(request, result: result)
        }
        return result
    }
}

extension NSManagedObjectContext {
    /// How many objects an asynchronous fetch loads between two looks at cancellation.
    static let _asynchronousBatchSize = 250

    func _runAsynchronousFetch<ResultType>(
        _ asynchronous: NSAsynchronousFetchRequest<ResultType>, result: NSAsynchronousFetchResult<ResultType>
    ) {
        let progress = result._progress
        defer { asynchronous._completionBlock?(result) }
        func cancelled() -> Bool {
            guard progress?.isCancelled == true else { return false }
            result._operationError = CocoaError(.userCancelled)
            return true
        }
        guard !cancelled() else { return }
        let request = asynchronous._fetchRequest._untyped
        do {
            guard request.resultType == .managedObjectResultType else {
                let results = try fetch(asynchronous._fetchRequest)
                progress?.totalUnitCount = Int64(results.count)
                progress?.completedUnitCount = Int64(results.count)
                result._finalResult = results
                return
            }
            // The IDs first (which tells the progress how many), then the objects' values a batch at a time.
            let idRequest = request.copy() as! NSFetchRequest<NSFetchRequestResult>
            idRequest.resultType = .managedObjectIDResultType
            let ids = try _execute(idRequest).map { $0 as! NSManagedObjectID }
            progress?.totalUnitCount = Int64(ids.count)
            var objects: [ResultType] = []
            objects.reserveCapacity(ids.count)
            var start = 0
            while start < ids.count {
                guard !cancelled() else { return }
                let batch = Array(ids[start..<min(start + Self._asynchronousBatchSize, ids.count)])
                let values = NSFetchRequest<NSFetchRequestResult>()
                values.entity = request.entity ?? _resolveEntity(request)
                values.predicate = NSComparisonPredicate(
                    leftExpression: .expressionForEvaluatedObject(),
                    rightExpression: NSExpression(forConstantValue: batch),
                    modifier: .direct, type: .in)
                values.returnsObjectsAsFaults = request.returnsObjectsAsFaults
                values.relationshipKeyPathsForPrefetching = request.relationshipKeyPathsForPrefetching
                values.affectedStores = request.affectedStores
                _ = try _execute(values)
                for id in batch {
                    guard let typed = object(with: id) as? ResultType else {
                        preconditionFailure(
                            "The asynchronous fetch of '\(request.entityName ?? "")' found a \(id.entity.name ?? "") "
                                + "object, not a \(ResultType.self)")
                    }
                    objects.append(typed)
                }
                start += batch.count
                progress?.completedUnitCount = Int64(start)
            }
            result._finalResult = objects
        } catch {
            result._operationError = error
        }
    }
}
