/// Lists the non-generic classes of every loaded Swift image by reading the images' type-metadata records
/// (the `swift5_types` sections the runtime itself reads), so that a class can be found from its unqualified
/// name as the Objective-C runtime finds one on Apple platforms.
enum SwiftImageClassIndex {
    /// Short class name to module-qualified names (`"Employee"` → `["MyApp.Employee"]`).
    static func build() -> [String: [String]] {
        #if os(Linux) || os(Android) || os(FreeBSD)
        final class Collector {
            var index: [String: [String]] = [:]
        }
        let collector = Collector()
        withExtendedLifetime(collector) {
            swift_enumerateAllMetadataSections(
                { rawSections, context in
                    guard let rawSections, let context else { return true }
                    let sections = rawSections.assumingMemoryBound(to: SwiftMetadataSections.self)
                    let collector = Unmanaged<Collector>.fromOpaque(context).takeUnretainedValue()
                    // Versions before 1 do not have the layout read here.
                    guard sections.pointee.version >= 1 else { return true }
                    let range = sections.pointee.swift5_type_metadata
                    SwiftImageClassIndex.scan(start: range.start, length: range.length, into: &collector.index)
                    return true
                }, Unmanaged.passUnretained(collector).toOpaque())
        }
        return collector.index
        #else
        return [:]
        #endif
    }

    private static let classKind: UInt32 = 16
    private static let moduleKind: UInt32 = 0
    private static let genericFlag: UInt32 = 0x80

    static func scan(start: UInt, length: Int, into index: inout [String: [String]]) {
        guard start != 0, length > 0, let base = UnsafeRawPointer(bitPattern: start) else { return }
        for offset in stride(from: 0, to: length - 3, by: 4) {
            let entry = base + offset
            let raw = entry.loadUnaligned(as: Int32.self)
            let kind = raw & 3
            guard kind == 0 || kind == 1 else { continue }
            var descriptor = entry + Int(raw & ~3)
            if kind == 1 {
                guard let indirect = descriptor.loadUnaligned(as: UnsafeRawPointer?.self) else { continue }
                descriptor = indirect
            }
            let flags = descriptor.loadUnaligned(as: UInt32.self)
            guard flags & 0x1F == classKind, flags & genericFlag == 0 else { continue }
            guard let name = contextName(descriptor) else { continue }
            var components = [name]
            var parent = parentDescriptor(descriptor)
            var reachedModule = false
            while let context = parent {
                let parentKind = context.loadUnaligned(as: UInt32.self) & 0x1F
                // Only modules and types have a name at this offset; a class inside an extension, a function
                // or any other anonymous context has no dotted name and is skipped.
                guard parentKind == moduleKind || (parentKind >= 16 && parentKind <= 18),
                    let parentName = contextName(context)
                else { break }
                components.insert(parentName, at: 0)
                if parentKind == moduleKind {
                    reachedModule = true
                    break
                }
                parent = parentDescriptor(context)
            }
            guard reachedModule else { continue }
            index[name, default: []].append(components.joined(separator: "."))
        }
    }

    private static func contextName(_ descriptor: UnsafeRawPointer) -> String? {
        let field = descriptor + 8
        let offset = field.loadUnaligned(as: Int32.self)
        guard offset != 0 else { return nil }
        return String(cString: (field + Int(offset)).assumingMemoryBound(to: CChar.self))
    }

    private static func parentDescriptor(_ descriptor: UnsafeRawPointer) -> UnsafeRawPointer? {
        let field = descriptor + 4
        let raw = field.loadUnaligned(as: Int32.self)
        guard raw != 0 else { return nil }
        let target = field + Int(raw & ~1)
        if raw & 1 != 0 {
            return target.loadUnaligned(as: UnsafeRawPointer?.self)
        }
        return target
    }
}

#if os(Linux) || os(Android) || os(FreeBSD)
/// The runtime's description of one loaded image's metadata sections (layout of the runtime's
/// `MetadataSections`).
struct SwiftMetadataSectionRange {
    var start: UInt
    var length: Int
}

struct SwiftMetadataSections {
    var version: UInt
    var baseAddress: UnsafeRawPointer?
    var unused0: UnsafeRawPointer?
    var unused1: UnsafeRawPointer?
    var swift5_protocols: SwiftMetadataSectionRange
    var swift5_protocol_conformances: SwiftMetadataSectionRange
    var swift5_type_metadata: SwiftMetadataSectionRange
}

@_silgen_name("swift_enumerateAllMetadataSections")
func swift_enumerateAllMetadataSections(
    _ body: @convention(c) (UnsafeRawPointer?, UnsafeMutableRawPointer?) -> Bool,
    _ context: UnsafeMutableRawPointer?
)
#endif
