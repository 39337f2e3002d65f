/// The libraries of the comparison, in table order, and a way to run any workload of any of them by name.
public enum Libraries {
    public static let names = [
        RawSQLiteLibrary.name, GRDBStatementsLibrary.name, GRDBRecordsLibrary.name, OpenCoreDataLibrary.name,
    ]

    /// A short name for the command line: `raw`, `grdb`, `records`, `ocd`.
    public static func name(forShortName short: String) -> String? {
        switch short {
        case "raw": RawSQLiteLibrary.name
        case "grdb": GRDBStatementsLibrary.name
        case "records": GRDBRecordsLibrary.name
        case "ocd": OpenCoreDataLibrary.name
        default: nil
        }
    }

    /// Prepares runs of the workloads of the library called `name`.
    public static func driver(named name: String) -> AnyWorkloadDriver? {
        switch name {
        case RawSQLiteLibrary.name: AnyWorkloadDriver(WorkloadDriver<RawSQLiteLibrary>())
        case GRDBStatementsLibrary.name: AnyWorkloadDriver(WorkloadDriver<GRDBStatementsLibrary>())
        case GRDBRecordsLibrary.name: AnyWorkloadDriver(WorkloadDriver<GRDBRecordsLibrary>())
        case OpenCoreDataLibrary.name: AnyWorkloadDriver(WorkloadDriver<OpenCoreDataLibrary>())
        default: nil
        }
    }

    /// Measures the memory row for the library called `name`.
    public static func measureMemory(named name: String) throws -> MemoryMeasurement? {
        switch name {
        case RawSQLiteLibrary.name: try MemoryMeasurement.measure(RawSQLiteLibrary.self)
        case GRDBStatementsLibrary.name: try MemoryMeasurement.measure(GRDBStatementsLibrary.self)
        case GRDBRecordsLibrary.name: try MemoryMeasurement.measure(GRDBRecordsLibrary.self)
        case OpenCoreDataLibrary.name: try MemoryMeasurement.measure(OpenCoreDataLibrary.self)
        default: nil
        }
    }
}

/// A workload driver of any library.
public final class AnyWorkloadDriver: @unchecked Sendable {
    let prepareRun: (Workload) throws -> WorkloadRun
    let keepAlive: AnyObject

    init<Library>(_ driver: WorkloadDriver<Library>) {
        prepareRun = driver.prepare
        keepAlive = driver
    }

    /// Prepares one run of `workload` (not measured).
    public func prepare(_ workload: Workload) throws -> WorkloadRun {
        try prepareRun(workload)
    }
}
