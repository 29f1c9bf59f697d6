//! The values the mutators favour: lengths, counts, offsets and alignments at the limits the
//! specs draw (spec/gguf.json limits, spec/container.json), and the powers of two and
//! width limits where parsers slip.

/// Name, key and string lengths: empty, one, the strict tensor-name limit (64) ± 1, the
/// one-byte and two-byte length boundaries (255/256, 65,535/65,536), a page.
pub const LENGTHS: &[u64] = &[
    0, 1, 2, 8, 63, 64, 65, 127, 128, 255, 256, 4095, 4096, 65535, 65536,
];

/// Element counts actually written out (arrays, objects, tensors): around 1,000 and the
/// powers of two a chunked or inline-capacity path switches at.
pub const COUNTS: &[u64] = &[
    0, 1, 2, 3, 16, 255, 256, 999, 1000, 1001, 1023, 1024, 1025, 2048, 4096,
];

/// Counts that are declared but not backed by bytes (a lying header): 2^30 ± 1, 2^31, 2^32,
/// 2^61 (× 8 bytes wraps), 2^63, u64::MAX.
pub const LYING_COUNTS: &[u64] = &[
    1 << 16,
    (1 << 30) - 1,
    1 << 30,
    (1 << 30) + 1,
    1 << 31,
    1 << 32,
    1 << 61,
    1 << 62,
    1 << 63,
    u64::MAX,
];

/// Integers for numeric fields (offsets, sizes, dims, KV values).
pub const INTEGERS: &[u64] = &[
    0,
    1,
    2,
    3,
    31,
    32,
    63,
    64,
    127,
    128,
    255,
    256,
    384,
    4095,
    4096,
    65535,
    65536,
    (1 << 31) - 1,
    1 << 31,
    (1 << 32) - 1,
    1 << 32,
    1 << 53,
    (1 << 63) - 1,
    1 << 63,
    u64::MAX - 4095,
    u64::MAX,
];

/// Tensor dimensions: small block multiples, the 32-bit boundary, values whose products wrap.
pub const DIMS: &[u64] = &[
    0,
    1,
    2,
    3,
    32,
    64,
    128,
    256,
    384,
    1024,
    65536,
    1 << 31,
    1 << 32,
    (1 << 32) + 1,
    1 << 40,
    1 << 62,
    (1 << 63) - 1,
    1 << 63,
    u64::MAX,
];

/// GGUF `general.alignment` values: every power of two the spec allows up to a page, the
/// largest it allows (2^31), and invalid neighbours.
pub const ALIGNMENTS: &[u64] = &[
    0,
    1,
    2,
    3,
    4,
    8,
    16,
    24,
    32,
    64,
    128,
    256,
    4096,
    65536,
    1 << 31,
    (1 << 32) - 1,
];
