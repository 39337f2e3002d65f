/// SHA-256 (FIPS 180-4), for model version hashes. Foundation on Linux has no digest API. Inputs are small for most
/// models, but an entity's hash covers the hashes of all its inherited properties, so a deep hierarchy hashes
/// megabytes: blocks are compressed straight from the message, without copies or bounds checks.
struct SHA256 {
    private static let roundConstants: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]

    /// The 32-byte digest of `message`.
    static func hash(_ message: [UInt8]) -> [UInt8] {
        var state: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) = (
            0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19
        )
        roundConstants.withUnsafeBufferPointer { constants in
            withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { words in
                message.withUnsafeBufferPointer { bytes in
                    let whole = bytes.count / 64 * 64
                    var offset = 0
                    while offset < whole {
                        compress(UnsafeBufferPointer(rebasing: bytes[offset..<(offset + 64)]), &state, words, constants)
                        offset += 64
                    }
                    // The rest of the message, the 0x80 marker, zeros, and the length in bits: one or two blocks.
                    var tail = [UInt8](bytes[whole...])
                    tail.append(0x80)
                    while tail.count % 64 != 56 { tail.append(0) }
                    let bitLength = UInt64(bytes.count) &* 8
                    for shift in stride(from: 56, through: 0, by: -8) {
                        tail.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
                    }
                    tail.withUnsafeBufferPointer { tail in
                        for start in stride(from: 0, to: tail.count, by: 64) {
                            compress(
                                UnsafeBufferPointer(rebasing: tail[start..<(start + 64)]), &state, words, constants)
                        }
                    }
                }
            }
        }
        var digest: [UInt8] = []
        digest.reserveCapacity(32)
        for word in [state.0, state.1, state.2, state.3, state.4, state.5, state.6, state.7] {
            digest.append(UInt8(truncatingIfNeeded: word >> 24))
            digest.append(UInt8(truncatingIfNeeded: word >> 16))
            digest.append(UInt8(truncatingIfNeeded: word >> 8))
            digest.append(UInt8(truncatingIfNeeded: word))
        }
        return digest
    }

    /// Compresses one 64-byte block into `state`; `words` is room for the message schedule.
    @inline(__always)
    private static func compress(
        _ block: UnsafeBufferPointer<UInt8>,
        _ state: inout (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32),
        _ words: UnsafeMutableBufferPointer<UInt32>, _ constants: UnsafeBufferPointer<UInt32>
    ) {
        let w = words.baseAddress.unsafelyUnwrapped
        let k = constants.baseAddress.unsafelyUnwrapped
        let b = block.baseAddress.unsafelyUnwrapped
        for index in 0..<16 {
            let base = index &* 4
            w[index] =
                UInt32(b[base]) << 24 | UInt32(b[base &+ 1]) << 16 | UInt32(b[base &+ 2]) << 8 | UInt32(b[base &+ 3])
        }
        for index in 16..<64 {
            let w15 = w[index &- 15]
            let w2 = w[index &- 2]
            let s0 = rotate(w15, 7) ^ rotate(w15, 18) ^ (w15 >> 3)
            let s1 = rotate(w2, 17) ^ rotate(w2, 19) ^ (w2 >> 10)
            w[index] = w[index &- 16] &+ s0 &+ w[index &- 7] &+ s1
        }
        var (a, bb, c, d, e, f, g, h) = state
        for index in 0..<64 {
            let sum1 = rotate(e, 6) ^ rotate(e, 11) ^ rotate(e, 25)
            let choice = (e & f) ^ (~e & g)
            let temp1 = h &+ sum1 &+ choice &+ k[index] &+ w[index]
            let sum0 = rotate(a, 2) ^ rotate(a, 13) ^ rotate(a, 22)
            let majority = (a & bb) ^ (a & c) ^ (bb & c)
            let temp2 = sum0 &+ majority
            h = g
            g = f
            f = e
            e = d &+ temp1
            d = c
            c = bb
            bb = a
            a = temp1 &+ temp2
        }
        state = (
            state.0 &+ a, state.1 &+ bb, state.2 &+ c, state.3 &+ d, state.4 &+ e, state.5 &+ f, state.6 &+ g,
            state.7 &+ h
        )
    }

    @inline(__always)
    private static func rotate(_ value: UInt32, _ amount: UInt32) -> UInt32 {
        (value >> amount) | (value << (32 &- amount))
    }
}
