import Foundation

/// Following the context's changes: what a fetched results controller does between fetches. Each change event moves
/// the changed objects to where their new sort keys put them and reports the moves to the delegate, as sections and
/// index paths or as one difference.
extension FetchedResultsEngine {
    /// Whether the delegate declined the difference (its default implementation ran).
    static let declinedDifference = ThreadLocalPointer()
    /// Per delegate class: whether it implements `controller(_:didChangeContentWith:)`.
    static let differenceDelegates = LockedState<[ObjectIdentifier: Bool]>([:])

    static func noteDifferenceIgnored() {
        declinedDifference.value = UnsafeMutableRawPointer(bitPattern: 1)
    }

    /// Where an object was or is: its position in the results, and how many results that stayed through the change
    /// come before it.
    typealias Place = (index: Int, rank: Int)

    func contextDidChange(_ note: Notification) {
        guard let delegate, let request, let entity, results != nil,
            request.resultType == .managedObjectResultType
        else { return }
        let info = note.userInfo ?? [:]
        if info[NSInvalidatedAllObjectsKey] != nil
            || !(info[NSInvalidatedObjectsKey] as? Set<NSManagedObject> ?? []).isEmpty
        {
            // The context was reset: its objects are gone, and the results are fetched anew.
            refetch(updatedIDs: [], delegate: delegate)
            return
        }
        func concerns(_ object: NSManagedObject) -> Bool {
            request.includesSubentities ? object._entity.isKindOf(entity: entity) : object._entity === entity
        }
        var changed: [NSManagedObject] = []
        var changedIDs = Set<ObjectIdentifier>()
        var updatedIDs = Set<ObjectIdentifier>()
        for key in [NSInsertedObjectsKey, NSUpdatedObjectsKey, NSRefreshedObjectsKey, NSDeletedObjectsKey] {
            for object in info[key] as? Set<NSManagedObject> ?? [] where concerns(object) {
                if key == NSUpdatedObjectsKey || key == NSRefreshedObjectsKey {
                    updatedIDs.insert(ObjectIdentifier(object))
                }
                if changedIDs.insert(ObjectIdentifier(object)).inserted { changed.append(object) }
            }
        }
        guard !changed.isEmpty else { return }
        if request.fetchLimit > 0 {
            // Which objects a limit lets in depends on objects outside the results: the store knows.
            refetch(updatedIDs: updatedIDs, delegate: delegate)
            return
        }
        apply(changed: changed, updatedIDs: updatedIDs, delegate: delegate)
    }

