// `autoreleasepool(invoking:)` is how Core Data code bounds the memory of a long import on Apple platforms. Foundation
// on Linux has no autorelease pools (Swift releases objects when their last reference goes), and no such function:
// this one runs its body, so that code written with it builds and behaves the same.

/// Runs `body`. On Apple platforms objects autoreleased inside it are released when it returns; on Linux nothing is
/// autoreleased, so there is nothing more to do.
@inlinable
public func autoreleasepool<Result>(invoking body: () throws -> Result) rethrows -> Result {
    try body()
}
