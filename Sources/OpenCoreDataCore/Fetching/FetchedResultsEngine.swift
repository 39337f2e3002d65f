import Synchronization

/// What a fetched results controller keeps and does, apart from its result type: the results, their sections, and
/// following the context's changes.
///
/// A change event costs the changed objects' sort keys and predicate, a binary search per changed object, the moves
/// of array elements that inserting and removing them take, and a pass over the sections — not a pass over the
/// results: the sort keys of every result are kept from the first event on, by object, so that a changed object is
/// found where its old keys put it and put back where its new keys say.
final class FetchedResultsEngine: @unchecked Sendable {
    // @unchecked: used on its controller's context queue only: the controller's calls and the observer of that context's
    // change notifications, which the context posts on its own queue. The section cache table is a `LockedState`.
    let context: NSManagedObjectContext
    let sectionNameKeyPath: String?
    let cacheName: String?
    weak var delegate: NSFetchedResultsControllerDelegate?
    /// The controller the application made: its (overridable) `sectionIndexTitle(forSectionName:)`, and its fetch
    /// request, untyped.
    var primaryIndexTitle: ((String) -> String?)?
    var primaryRequest: (() -> NSFetchRequest<NSFetchRequestResult>?)?
    /// The application's controller, when it is typed for any result: delegates then receive it itself.
    weak var primaryUntyped: NSFetchedResultsController<NSFetchRequestResult>?

    /// The request of the last fetch, and its entity.
    var request: NSFetchRequest<NSFetchRequestResult>?
    var entity: NSEntityDescription?
    /// The results, in order; with sections, each result's section name.
    var results: [NSFetchRequestResult]?
    var sectionNames: [String] = []
    var sectionList: [FetchedResultsSection] = []
    /// Once changes are followed: each result's sort keys, in order and by object.
    var sortKeys: [[Any?]]?
    var keysByObject: [ObjectIdentifier: [Any?]] = [:]
    /// Grows with every change of the results, for the views' caches.
    var version = 0
    var positions: (version: Int, byObject: [ObjectIdentifier: Int])?
    var observer: NSObjectProtocol?
    /// The cache fingerprint of the last fetch.
    var fingerprint: String?

    init(context: NSManagedObjectContext, sectionNameKeyPath: String?, cacheName: String?) {
        self.context = context
        self.sectionNameKeyPath = sectionNameKeyPath
        self.cacheName = cacheName
    }

    deinit {
        if let observer { NotificationCenter.default.removeObserver(observer) }
    }

    // MARK: Caches

    /// The fingerprint of each cache name's request.
    static let caches = LockedState<[String: String]>([:])

    static func deleteCache(withName name: String?) {
        caches.withLock { caches in
            if let name { caches[name] = nil } else { caches = [:] }
        }
    }

    static func fingerprint(_ request: NSFetchRequest<NSFetchRequestResult>, sectionNameKeyPath: String?)
        -> String
    {
        [
            request.entityName ?? "", request.predicate?.predicateFormat ?? "",
            (request.sortDescriptors ?? []).map { "\($0.key ?? "") \($0.ascending) \($0.selector?.name ?? "")" }
                .joined(separator: ","),
            sectionNameKeyPath ?? "",
        ].joined(separator: "|")
    }

    // MARK: Fetching

    func performFetch(_ untyped: NSFetchRequest<NSFetchRequestResult>) throws {
        let request = untyped.copy() as! NSFetchRequest<NSFetchRequestResult>
        if let cacheName {
            let fingerprint = Self.fingerprint(request, sectionNameKeyPath: sectionNameKeyPath)
            let previous = self.fingerprint
            Self.caches.withLock { caches in
                if let previous, previous != fingerprint, caches[cacheName] == previous {
                    preconditionFailure(
                        """
                        You have illegally mutated the NSFetchedResultsController's fetch request, its predicate, or \
                        its sort descriptor without either disabling caching or using +deleteCacheWithName: (cache \
                        '\(cacheName)')
                        """)
                }
                caches[cacheName] = fingerprint
            }
            self.fingerprint = fingerprint
        }
        let fetched = try context.fetch(request)
        let names = sectionNameKeyPath.map { keyPath in fetched.map { Self.sectionName(of: $0, keyPath: keyPath) } }
        if let names {
            // A section's objects must come together: the first sort descriptor orders them by section.
            var seen = Set<String>()
            for index in names.indices where index == 0 || names[index] != names[index - 1] {
                guard seen.insert(names[index]).inserted else {
                    throw coreDataError(
                        NSCoreDataError,
                        """
                        The fetched object at index \(index) has an out of order section name '\(names[index])'. \
                        Objects must be sorted by section name: make the first sort descriptor order them by \
                        '\(sectionNameKeyPath ?? "")'
                        """)
                }
            }
        }
        self.request = request
        entity = request.entity ?? context._resolveEntity(request)
        results = fetched
        sectionNames = names ?? []
        sortKeys = nil
        keysByObject = [:]
        makeSections()
        if observer == nil {
            let engine = UncheckedSendable(self)
            observer = NotificationCenter.default.addObserver(
                forName: NSManagedObjectContext.didChangeObjectsNotification, object: context, queue: nil
            ) { [weak engine = engine.value] note in
                engine?.contextDidChange(note)
            }
        }
    }

