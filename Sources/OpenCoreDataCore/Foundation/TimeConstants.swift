// The time-unit constants Apple's platforms give every file that imports Core Data (through Darwin's
// `dispatch/time.h`), which Core Data code uses to build `DispatchTime` deadlines
// (`DispatchTime.now() + Double(Int64(2 * NSEC_PER_SEC)) / Double(NSEC_PER_SEC)`). Swift on Linux does not import
// them from Dispatch's header, so such code stops compiling when only its import changes.

/// Nanoseconds per second.
public var NSEC_PER_SEC: UInt64 { 1_000_000_000 }
/// Nanoseconds per millisecond.
public var NSEC_PER_MSEC: UInt64 { 1_000_000 }
/// Nanoseconds per microsecond.
public var NSEC_PER_USEC: UInt64 { 1_000 }
/// Microseconds per second.
public var USEC_PER_SEC: UInt64 { 1_000_000 }
