/// SHA-256 and SHA-512 (FIPS 180-4): one implementation for both. Foundation on Linux has no digest API, and
/// version hashes must equal Apple's: entity and property hashes are SHA-256, the digest of a store's version hashes
/// (`NSStoreModelVersionHashesDigest`) is SHA-512. Inputs are small for most models, but an entity's hash covers the
/// hashes of all its inherited properties, so a deep hierarchy hashes megabytes: blocks are compressed straight from
/// the message, without copies.
///
/// The two differ only in word size, round count, constants and rotation amounts, so words are held in `UInt64`
/// either way and SHA-256's are masked to 32 bits. (A generic over the word type was as fast once specialized, but
/// ten times slower in debug builds, where tests hash deep hierarchies.)
struct SHA2: Sendable {
    /// 32 or 64.
    let wordBits: UInt64
    /// One constant per round (64 or 80).
    let roundConstants: [UInt64]
    let initialState: [UInt64]
    /// The rotations of Σ0 and Σ1; the two rotations and the shift of σ0 and σ1.
    let sum0: (UInt64, UInt64, UInt64)
    let sum1: (UInt64, UInt64, UInt64)
    let sigma0: (UInt64, UInt64, UInt64)
    let sigma1: (UInt64, UInt64, UInt64)

    private var wordBytes: Int { Int(wordBits) / 8 }
    private var mask: UInt64 { wordBits == 64 ? .max : (1 << wordBits) - 1 }

    /// The digest of `message`: 32 bytes for SHA-256, 64 for SHA-512.
    func hash(_ message: [UInt8]) -> [UInt8] {
        let blockBytes = 16 * wordBytes
        var state = initialState
        roundConstants.withUnsafeBufferPointer { constants in
            state.withUnsafeMutableBufferPointer { state in
                withUnsafeTemporaryAllocation(of: UInt64.self, capacity: constants.count) { words in
                    message.withUnsafeBufferPointer { bytes in
                        let whole = bytes.count / blockBytes * blockBytes
                        var offset = 0
                        while offset < whole {
                            let block = UnsafeBufferPointer(rebasing: bytes[offset..<(offset + blockBytes)])
                            compress(block, state, words, constants)
                            offset += blockBytes
                        }
                        // The rest of the message, the 0x80 marker, zeros, and the length in bits in the last two
                        // words (big-endian; the high word is zero for any message that fits in memory).
                        var tail = [UInt8](bytes[whole...])
                        tail.append(0x80)
                        while tail.count % blockBytes != blockBytes - 8 { tail.append(0) }
                        let bitLength = UInt64(bytes.count) &* 8
                        for shift in stride(from: 56, through: 0, by: -8) {
                            tail.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
                        }
                        tail.withUnsafeBufferPointer { tail in
                            for start in stride(from: 0, to: tail.count, by: blockBytes) {
                                let block = UnsafeBufferPointer(rebasing: tail[start..<(start + blockBytes)])
                                compress(block, state, words, constants)
                            }
                        }
                    }
                }
            }
        }
        var digest: [UInt8] = []
        digest.reserveCapacity(8 * wordBytes)
        for word in state {
            for shift in stride(from: Int(wordBits) - 8, through: 0, by: -8) {
                digest.append(UInt8(truncatingIfNeeded: word >> UInt64(shift)))
            }
        }
        return digest
    }

    /// Compresses one block of 16 words into `state`; `words` is room for the message schedule.
    @inline(__always)
    private func compress(
        _ block: UnsafeBufferPointer<UInt8>, _ state: UnsafeMutableBufferPointer<UInt64>,
        _ words: UnsafeMutableBufferPointer<UInt64>, _ constants: UnsafeBufferPointer<UInt64>
    ) {
        let w = words.baseAddress.unsafelyUnwrapped
        let b = block.baseAddress.unsafelyUnwrapped
        let k = constants.baseAddress.unsafelyUnwrapped
        let rounds = constants.count
        let mask = self.mask
        let bits = wordBits
        @inline(__always) func rotate(_ value: UInt64, _ amount: UInt64) -> UInt64 {
            ((value >> amount) | (value << (bits &- amount))) & mask
        }
        let wordBytes = self.wordBytes
        for index in 0..<16 {
            var word: UInt64 = 0
            for byte in 0..<wordBytes { word = word << 8 | UInt64(b[index &* wordBytes &+ byte]) }
            w[index] = word
        }
        let (s00, s01, s02) = sigma0
        let (s10, s11, s12) = sigma1
        for index in 16..<rounds {
            let w15 = w[index &- 15]
            let w2 = w[index &- 2]
            let s0 = rotate(w15, s00) ^ rotate(w15, s01) ^ (w15 >> s02)
            let s1 = rotate(w2, s10) ^ rotate(w2, s11) ^ (w2 >> s12)
            w[index] = (w[index &- 16] &+ s0 &+ w[index &- 7] &+ s1) & mask
        }
        let (r00, r01, r02) = sum0
        let (r10, r11, r12) = sum1
        var (a, bb, c, d, e, f, g, h) = (state[0], state[1], state[2], state[3], state[4], state[5], state[6], state[7])
        for index in 0..<rounds {
            let big1 = rotate(e, r10) ^ rotate(e, r11) ^ rotate(e, r12)
            let choice = (e & f) ^ (~e & mask & g)
            let temp1 = h &+ big1 &+ choice &+ k[index] &+ w[index]
            let big0 = rotate(a, r00) ^ rotate(a, r01) ^ rotate(a, r02)
            let majority = (a & bb) ^ (a & c) ^ (bb & c)
            h = g
            g = f
            f = e
            e = (d &+ temp1) & mask
            d = c
            c = bb
            bb = a
            a = (temp1 &+ big0 &+ majority) & mask
        }
        state[0] = (state[0] &+ a) & mask
        state[1] = (state[1] &+ bb) & mask
        state[2] = (state[2] &+ c) & mask
        state[3] = (state[3] &+ d) & mask
        state[4] = (state[4] &+ e) & mask
        state[5] = (state[5] &+ f) & mask
        state[6] = (state[6] &+ g) & mask
        state[7] = (state[7] &+ h) & mask
    }
}

