/// The rows of one fetch with a `fetchBatchSize` whose values are still to load, a batch at a time: the first fault
/// of a batch to fire loads the whole batch in one query (`NSSQLiteStore._loadBatch`).
///
/// The rows are kept as their primary keys in the fetch's order (8 bytes a row) and, when that order is not the keys'
/// own, the positions of the keys in ascending order (4 bytes more), by which a key is found with a binary search. A
/// map from each row's ID to its batch, with each batch's list of IDs, took 41.5 MB for a million rows.
final class SQLiteBatchedRows {
    /// The table every row is in (an entity's rows and its subentities' share one).
    let table: SQLiteTable
    let batchSize: Int
    /// The rows' keys in the fetch's order; batch `n` is `keys[n * batchSize ..< (n + 1) * batchSize]`.
    private let keys: [Int64]
    /// The indices of `keys` in ascending order of key; empty when `keys` ascend already (an unsorted fetch's do).
    private let byKey: [Int32]
    /// Which batches have not loaded yet.
    private var isPending: [Bool]
    /// How many batches have not loaded yet.
    private(set) var pendingBatches: Int

    /// `nil` for rows that need no record: none, or more than positions of 32 bits can name (those load one by one).
    init?(keys: [Int64], table: SQLiteTable, batchSize: Int) {
        guard !keys.isEmpty, batchSize > 0, keys.count <= Int(Int32.max) else { return nil }
        self.keys = keys
        self.table = table
        self.batchSize = batchSize
        var ascending = true
        for index in keys.indices.dropFirst() where keys[index - 1] >= keys[index] {
            ascending = false
            break
        }
        if ascending {
            byKey = []
        } else {
            var order = Array(0..<Int32(keys.count))
            order.sort { keys[Int($0)] < keys[Int($1)] }
            byKey = order
        }
        pendingBatches = (keys.count + batchSize - 1) / batchSize
        isPending = Array(repeating: true, count: pendingBatches)
    }

    /// How many rows the record holds.
    var count: Int { keys.count }

    /// The batch of the row with `key`, if it has not loaded yet.
    func pendingBatch(of key: Int64) -> Int? {
        guard key >= self.key(inOrder: 0), key <= self.key(inOrder: keys.count - 1) else { return nil }
        // The first position whose key is not below `key`.
        var low = 0
        var high = keys.count
        while low < high {
            let middle = low + (high - low) / 2
            if self.key(inOrder: middle) < key { low = middle + 1 } else { high = middle }
        }
        guard low < keys.count, self.key(inOrder: low) == key else { return nil }
        let batch = (byKey.isEmpty ? low : Int(byKey[low])) / batchSize
        return isPending[batch] ? batch : nil
    }

    /// The keys of `batch`, which is marked loaded.
    func take(_ batch: Int) -> ArraySlice<Int64> {
        precondition(isPending[batch], "SQLiteBatchedRows: batch \(batch) was taken already")
        isPending[batch] = false
        pendingBatches -= 1
        return keys[batch * batchSize..<min(keys.count, (batch + 1) * batchSize)]
    }

    /// The key at `position` in ascending order.
    private func key(inOrder position: Int) -> Int64 {
        byKey.isEmpty ? keys[position] : keys[Int(byKey[position])]
    }
}
