import CZlib
import Foundation

/// Raw DEFLATE (RFC 1951: no zlib header, no checksum), through zlib — the compression of the model Apple's SQLite
/// store caches in `Z_MODELCACHE` (Apple's `COMPRESSION_ZLIB`). Foundation on Linux has no compression API.
enum RawDeflate {
    /// Why data could not be compressed or inflated.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// `data`, compressed.
    static func compress(_ data: Data) throws(Failure) -> Data {
        var stream = z_stream()
        let windowBits = -MAX_WBITS  // negative: a raw stream
        let initialized = deflateInit2_(
            &stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY, zlibVersion(),
            Int32(MemoryLayout<z_stream>.size))
        guard initialized == Z_OK else { throw Failure(description: "zlib cannot compress (error \(initialized))") }
        defer { deflateEnd(&stream) }
        var input = [UInt8](data)
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(input.count))))
        let status = input.withUnsafeMutableBufferPointer { source in
            output.withUnsafeMutableBufferPointer { destination in
                stream.next_in = source.baseAddress
                stream.avail_in = uInt(source.count)
                stream.next_out = destination.baseAddress
                stream.avail_out = uInt(destination.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else { throw Failure(description: "zlib could not compress (error \(status))") }
        return Data(output.prefix(Int(stream.total_out)))
    }

    /// The data `compressed` holds, refused when it is not a complete raw DEFLATE stream or would inflate to more
    /// than `limit` bytes.
    static func decompress(_ compressed: Data, limit: Int = 64 << 20) throws(Failure) -> Data {
        var stream = z_stream()
        let initialized = inflateInit2_(&stream, -MAX_WBITS, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard initialized == Z_OK else { throw Failure(description: "zlib cannot inflate (error \(initialized))") }
        defer { inflateEnd(&stream) }
        var input = [UInt8](compressed)
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        var status = Z_OK
        input.withUnsafeMutableBufferPointer { source in
            stream.next_in = source.baseAddress
            stream.avail_in = uInt(source.count)
            while status == Z_OK {
                let produced = chunk.withUnsafeMutableBufferPointer { destination in
                    stream.next_out = destination.baseAddress
                    stream.avail_out = uInt(destination.count)
                    status = inflate(&stream, Z_NO_FLUSH)
                    return destination.count - Int(stream.avail_out)
                }
                output += chunk.prefix(produced)
                if output.count > limit { break }
                // No progress with input left means the stream is cut short.
                if status == Z_OK, produced == 0, stream.avail_in == 0 { status = Z_BUF_ERROR }
            }
        }
        guard output.count <= limit else { throw Failure(description: "it inflates to more than \(limit) bytes") }
        switch status {
        case Z_STREAM_END:
            return Data(output)
        case Z_BUF_ERROR:
            throw Failure(description: "the compressed data is truncated")
        default:
            let message = stream.msg.map { String(cString: $0) } ?? "error \(status)"
            throw Failure(description: "the compressed data is damaged (\(message))")
        }
    }
}