    /// Takes the changed objects out of the results and puts back those that still belong where their sort keys
    /// say, adjusting the sections, then reports the difference.
    func apply(
        changed: [NSManagedObject], updatedIDs: Set<ObjectIdentifier>, delegate: NSFetchedResultsControllerDelegate
    ) {
        guard let request, results != nil else { return }
        keepSortKeys()
        let descriptors = request.sortDescriptors ?? []
        // (The old results are not kept: holding them would copy the array at the first change below.)
        let oldIDs = sectionNameKeyPath == nil && offersDifference(delegate) ? objectIDs() : nil
        let oldSections = sectionList
        let oldSpans = sectionList.map(\.span)
        let sectioned = sectionNameKeyPath != nil

        // 1. Where the changed objects that were results are.
        var present: [(index: Int, object: NSManagedObject)] = []
        for object in changed {
            if let keys = keysByObject[ObjectIdentifier(object)], let index = locate(object, keys: keys) {
                present.append((index, object))
            }
        }
        present.sort { $0.index < $1.index }
        var before: [ObjectIdentifier: Place] = [:]
        for (order, entry) in present.enumerated() {
            before[ObjectIdentifier(entry.object)] = (entry.index, entry.index - order)
        }

        // 2. Out with them. A section that loses all its objects keeps them, for the delegate.
        var leaving: [ObjectIdentifier: Int] = [:]
        for entry in present {
            leaving[ObjectIdentifier(sectionList[sectionIndex(containing: entry.index)]), default: 0] += 1
        }
        for section in sectionList where leaving[ObjectIdentifier(section)] == section.numberOfObjects && sectioned {
            section.frozen = Array(results![section.start..<(section.start + section.numberOfObjects)])
        }
        for entry in present.reversed() {
            let sectionIndex = sectionIndex(containing: entry.index)
            results!.remove(at: entry.index)
            sortKeys!.remove(at: entry.index)
            if sectioned { sectionNames.remove(at: entry.index) }
            keysByObject[ObjectIdentifier(entry.object)] = nil
            sectionList[sectionIndex].numberOfObjects -= 1
            shiftSections(after: sectionIndex, by: -1)
        }
        // (Sections left empty stay until the changed objects are back: one of them may return to its section.)

        // 3. In with those that belong, in sort order, each after the results that do not sort after it.
        let predicate = request.predicate
        var arriving: [(object: NSManagedObject, keys: [Any?], name: String)] = []
        for object in changed where !object.isDeleted && object.managedObjectContext === context {
            if let predicate, !predicate.evaluate(with: object) { continue }
            arriving.append(
                (
                    object, descriptors.map { $0.value(of: object) },
                    sectionNameKeyPath.map { Self.sectionName(of: object, keyPath: $0) } ?? ""
                ))
        }
        arriving = arriving.enumerated().sorted { a, b in
            ascending(a.element.keys, b.element.keys)
                || (!ascending(b.element.keys, a.element.keys) && a.offset < b.offset)
        }.map(\.element)
        var after: [ObjectIdentifier: Place] = [:]
        for (order, entry) in arriving.enumerated() {
            let index = insertionIndex(for: entry.keys)
            results!.insert(entry.object, at: index)
            sortKeys!.insert(entry.keys, at: index)
            keysByObject[ObjectIdentifier(entry.object)] = entry.keys
            after[ObjectIdentifier(entry.object)] = (index, index - order)
            if sectioned {
                sectionNames.insert(entry.name, at: index)
                place(at: index, name: entry.name)
            } else {
                sectionList[0].numberOfObjects += 1
            }
        }
        if sectioned {
            sectionList.removeAll { $0.numberOfObjects == 0 }
            for section in sectionList { section.frozen = nil }
        }
        version += 1

        report(
            oldIDs: oldIDs, oldSections: oldSections, oldSpans: oldSpans, changed: changed, before: before,
            after: after, updatedIDs: updatedIDs, delegate: delegate)
    }

    /// The IDs of the results, for a difference.
    func objectIDs() -> [NSManagedObjectID] {
        (results ?? []).compactMap { ($0 as? NSManagedObject)?.objectID }
    }

    /// Counts the result just inserted at `index` (named `name`) into its section: the one of the neighbour with the
    /// same name, a section of that name that this change left empty at that place, or a new one. (Empty sections
    /// start where the next one does, so the section holding a position is the last one that starts at or before it.)
    func place(at index: Int, name: String) {
        let total = sectionNames.count
        if index > 0, sectionNames[index - 1] == name {
            let section = sectionIndex(containing: index - 1)
            sectionList[section].numberOfObjects += 1
            shiftSections(after: section, by: 1)
            return
        }
        // The sections do not count the new result yet: position `index` is still the next result's.
        let next = index < total - 1 ? sectionIndex(containing: index) : sectionList.count
        if index + 1 < total, sectionNames[index + 1] == name, next < sectionList.count {
            sectionList[next].numberOfObjects += 1
            shiftSections(after: next, by: 1)
            return
        }
        var empty = next - 1
        if next < sectionList.count, sectionList[next].start == index, sectionList[next].numberOfObjects == 0 {
            empty = next
        }
        while empty >= 0, sectionList[empty].numberOfObjects == 0, sectionList[empty].start == index {
            if sectionList[empty].name == name {
                sectionList[empty].numberOfObjects = 1
                shiftSections(after: empty, by: 1)
                return
            }
            empty -= 1
        }
        var position = next
        if next < sectionList.count, sectionList[next].start < index {
            // Inside another section (a sort that does not keep sections together): split it around the result.
            let split = sectionList[next]
            let tail = FetchedResultsSection(name: split.name, indexTitle: split.indexTitle, engine: self)
            tail.start = index
            tail.numberOfObjects = split.start + split.numberOfObjects - index
            split.numberOfObjects = index - split.start
            sectionList.insert(tail, at: next + 1)
            position = next + 1
        }
        let section = FetchedResultsSection(name: name, indexTitle: indexTitle(forSectionName: name), engine: self)
        section.start = index
        section.numberOfObjects = 1
        sectionList.insert(section, at: position)
        shiftSections(after: position, by: 1)
    }