    /// The section name of an object: its value at `keyPath`, described; `""` for none.
    static func sectionName(of object: Any, keyPath: String) -> String {
        let value = KeyValueCodingPath.value(of: object, components: KeyValueCodingPath.split(keyPath)[...])
        guard let value = PredicateValueComparison.unwrap(value) else { return "" }
        if let string = value as? String { return string }
        return "\(value)"
    }

    // MARK: Sections

    /// Divides the results into sections, keeping the section objects of names that had one.
    func makeSections() {
        version += 1
        guard let results else {
            sectionList = []
            return
        }
        var existing: [String: FetchedResultsSection] = [:]
        for section in sectionList where section.frozen == nil { existing[section.name] = section }
        func section(_ name: String, start: Int, count: Int) -> FetchedResultsSection {
            let section =
                existing.removeValue(forKey: name)
                ?? FetchedResultsSection(name: name, indexTitle: indexTitle(forSectionName: name), engine: self)
            section.start = start
            section.numberOfObjects = count
            return section
        }
        guard sectionNameKeyPath != nil else {
            // Without a section key path, the results are one section, empty or not.
            sectionList = [section("", start: 0, count: results.count)]
            return
        }
        var sections: [FetchedResultsSection] = []
        var start = 0
        while start < results.count {
            var end = start + 1
            while end < results.count, sectionNames[end] == sectionNames[start] { end += 1 }
            sections.append(section(sectionNames[start], start: start, count: end - start))
            start = end
        }
        sectionList = sections
    }

    var sections: [NSFetchedResultsSectionInfo]? {
        results == nil ? nil : sectionList
    }

