import CMemoryStats
import Foundation

/// The process's memory: bytes in use on the malloc heap, and resident pages.
public struct MemorySnapshot: Sendable {
    /// Bytes handed out by malloc and not yet freed (glibc's `mallinfo2`: arena plus mmapped chunks).
    public let heapBytes: Int
    /// Resident set size now, and its peak so far (`VmRSS`, `VmHWM`).
    public let residentBytes: Int
    public let peakResidentBytes: Int

    public static func now() -> MemorySnapshot {
        let heap = Int(ocd_benchmark_heap_bytes_in_use())
        var resident = 0
        var peak = 0
        // /proc files report a size of 0, so they are read to their end rather than by their size.
        if let data = try? FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/self/status")).readToEnd(),
            let status = String(data: data, encoding: .utf8)
        {
            for line in status.split(separator: "\n") {
                let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
                guard fields.count >= 2, let kilobytes = Int(fields[1]) else { continue }
                if fields[0] == "VmRSS:" { resident = kilobytes * 1024 }
                if fields[0] == "VmHWM:" { peak = kilobytes * 1024 }
            }
        }
        return MemorySnapshot(heapBytes: heap, residentBytes: resident, peakResidentBytes: peak)
    }

    /// Sets the peak resident size (`VmHWM`) back to the resident size now (Linux: `clear_refs`), so that a peak
    /// measured afterwards is that of what runs afterwards.
    public static func resetPeakResidentSize() {
        guard let file = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return }
        try? file.write(contentsOf: Data("5".utf8))
        try? file.close()
    }
}

/// The memory row: what holding every item costs, per item, beyond its attribute data.
public struct MemoryMeasurement: Sendable, Codable {
    public var library: String
    /// Heap growth per object while all 100,000 are held (registered in a context, for OpenCoreData).
    public var heapBytesPerObject: Double
    /// Growth of the peak resident size per object.
    public var peakResidentBytesPerObject: Double
    /// The process's peak resident size at the end.
    public var peakResidentBytes: Int
    /// The attribute data of an average object (strings as UTF-8), which the overhead is counted beyond.
    public var attributeBytesPerObject: Double

    public var overheadBytesPerObject: Double { heapBytesPerObject - attributeBytesPerObject }

    /// Loads every item of a fresh copy of the item table with `Library` and keeps them while measuring.
    public static func measure<Library: PersistenceLibrary>(_ library: Library.Type) throws -> MemoryMeasurement {
        let driver = WorkloadDriver<Library>()
        let database = try driver.openItems()
        // The connection is open and its statements prepared before the first snapshot.
        _ = try database.lookUp(serials: [0])
        let before = MemorySnapshot.now()
        let (checksum, keepAlive) = try database.loadAllItems()
        let after = MemorySnapshot.now()
        guard checksum.count == Fixture.itemCount else {
            throw WorkloadMismatch(description: "\(Library.name) memory: loaded \(checksum.count) objects")
        }
        withExtendedLifetime(keepAlive) {}
        let count = Double(Fixture.itemCount)
        return MemoryMeasurement(
            library: Library.name,
            heapBytesPerObject: Double(after.heapBytes - before.heapBytes) / count,
            peakResidentBytesPerObject: Double(after.peakResidentBytes - before.peakResidentBytes) / count,
            peakResidentBytes: after.peakResidentBytes,
            attributeBytesPerObject: Fixture.attributeBytesPerItem)
    }
}