    /// Fetches the results again and reports the difference, comparing every object's place before and after:
    /// after a reset of the context (whose objects are then all new), and for requests with a fetch limit.
    func refetch(updatedIDs: Set<ObjectIdentifier>, delegate: NSFetchedResultsControllerDelegate) {
        guard let request, let old = results else { return }
        let oldIDs = sectionNameKeyPath == nil && offersDifference(delegate) ? objectIDs() : nil
        let oldSections = sectionList
        let oldSpans = sectionList.map(\.span)
        do {
            try performFetch(request)
        } catch {
            return
        }
        let kept = Set(sectionList.map(ObjectIdentifier.init))
        for section in oldSections where !kept.contains(ObjectIdentifier(section)) {
            section.frozen = Array(old[section.start..<(section.start + section.numberOfObjects)])
        }
        let new = results ?? []
        var before: [ObjectIdentifier: Place] = [:]
        for (index, object) in old.enumerated() { before[ObjectIdentifier(object)] = (index, 0) }
        var after: [ObjectIdentifier: Place] = [:]
        for (index, object) in new.enumerated() { after[ObjectIdentifier(object)] = (index, 0) }
        var seen = Set<ObjectIdentifier>()
        let changed = (old + new).compactMap { $0 as? NSManagedObject }.filter {
            seen.insert(ObjectIdentifier($0)).inserted
        }
        report(
            oldIDs: oldIDs, oldSections: oldSections, oldSpans: oldSpans, changed: changed, before: before,
            after: after, updatedIDs: updatedIDs, delegate: delegate)
    }