    /// The index of the section that holds position `index` of the results.
    func sectionIndex(containing index: Int) -> Int {
        var low = 0
        var high = sectionList.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if sectionList[middle].start <= index { low = middle } else { high = middle - 1 }
        }
        return low
    }

    /// Moves the start of every section after `sectionIndex` by `delta`.
    func shiftSections(after sectionIndex: Int, by delta: Int) {
        var index = sectionIndex + 1
        while index < sectionList.count {
            sectionList[index].start += delta
            index += 1
        }
    }

    /// The index title of a section: the delegate's, else the application's controller's.
    func indexTitle(forSectionName name: String) -> String? {
        if let delegate {
            return delegate.controller(untypedController(), sectionIndexTitleForSectionName: name)
        }
        return defaultIndexTitle(forSectionName: name)
    }

    /// The application's controller's `sectionIndexTitle(forSectionName:)`, which subclasses may override.
    func defaultIndexTitle(forSectionName name: String) -> String? {
        if let primaryIndexTitle { return primaryIndexTitle(name) }
        return name.first.map { String($0).uppercased() }
    }

    var sectionIndexTitles: [String] {
        var seen = Set<String>()
        return sectionList.compactMap(\.indexTitle).filter { seen.insert($0).inserted }
    }

    func section(forSectionIndexTitle title: String, at sectionIndex: Int) -> Int {
        let titles = sectionIndexTitles
        precondition(
            titles.indices.contains(sectionIndex) && titles[sectionIndex] == title,
            "Index title at \(sectionIndex) is not equal to '\(title)'")
        return sectionList.firstIndex { $0.indexTitle == title } ?? 0
    }

    // MARK: Lookups

    func object(at indexPath: IndexPath) -> NSFetchRequestResult {
        guard let results else {
            preconditionFailure("object(at:) was called before performFetch() of the NSFetchedResultsController")
        }
        precondition(indexPath.count == 2, "The index path \(indexPath) does not name a section and an object")
        let section = indexPath[0]
        let item = indexPath[1]
        precondition(sectionList.indices.contains(section), "no section at index \(section)")
        precondition(
            item >= 0 && item < sectionList[section].numberOfObjects,
            "no object at index \(item) in section at index \(section)")
        return results[sectionList[section].start + item]
    }

    func indexPath(for object: NSFetchRequestResult) -> IndexPath? {
        guard let results else { return nil }
        if sortKeys != nil, let keys = keysByObject[ObjectIdentifier(object)], let index = locate(object, keys: keys) {
            return indexPath(ofResultAt: index, in: sectionList.map(\.span))
        }
        let byObject: [ObjectIdentifier: Int]
        if let positions, positions.version == version {
            byObject = positions.byObject
        } else {
            var map: [ObjectIdentifier: Int] = [:]
            map.reserveCapacity(results.count)
            for (index, result) in results.enumerated() { map[ObjectIdentifier(result)] = index }
            positions = (version, map)
            byObject = map
        }
        var index = byObject[ObjectIdentifier(object)]
        if index == nil, !(object is NSManagedObject), let value = object as? NSObject {
            // IDs, dictionaries and counts are found by equality.
            index = results.firstIndex { ($0 as? NSObject)?.isEqual(value) == true }
        }
        guard let index else { return nil }
        return indexPath(ofResultAt: index, in: sectionList.map(\.span))
    }

    func indexPath(ofResultAt index: Int, in spans: [FetchedResultsSection.Span]) -> IndexPath {
        var low = 0
        var high = spans.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if spans[middle].start <= index { low = middle } else { high = middle - 1 }
        }
        return IndexPath(indexes: [low, index - spans[low].start])
    }

    /// The controller delegates receive: the application's, if it is typed for any result, else a view of the same
    /// results typed so.
    func untypedController() -> NSFetchedResultsController<NSFetchRequestResult> {
        if let primaryUntyped { return primaryUntyped }
        let request = primaryRequest?() ?? self.request ?? NSFetchRequest<NSFetchRequestResult>()
        return NSFetchedResultsController<NSFetchRequestResult>(sharing: self, fetchRequest: request)
    }

    // MARK: Sort keys

    /// Whether `a` sorts before `b` by the request's sort descriptors.
    func ascending(_ a: [Any?], _ b: [Any?]) -> Bool {
        for (position, descriptor) in (request?.sortDescriptors ?? []).enumerated() {
            let order = descriptor.compareValues(a[position], b[position])
            if order != .orderedSame { return (order == .orderedAscending) == descriptor.ascending }
        }
        return false
    }

    /// Reads every result's sort keys, once, when changes start to be followed.
    func keepSortKeys() {
        guard sortKeys == nil, let results else { return }
        let descriptors = request?.sortDescriptors ?? []
        var keys: [[Any?]] = []
        keys.reserveCapacity(results.count)
        keysByObject.reserveCapacity(results.count)
        for result in results {
            let values = descriptors.map { $0.value(of: result) }
            keys.append(values)
            keysByObject[ObjectIdentifier(result)] = values
        }
        sortKeys = keys
    }

    /// The position of `object`, whose sort keys were `keys` when it took it.
    func locate(_ object: NSFetchRequestResult, keys: [Any?]) -> Int? {
        guard let results, let sortKeys else { return nil }
        var low = 0
        var high = sortKeys.count
        while low < high {
            let middle = (low + high) / 2
            if ascending(sortKeys[middle], keys) { low = middle + 1 } else { high = middle }
        }
        var index = low
        while index < results.count, !ascending(keys, sortKeys[index]) {
            if results[index] === object { return index }
            index += 1
        }
        return results.firstIndex { $0 === object }
    }

    /// The position after every result that does not sort after `keys`.
    func insertionIndex(for keys: [Any?]) -> Int {
        guard let sortKeys else { return 0 }
        var low = 0
        var high = sortKeys.count
        while low < high {
            let middle = (low + high) / 2
            if ascending(keys, sortKeys[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