/// SHA-256: entity, property and model version hashes.
enum SHA256 {
    private static let function = SHA2(
        wordBits: 32,
        roundConstants: [
            0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
            0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
            0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
            0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
            0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
            0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
            0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
            0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
        ],
        initialState: [
            0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19,
        ],
        sum0: (2, 13, 22), sum1: (6, 11, 25), sigma0: (7, 18, 3), sigma1: (17, 19, 10)
    )

    /// The 32-byte digest of `message`.
    static func hash(_ message: [UInt8]) -> [UInt8] { function.hash(message) }
}

/// SHA-512: the digest of the version hashes a store records (`NSStoreModelVersionHashesDigest`).
enum SHA512 {
    private static let function = SHA2(
        wordBits: 64,
        roundConstants: [
            0x428a_2f98_d728_ae22, 0x7137_4491_23ef_65cd, 0xb5c0_fbcf_ec4d_3b2f, 0xe9b5_dba5_8189_dbbc,
            0x3956_c25b_f348_b538, 0x59f1_11f1_b605_d019, 0x923f_82a4_af19_4f9b, 0xab1c_5ed5_da6d_8118,
            0xd807_aa98_a303_0242, 0x1283_5b01_4570_6fbe, 0x2431_85be_4ee4_b28c, 0x550c_7dc3_d5ff_b4e2,
            0x72be_5d74_f27b_896f, 0x80de_b1fe_3b16_96b1, 0x9bdc_06a7_25c7_1235, 0xc19b_f174_cf69_2694,
            0xe49b_69c1_9ef1_4ad2, 0xefbe_4786_384f_25e3, 0x0fc1_9dc6_8b8c_d5b5, 0x240c_a1cc_77ac_9c65,
            0x2de9_2c6f_592b_0275, 0x4a74_84aa_6ea6_e483, 0x5cb0_a9dc_bd41_fbd4, 0x76f9_88da_8311_53b5,
            0x983e_5152_ee66_dfab, 0xa831_c66d_2db4_3210, 0xb003_27c8_98fb_213f, 0xbf59_7fc7_beef_0ee4,
            0xc6e0_0bf3_3da8_8fc2, 0xd5a7_9147_930a_a725, 0x06ca_6351_e003_826f, 0x1429_2967_0a0e_6e70,
            0x27b7_0a85_46d2_2ffc, 0x2e1b_2138_5c26_c926, 0x4d2c_6dfc_5ac4_2aed, 0x5338_0d13_9d95_b3df,
            0x650a_7354_8baf_63de, 0x766a_0abb_3c77_b2a8, 0x81c2_c92e_47ed_aee6, 0x9272_2c85_1482_353b,
            0xa2bf_e8a1_4cf1_0364, 0xa81a_664b_bc42_3001, 0xc24b_8b70_d0f8_9791, 0xc76c_51a3_0654_be30,
            0xd192_e819_d6ef_5218, 0xd699_0624_5565_a910, 0xf40e_3585_5771_202a, 0x106a_a070_32bb_d1b8,
            0x19a4_c116_b8d2_d0c8, 0x1e37_6c08_5141_ab53, 0x2748_774c_df8e_eb99, 0x34b0_bcb5_e19b_48a8,
            0x391c_0cb3_c5c9_5a63, 0x4ed8_aa4a_e341_8acb, 0x5b9c_ca4f_7763_e373, 0x682e_6ff3_d6b2_b8a3,
            0x748f_82ee_5def_b2fc, 0x78a5_636f_4317_2f60, 0x84c8_7814_a1f0_ab72, 0x8cc7_0208_1a64_39ec,
            0x90be_fffa_2363_1e28, 0xa450_6ceb_de82_bde9, 0xbef9_a3f7_b2c6_7915, 0xc671_78f2_e372_532b,
            0xca27_3ece_ea26_619c, 0xd186_b8c7_21c0_c207, 0xeada_7dd6_cde0_eb1e, 0xf57d_4f7f_ee6e_d178,
            0x06f0_67aa_7217_6fba, 0x0a63_7dc5_a2c8_98a6, 0x113f_9804_bef9_0dae, 0x1b71_0b35_131c_471b,
            0x28db_77f5_2304_7d84, 0x32ca_ab7b_40c7_2493, 0x3c9e_be0a_15c9_bebc, 0x431d_67c4_9c10_0d4c,
            0x4cc5_d4be_cb3e_42b6, 0x597f_299c_fc65_7e2a, 0x5fcb_6fab_3ad6_faec, 0x6c44_198c_4a47_5817,
        ],
        initialState: [
            0x6a09_e667_f3bc_c908, 0xbb67_ae85_84ca_a73b, 0x3c6e_f372_fe94_f82b, 0xa54f_f53a_5f1d_36f1,
            0x510e_527f_ade6_82d1, 0x9b05_688c_2b3e_6c1f, 0x1f83_d9ab_fb41_bd6b, 0x5be0_cd19_137e_2179,
        ],
        sum0: (28, 34, 39), sum1: (14, 18, 41), sigma0: (1, 8, 7), sigma1: (19, 61, 6)
    )

    /// The 64-byte digest of `message`.
    static func hash(_ message: [UInt8]) -> [UInt8] { function.hash(message) }
}