    /// Tells the delegate how the results changed: as a difference of object IDs if it takes one (and there are no
    /// sections), else section by section and object by object.
    func report(
        oldIDs: [NSManagedObjectID]?, oldSections: [FetchedResultsSection], oldSpans: [FetchedResultsSection.Span],
        changed: [NSManagedObject], before: [ObjectIdentifier: Place], after: [ObjectIdentifier: Place],
        updatedIDs: Set<ObjectIdentifier>, delegate: NSFetchedResultsControllerDelegate
    ) {
        let newSpans = sectionList.map(\.span)

        // Objects: deleted at their old place, inserted at their new one; of the others, those whose place among
        // the results that stayed (or among each other) changed moved, the rest were updated.
        var deletions: [(object: NSManagedObject, path: IndexPath)] = []
        var insertions: [(object: NSManagedObject, path: IndexPath)] = []
        var moves: [(object: NSManagedObject, from: IndexPath, to: IndexPath)] = []
        var updates: [(object: NSManagedObject, from: IndexPath, to: IndexPath)] = []
        var kept: [(object: NSManagedObject, from: Int, to: Int, rank: Int)] = []
        for object in changed {
            let key = ObjectIdentifier(object)
            switch (before[key], after[key]) {
            case (let from?, nil):
                deletions.append((object, indexPath(ofResultAt: from.index, in: oldSpans)))
            case (nil, let to?):
                insertions.append((object, indexPath(ofResultAt: to.index, in: newSpans)))
            case (let from?, let to?):
                let fromPath = indexPath(ofResultAt: from.index, in: oldSpans)
                let toPath = indexPath(ofResultAt: to.index, in: newSpans)
                if from.rank != to.rank || oldSections[fromPath[0]] !== sectionList[toPath[0]] {
                    moves.append((object, fromPath, toPath))
                } else {
                    kept.append((object, from.index, to.index, from.rank))
                }
            case (nil, nil):
                continue
            }
        }
        // Changed objects between the same neighbours that stayed: those out of their old order moved (all but a
        // longest run that kept it).
        for group in Dictionary(grouping: kept, by: \.rank).values {
            let ordered = group.sorted { $0.from < $1.from }
            let stable = Self.longestIncreasingRun(ordered.map(\.to))
            for (position, entry) in ordered.enumerated() {
                let from = indexPath(ofResultAt: entry.from, in: oldSpans)
                let to = indexPath(ofResultAt: entry.to, in: newSpans)
                if !stable.contains(position) {
                    moves.append((entry.object, from, to))
                } else if updatedIDs.contains(ObjectIdentifier(entry.object)) {
                    updates.append((entry.object, from, to))
                }
            }
        }
        let oldIdentities = Set(oldSections.map(ObjectIdentifier.init))
        let newIdentities = Set(sectionList.map(ObjectIdentifier.init))
        let deletedSections = oldSections.enumerated().filter { !newIdentities.contains(ObjectIdentifier($0.element)) }
        let insertedSections = sectionList.enumerated().filter { !oldIdentities.contains(ObjectIdentifier($0.element)) }
        guard
            !deletions.isEmpty || !insertions.isEmpty || !moves.isEmpty || !updates.isEmpty
                || !deletedSections.isEmpty || !insertedSections.isEmpty
        else { return }

        let controller = untypedController()
        if let oldIDs {
            let difference = objectIDs().difference(from: oldIDs).inferringMoves()
            Self.declinedDifference.value = nil
            delegate.controller(controller, didChangeContentWith: difference)
            let declined = Self.declinedDifference.value != nil
            Self.declinedDifference.value = nil
            Self.differenceDelegates.withLock { $0[ObjectIdentifier(type(of: delegate))] = !declined }
            if !declined { return }
        }
        delegate.controllerWillChangeContent(controller)
        for (index, section) in deletedSections.reversed() {
            delegate.controller(controller, didChange: section, atSectionIndex: index, for: .delete)
        }
        for (index, section) in insertedSections {
            delegate.controller(controller, didChange: section, atSectionIndex: index, for: .insert)
        }
        for change in deletions.sorted(by: { $0.path > $1.path }) {
            delegate.controller(controller, didChange: change.object, at: change.path, for: .delete, newIndexPath: nil)
        }
        for change in insertions.sorted(by: { $0.path < $1.path }) {
            delegate.controller(controller, didChange: change.object, at: nil, for: .insert, newIndexPath: change.path)
        }
        for change in moves.sorted(by: { $0.to < $1.to }) {
            delegate.controller(
                controller, didChange: change.object, at: change.from, for: .move, newIndexPath: change.to)
        }
        for change in updates.sorted(by: { $0.from < $1.from }) {
            delegate.controller(
                controller, didChange: change.object, at: change.from, for: .update, newIndexPath: change.to)
        }
        delegate.controllerDidChangeContent(controller)
    }

    /// Whether `delegate` may implement `controller(_:didChangeContentWith:)`: unknown until its class has been
    /// asked once (its default implementation tells).
    func offersDifference(_ delegate: NSFetchedResultsControllerDelegate) -> Bool {
        Self.differenceDelegates.withLock { $0[ObjectIdentifier(type(of: delegate))] } ?? true
    }

    /// The positions of a longest strictly increasing subsequence of `values`.
    static func longestIncreasingRun(_ values: [Int]) -> Set<Int> {
        guard values.count > 1 else { return Set(values.indices) }
        var tails: [Int] = []
        var previous = [Int](repeating: -1, count: values.count)
        for (position, value) in values.enumerated() {
            var low = 0
            var high = tails.count
            while low < high {
                let middle = (low + high) / 2
                if values[tails[middle]] < value { low = middle + 1 } else { high = middle }
            }
            if low > 0 { previous[position] = tails[low - 1] }
            if low == tails.count { tails.append(position) } else { tails[low] = position }
        }
        var result = Set<Int>()
        var position = tails.last ?? -1
        while position >= 0 {
            result.insert(position)
            position = previous[position]
        }
        return result
    }
}
