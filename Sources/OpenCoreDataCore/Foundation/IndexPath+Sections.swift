// UIKit and AppKit give `IndexPath` a section and a row (or item), which code written around a fetched results
// controller reads everywhere (`controller.object(at: IndexPath(row: 0, section: 1))`, `indexPath.row`); Foundation
// on Linux has neither. Where neither framework exists, OpenCoreData declares them, with UIKit's meaning: the first
// index is the section, the second the row.
#if !canImport(UIKit) && !canImport(AppKit)
extension IndexPath {
    /// The index path of row `row` of section `section`.
    ///
    /// ```swift
    /// let first = controller.object(at: IndexPath(row: 0, section: 0))
    /// ```
    public init(row: Int, section: Int) {
        self.init(indexes: [section, row])
    }

    /// The index path of item `item` of section `section`.
    public init(item: Int, section: Int) {
        self.init(indexes: [section, item])
    }

    /// The section: the first index.
    ///
    /// - Precondition: the index path has two indexes.
    public var section: Int {
        get {
            precondition(count == 2, "Invalid index path for use with a section and a row: \(self)")
            return self[0]
        }
        set {
            precondition(count == 2, "Invalid index path for use with a section and a row: \(self)")
            self[0] = newValue
        }
    }

    /// The row within the section: the second index.
    ///
    /// - Precondition: the index path has two indexes.
    public var row: Int {
        get {
            precondition(count == 2, "Invalid index path for use with a section and a row: \(self)")
            return self[1]
        }
        set {
            precondition(count == 2, "Invalid index path for use with a section and a row: \(self)")
            self[1] = newValue
        }
    }

    /// The item within the section: the second index, as `row`.
    public var item: Int {
        get { row }
        set { row = newValue }
    }
}
#endif
