#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What a store's URL names on disk, looked at before a store reads, writes or deletes anything there.
///
/// `/dev/null` is Apple's documented way to ask for a SQLite store that lives in memory; no store ever opens,
/// writes, truncates or deletes it. Anything else that is not a regular file (a directory, a FIFO, a device) is
/// refused, so that a wrong URL never blocks on a pipe or removes a directory.
enum StoreLocation: Equatable {
    case devNull
    case missing
    case regularFile(size: Int)
    case notAFile(kind: String)

    init(_ url: URL) {
        let path = url.path
        var info = stat()
        guard stat(path, &info) == 0 else {
            self = .missing
            return
        }
        if Self._isDevNull(info) {
            self = .devNull
            return
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: self = .regularFile(size: Int(info.st_size))
        case S_IFDIR: self = .notAFile(kind: "a directory")
        case S_IFIFO: self = .notAFile(kind: "a pipe")
        case S_IFSOCK: self = .notAFile(kind: "a socket")
        case S_IFCHR, S_IFBLK: self = .notAFile(kind: "a device")
        default: self = .notAFile(kind: "a special file")
        }
    }

    /// Whether `url` names `/dev/null`, through whatever symbolic links.
    static func isDevNull(_ url: URL?) -> Bool {
        guard let url, url.isFileURL else { return false }
        return StoreLocation(url) == .devNull
    }

    private static func _isDevNull(_ info: stat) -> Bool {
        guard info.st_mode & S_IFMT == S_IFCHR else { return false }
        var null = stat()
        guard stat("/dev/null", &null) == 0 else { return false }
        return info.st_rdev == null.st_rdev
    }

    /// The error for a URL that names something other than a store file.
    static func notAFileError(_ url: URL, kind: String, action: String) -> NSError {
        coreDataError(
            CocoaError.Code.fileReadUnknown.rawValue,
            "Cannot \(action) a store at \(url.path): it is \(kind), not a store file",
            userInfo: [NSURLErrorKey: url])
    }
}
