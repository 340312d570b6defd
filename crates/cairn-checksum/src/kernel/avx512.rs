//! cairn's own CRC32C kernel for x86-64 CPUs with AVX-512 and VPCLMULQDQ.
//!
//! Why it exists: the checksum crates are at the limit for long buffers, but HDFS-style 512-byte
//! chunks are dominated by per-call overhead (dispatch, setup, the final reduction). This kernel
//! is compiled together with the chunk loop, so a whole block is checksummed in one call and the
//! out-of-order core overlaps the reduction of one chunk with the folding of the next.
//!
//! The math (reflected CRC, carry-less multiplication folding): a 128-bit lane `A = H·x^64 + L`
//! that sits `T` bits before another lane contributes `A·x^T ≡ H·(x^(T+32) mod P)·x^32 +
//! L·(x^(T-32) mod P)·x^32` to it. Each product is a 64 × 33-bit carry-less multiply whose result
//! is already aligned with the destination lane, so folding is two `vpclmulqdq` and one
//! three-way XOR per 128-bit lane. The last 128-bit lane `A` is turned into the CRC register
//! `A·x^32 mod P` with two `crc32` instructions (each computes `(c·x^64 + V·x^32) mod P`).
//!
//! One `vpclmulqdq` folds 32 bytes; one `crc32` instruction takes 8. Which unit is faster
//! depends on the CPU (AMD Zen 5 retires about one `vpclmulqdq` every two cycles and two `crc32`
//! per cycle; Intel's server cores the reverse), and each alone reaches about half of what the
//! core can load. So the kernel keeps both busy: small chunks are dealt out whole to the vector
//! unit and to scalar `crc32` streams (see [`chunks_hybrid`]); a long buffer is cut into a
//! vector region and six scalar regions whose CRCs are shifted into place and combined
//! (see [`update_hybrid`]). Whether the mix beats the vector unit alone is measured once per
//! process ([`Tuning`]), since the answer is a property of the core, not of the code.

use core::arch::x86_64::*;

/// The CRC32C (Castagnoli) generator polynomial without its x^32 term, in normal bit order.
const CASTAGNOLI: u32 = 0x1EDC_6F41;

/// x^n mod P in normal bit order (bit d is the coefficient of x^d), by square-and-multiply.
const fn x_pow_mod(n: u32) -> u32 {
    let mut result: u32 = 1;
    let mut square: u32 = 2;
    let mut e = n;
    while e != 0 {
        if e & 1 != 0 {
            result = mul_mod(result, square);
        }
        square = mul_mod(square, square);
        e >>= 1;
    }
    result
}

/// The 33-bit multiplier, in reflected order, for `x^n mod P` (see the module doc).
const fn reflected_multiplier(n: u32) -> u64 {
    (x_pow_mod(n).reverse_bits() as u64) << 1
}

/// The (low-qword, high-qword) multipliers that move a 128-bit lane forward by `bytes`.
const fn fold_pair(bytes: u32) -> (u64, u64) {
    (
        reflected_multiplier(bytes * 8 + 32),
        reflected_multiplier(bytes * 8 - 32),
    )
}

const FOLD_256B: (u64, u64) = fold_pair(256);
const FOLD_128B: (u64, u64) = fold_pair(128);
const FOLD_64B: (u64, u64) = fold_pair(64);
const FOLD_48B: (u64, u64) = fold_pair(48);
const FOLD_32B: (u64, u64) = fold_pair(32);
const FOLD_16B: (u64, u64) = fold_pair(16);

/// Shifts a CRC register `v` forward by `n` bytes of zeros: `v·x^(8n) mod P`, given
/// `k = reflected_multiplier(8n - 32)`. One carry-less multiply and one `crc32` reduction.
#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx512bw,vpclmulqdq,pclmulqdq,sse4.2")]
fn shift(v: u32, k: u64) -> u32 {
    let p = _mm_clmulepi64_si128::<0x00>(_mm_cvtsi32_si128(v as i32), _mm_cvtsi64_si128(k as i64));
    _mm_crc32_u64(0, _mm_cvtsi128_si64(p) as u64) as u32
}

/// a·b mod P in normal bit order.
const fn mul_mod(a: u32, b: u32) -> u32 {
    let mut r = 0;
    let mut a = a;
    let mut i = 0;
    while i < 32 {
        if (b >> i) & 1 != 0 {
            r ^= a;
        }
        let carry = a & 0x8000_0000 != 0;
        a <<= 1;
        if carry {
            a ^= CASTAGNOLI;
        }
        i += 1;
    }
    r
}

/// Scalar streams of the long-buffer hybrid and the bytes each takes per round: six `crc32`
/// chains of six instructions keep two `crc32` per cycle busy for the ~18 cycles the vector unit
/// needs to fold its 256 bytes.
const BIG_STREAMS: usize = 7;
const BIG_STREAM_BYTES: usize = 40;
const BIG_ROUND: usize = 256 + BIG_STREAMS * BIG_STREAM_BYTES;
/// A long buffer is processed in pieces of at most this many rounds (about 272 KiB).
const BIG_MAX_ROUNDS: usize = 512;
/// Buffers shorter than this many rounds go to the vector unit alone: the combining step costs
/// about as much as a few rounds.
const BIG_MIN_ROUNDS: usize = 8;

/// `REGION_SHIFT[m]` moves a CRC register forward over `m` rounds' worth of one scalar stream
/// (`m · BIG_STREAM_BYTES` bytes). Indexed up to all six streams of the longest piece so that
/// the seven registers of a piece are shifted into place independently, not one after another.
static REGION_SHIFT: [u64; BIG_STREAMS * BIG_MAX_ROUNDS + 1] = {
    let mut t = [0u64; BIG_STREAMS * BIG_MAX_ROUNDS + 1];
    let step = x_pow_mod(8 * BIG_STREAM_BYTES as u32);
    let mut x = x_pow_mod(8 * BIG_STREAM_BYTES as u32 - 32);
    let mut m = 1;
    while m <= BIG_STREAMS * BIG_MAX_ROUNDS {
        t[m] = (x.reverse_bits() as u64) << 1;
        x = mul_mod(x, step);
        m += 1;
    }
    t
};

/// Which kernels this core runs fastest, measured once (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Tuning {
    /// Deal small chunks out to vector and scalar units ([`chunks_hybrid`]).
    pub small_chunks_hybrid: bool,
    /// Split long buffers into vector and scalar regions ([`update_hybrid`]).
    pub long_buffer_hybrid: bool,
}

impl Tuning {
    /// Every combination, so tests can cover each path whatever this CPU prefers.
    #[cfg(test)]
    pub(crate) const ALL: [Tuning; 4] = [
        Tuning {
            small_chunks_hybrid: false,
            long_buffer_hybrid: false,
        },
        Tuning {
            small_chunks_hybrid: true,
            long_buffer_hybrid: false,
        },
        Tuning {
            small_chunks_hybrid: false,
            long_buffer_hybrid: true,
        },
        Tuning {
            small_chunks_hybrid: true,
            long_buffer_hybrid: true,
        },
    ];

    /// The tuning for this process, measured on first use (well under a millisecond).
    pub(crate) fn get() -> Tuning {
        static TUNING: std::sync::OnceLock<Tuning> = std::sync::OnceLock::new();
        *TUNING.get_or_init(Tuning::measure)
    }

    fn measure() -> Tuning {
        debug_assert!(is_supported());
        let data: Vec<u8> = (0..64 * 1024u32)
            .map(|i| (i.wrapping_mul(0x9E37_79B1) >> 11) as u8)
            .collect();
        let mut sums = vec![0u8; data.len() / 512 * 4];
        let plain = Tuning {
            small_chunks_hybrid: false,
            long_buffer_hybrid: false,
        };
        let mixed = Tuning {
            small_chunks_hybrid: true,
            long_buffer_hybrid: true,
        };
        let time = |f: &mut dyn FnMut()| {
            let t = std::time::Instant::now();
            f();
            t.elapsed()
        };
        // Alternate the candidates and keep each one's best time, so that a burst of load from
        // another process cannot favour one of them.
        let mut best = [std::time::Duration::MAX; 4];
        let mut sink = 0u32;
        for _ in 0..40 {
            // SAFETY (all four): `measure` runs only from `get`, which runs only behind
            // `is_supported()`, so every instruction enabled on these functions exists.
            best[0] = best[0].min(time(&mut || unsafe {
                chunks_impl(&data, 512, &mut sums, plain)
            }));
            best[1] = best[1].min(time(&mut || unsafe {
                chunks_impl(&data, 512, &mut sums, mixed)
            }));
            best[2] = best[2].min(time(&mut || {
                sink ^= unsafe { update_impl(!0, &data, plain) }
            }));
            best[3] = best[3].min(time(&mut || {
                sink ^= unsafe { update_impl(!0, &data, mixed) }
            }));
        }
        std::hint::black_box(sink);
        Tuning {
            small_chunks_hybrid: best[1] < best[0],
            long_buffer_hybrid: best[3] < best[2],
        }
    }
}

/// True when this CPU can run the kernel.
pub(crate) fn is_supported() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512vl")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("vpclmulqdq")
        && std::arch::is_x86_feature_detected!("pclmulqdq")
        && std::arch::is_x86_feature_detected!("sse4.2")
}

/// Advances a raw (not inverted) CRC32C register over `data`.
///
/// Only reachable through [`super::Engine`] values built after [`is_supported`] returned true.
pub(crate) fn update(state: u32, data: &[u8]) -> u32 {
    update_tuned(state, data, Tuning::get())
}

/// Writes the big-endian CRC32C of every `bytes_per_checksum` chunk of `data` into `sums`.
///
/// Same reachability rule as [`update`]; `sums` holds exactly one 4-byte slot per chunk.
pub(crate) fn chunks(data: &[u8], bytes_per_checksum: usize, sums: &mut [u8]) {
    chunks_tuned(data, bytes_per_checksum, sums, Tuning::get());
}

/// [`update`] with a given tuning (tests cover every path this way).
pub(crate) fn update_tuned(state: u32, data: &[u8], tuning: Tuning) -> u32 {
    assert!(
        is_supported(),
        "AVX-512 CRC32C kernel called on a CPU without it"
    );
    // SAFETY: the CPU has every feature `update_impl` enables (asserted just above; the
    // assertion is a cached atomic load).
    unsafe { update_impl(state, data, tuning) }
}

/// [`chunks`] with a given tuning.
pub(crate) fn chunks_tuned(
    data: &[u8],
    bytes_per_checksum: usize,
    sums: &mut [u8],
    tuning: Tuning,
) {
    assert!(
        is_supported(),
        "AVX-512 CRC32C kernel called on a CPU without it"
    );
    // SAFETY: as in `update_tuned`.
    unsafe { chunks_impl(data, bytes_per_checksum, sums, tuning) }
}

#[target_feature(enable = "avx512f,avx512vl,avx512bw,vpclmulqdq,pclmulqdq,sse4.2")]
fn update_impl(state: u32, data: &[u8], tuning: Tuning) -> u32 {
    if tuning.long_buffer_hybrid && data.len() >= BIG_MIN_ROUNDS * BIG_ROUND {
        update_hybrid(state, data)
    } else {
        update_vector(state, data)
    }
}

#[target_feature(enable = "avx512f,avx512vl,avx512bw,vpclmulqdq,pclmulqdq,sse4.2")]
fn chunks_impl(data: &[u8], bytes_per_checksum: usize, sums: &mut [u8], tuning: Tuning) {
    let (data, sums) = if tuning.small_chunks_hybrid {
        match bytes_per_checksum {
            512 => chunks_hybrid_all::<512>(data, sums),
            1024 => chunks_hybrid_all::<1024>(data, sums),
            2048 => chunks_hybrid_all::<2048>(data, sums),
            4096 => chunks_hybrid_all::<4096>(data, sums),
            8192 => chunks_quad_all::<8192>(data, sums),
            16384 => chunks_quad_all::<16384>(data, sums),
            32768 => chunks_quad_all::<32768>(data, sums),
            65536 => chunks_quad_all::<65536>(data, sums),
            _ => (data, sums),
        }
    } else {
        (data, sums)
    };
    for (chunk, sum) in data
        .chunks(bytes_per_checksum)
        .zip(sums.chunks_exact_mut(4))
    {
        let crc = !update_impl(!0, chunk, tuning);
        sum.copy_from_slice(&crc.to_be_bytes());
    }
}

/// Chunks the vector unit takes in one full hybrid group.
const HYBRID_VECTOR: usize = 6;
/// Chunks the scalar `crc32` streams take in one full hybrid group.
const HYBRID_SCALAR: usize = 7;
/// How many groups ahead of the one being checksummed to prefetch (1 measured best on Zen 5;
/// 2-4 were slower from DRAM).
const PREFETCH_GROUPS: usize = 1;

/// Runs every whole chunk through [`chunks_hybrid`], in full groups and then one smaller group
/// with the same vector:scalar balance; returns the short last chunk, if any, and its slot.
#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx512bw,vpclmulqdq,pclmulqdq,sse4.2")]
fn chunks_hybrid_all<'a, 'b, const BPC: usize>(
    mut data: &'a [u8],
    mut sums: &'b mut [u8],
) -> (&'a [u8], &'b mut [u8]) {
    const GROUP: usize = HYBRID_VECTOR + HYBRID_SCALAR;
    while data.len() >= GROUP * BPC {
        let (group, rest) = data.split_at(GROUP * BPC);
        let (group_sums, rest_sums) = sums.split_at_mut(GROUP * 4);
        let ahead = rest
            .get((PREFETCH_GROUPS - 1) * GROUP * BPC..)
            .unwrap_or(&[]);
        chunks_hybrid::<HYBRID_VECTOR, HYBRID_SCALAR, BPC>(group, group_sums, ahead);
        data = rest;
        sums = rest_sums;
    }
    let whole = data.len() / BPC;
    let (group, rest) = data.split_at(whole * BPC);
    let (group_sums, rest_sums) = sums.split_at_mut(whole * 4);
    macro_rules! smaller_group {
        ($($n:literal => ($v:literal, $s:literal)),* $(,)?) => {
            match whole {
                $($n => chunks_hybrid::<$v, $s, BPC>(group, group_sums, &[]),)*
                0 => {}
                1 => {
                    let crc = !update_vector(!0, group);
                    group_sums.copy_from_slice(&crc.to_be_bytes());
                }
                _ => unreachable!("fewer than a full group remain"),
            }
        };
    }
    smaller_group!(
        2 => (1, 1), 3 => (1, 2), 4 => (2, 2), 5 => (2, 3), 6 => (3, 3), 7 => (3, 4),
        8 => (3, 5), 9 => (4, 5), 10 => (4, 6), 11 => (5, 6), 12 => (5, 7), 13 => (6, 7),
    );
    (rest, rest_sums)
}

/// Runs every whole group of four chunks through [`chunks_quad`]; returns what is left.
#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx512bw,vpclmulqdq,pclmulqdq,sse4.2")]
fn chunks_quad_all<'a, 'b, const BPC: usize>(
    mut data: &'a [u8],
    mut sums: &'b mut [u8],
) -> (&'a [u8], &'b mut [u8]) {
    while data.len() >= 4 * BPC {
        let (group, rest) = data.split_at(4 * BPC);
        let (group_sums, rest_sums) = sums.split_at_mut(16);
        chunks_quad::<BPC>(group, group_sums, rest);
        data = rest;
        sums = rest_sums;
    }
    (data, sums)
}

/// Checksums four large chunks of `BPC` bytes at once: two folded by the vector unit, two by
/// eight scalar `crc32` streams (four per chunk, each over a quarter of it, shifted into place
/// at the end by compile-time multipliers). Dealing whole chunks out avoids the per-chunk
/// combining of [`update_hybrid`], which costs the most on HBase's 16 KiB chunks.
#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx512bw,vpclmulqdq,pclmulqdq,sse4.2")]
fn chunks_quad<const BPC: usize>(group: &[u8], sums: &mut [u8], next: &[u8]) {
    assert!(BPC.is_multiple_of(256) && group.len() == 4 * BPC && sums.len() == 16);
    let quarter = BPC / 4;
    let seed = _mm512_zextsi128_si512(_mm_cvtsi32_si128(-1));
    let mut z: [[__m512i; 4]; 2] = core::array::from_fn(|c| {
        core::array::from_fn(|i| {
            let v = load512(&group[c * BPC + 64 * i..]);
            if i == 0 {
                _mm512_xor_si512(v, seed)
            } else {
                v
            }
        })
    });
    // Stream t of scalar chunk c is crc[4 * c + t]; only a chunk's first stream starts from the
    // CRC's initial value, the others from zero, so their registers add up after shifting.
    let mut crc = [0u64; 8];
    crc[0] = 0xFFFF_FFFF;
    crc[4] = 0xFFFF_FFFF;
    let k = multipliers512(FOLD_256B);
    for r in 0..BPC / 256 {
        if next.len() >= 4 * BPC {
            for c in 0..4 {
                for line in 0..4 {
                    _mm_prefetch::<_MM_HINT_T0>(
                        next[c * BPC + 256 * r + 64 * line..].as_ptr().cast(),
                    );
                }
            }
        }
        if r > 0 {
            for (c, zc) in z.iter_mut().enumerate() {
                for (i, zi) in zc.iter_mut().enumerate() {
                    *zi = fold512(*zi, k, load512(&group[c * BPC + 256 * r + 64 * i..]));
                }
            }
        }
        for (j, reg) in crc.iter_mut().enumerate() {
            let base = (2 + j / 4) * BPC + (j % 4) * quarter + 64 * r;
            for q in 0..8 {
                *reg = _mm_crc32_u64(*reg, read_u64(&group[base + 8 * q..]));
            }
        }
    }
    let k128 = multipliers512(FOLD_128B);
    let k64 = multipliers512(FOLD_64B);
    for (c, [z0, z1, z2, z3]) in z.into_iter().enumerate() {
        let z2 = fold512(z0, k128, z2);
        let z3 = fold512(z1, k128, z3);
        let value = !reduce128(lanes_to_128(fold512(z2, k64, z3)));
        sums[4 * c..4 * c + 4].copy_from_slice(&value.to_be_bytes());
    }
    let shifts = QuarterShifts::<BPC>::K;
    for c in 0..2 {
        let r = &crc[4 * c..4 * c + 4];
        let combined = shift(r[0] as u32, shifts[0])
            ^ shift(r[1] as u32, shifts[1])
            ^ shift(r[2] as u32, shifts[2])
            ^ r[3] as u32;
        sums[8 + 4 * c..12 + 4 * c].copy_from_slice(&(!combined).to_be_bytes());
    }
}

/// Multipliers moving a register forward over three, two and one quarters of a `BPC` chunk,
/// evaluated at compile time (an associated const may depend on the generic size).
struct QuarterShifts<const BPC: usize>;

impl<const BPC: usize> QuarterShifts<BPC> {
    const K: [u64; 3] = [
        reflected_multiplier((8 * 3 * BPC / 4) as u32 - 32),
        reflected_multiplier((8 * 2 * BPC / 4) as u32 - 32),
        reflected_multiplier((8 * BPC / 4) as u32 - 32),
    ];
}

/// Checksums `V + S` whole chunks of `BPC` bytes at once: `V` by carry-less folding in vector
/// registers and `S` by the scalar `crc32` instruction, interleaved 64 bytes at a time so that
/// both execution units stay busy. A compile-time chunk size turns every address into a constant
/// offset from one base register, which leaves enough registers for up to eight scalar streams.
/// `next` is the data after the group, prefetched while this group is checksummed.
#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx512bw,vpclmulqdq,pclmulqdq,sse4.2")]
fn chunks_hybrid<const V: usize, const S: usize, const BPC: usize>(
    group: &[u8],
    sums: &mut [u8],
    next: &[u8],
) {
    assert!(BPC.is_multiple_of(64) && group.len() == (V + S) * BPC && sums.len() == (V + S) * 4);
    let seed = _mm512_zextsi128_si512(_mm_cvtsi32_si128(-1));
    let mut acc: [__m512i; V] =
        core::array::from_fn(|c| _mm512_xor_si512(load512(&group[c * BPC..]), seed));
    let mut crc: [u64; S] = [0xFFFF_FFFF; S];
    let k = multipliers512(FOLD_64B);
    for step in 0..BPC / 64 {
        let at = step * 64;
        // The chunks read side by side look like separate streams to the hardware prefetcher,
        // which falls behind when the data comes from DRAM: ask for the same line of the next
        // group's chunks now.
        if next.len() >= (V + S) * BPC {
            for c in 0..V + S {
                _mm_prefetch::<_MM_HINT_T0>(next[c * BPC + at..].as_ptr().cast());
            }
        }
        if step > 0 {
            for (c, a) in acc.iter_mut().enumerate() {
                *a = fold512(*a, k, load512(&group[c * BPC + at..]));
            }
        }
        for (j, r) in crc.iter_mut().enumerate() {
            let base = (V + j) * BPC + at;
            for q in 0..8 {
                *r = _mm_crc32_u64(*r, read_u64(&group[base + 8 * q..]));
            }
        }
    }
    for (c, a) in acc.iter().enumerate() {
        let value = !reduce128(lanes_to_128(*a));
        sums[c * 4..c * 4 + 4].copy_from_slice(&value.to_be_bytes());
    }
    for (j, r) in crc.iter().enumerate() {
        let value = !(*r as u32);
        sums[(V + j) * 4..(V + j) * 4 + 4].copy_from_slice(&value.to_be_bytes());
    }
}

/// CRC register of a long buffer: a vector region and [`BIG_STREAMS`] scalar regions per piece,
/// processed side by side round by round, then combined by shifting each region's register
/// forward over the regions after it.
#[target_feature(enable = "avx512f,avx512vl,avx512bw,vpclmulqdq,pclmulqdq,sse4.2")]
fn update_hybrid(mut state: u32, mut data: &[u8]) -> u32 {
    while data.len() >= BIG_MIN_ROUNDS * BIG_ROUND {
        let rounds = (data.len() / BIG_ROUND).min(BIG_MAX_ROUNDS);
        let (piece, rest) = data.split_at(rounds * BIG_ROUND);
        let (vector, scalar) = piece.split_at(256 * rounds);
        let region = BIG_STREAM_BYTES * rounds;
        let streams: [&[u8]; BIG_STREAMS] =
            core::array::from_fn(|j| &scalar[j * region..(j + 1) * region]);

        let seed = _mm512_zextsi128_si512(_mm_cvtsi32_si128(state as i32));
        let mut z0 = _mm512_xor_si512(load512(vector), seed);
        let mut z1 = load512(&vector[64..]);
        let mut z2 = load512(&vector[128..]);
        let mut z3 = load512(&vector[192..]);
        let mut crc = [0u64; BIG_STREAMS];
        let k = multipliers512(FOLD_256B);
        for r in 0..rounds {
            if r > 0 {
                let v = &vector[256 * r..256 * r + 256];
                z0 = fold512(z0, k, load512(v));
                z1 = fold512(z1, k, load512(&v[64..]));
                z2 = fold512(z2, k, load512(&v[128..]));
                z3 = fold512(z3, k, load512(&v[192..]));
            }
            for (stream, c) in streams.iter().zip(crc.iter_mut()) {
                let words = &stream[BIG_STREAM_BYTES * r..BIG_STREAM_BYTES * (r + 1)];
                for q in 0..BIG_STREAM_BYTES / 8 {
                    *c = _mm_crc32_u64(*c, read_u64(&words[8 * q..]));
                }
            }
        }
        let k128 = multipliers512(FOLD_128B);
        z2 = fold512(z0, k128, z2);
        z3 = fold512(z1, k128, z3);
        let vector_crc = reduce128(lanes_to_128(fold512(z2, multipliers512(FOLD_64B), z3)));
        let mut combined = shift(vector_crc, REGION_SHIFT[BIG_STREAMS * rounds]);
        for (j, c) in crc.iter().enumerate() {
            let after = BIG_STREAMS - 1 - j;
            combined ^= if after == 0 {
                *c as u32
            } else {
                shift(*c as u32, REGION_SHIFT[after * rounds])
            };
        }
        state = combined;
        data = rest;
    }
    update_vector(state, data)
}

#[inline]
fn read_u64(bytes: &[u8]) -> u64 {
    u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"))
}

/// The CRC register of a 128-bit lane that ends the data: `A·x^32 mod P`.
#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx512bw,vpclmulqdq,pclmulqdq,sse4.2")]
fn reduce128(x: __m128i) -> u32 {
    let lo = _mm_cvtsi128_si64(x) as u64;
    let hi = _mm_extract_epi64::<1>(x) as u64;
    _mm_crc32_u64(_mm_crc32_u64(0, lo), hi) as u32
}

#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx512bw,vpclmulqdq,pclmulqdq,sse4.2")]
fn load512(bytes: &[u8]) -> __m512i {
    let bytes: &[u8; 64] = bytes[..64].try_into().expect("64 bytes");
    // SAFETY: `bytes` is a live reference to 64 readable bytes; the load is unaligned.
    unsafe { _mm512_loadu_si512(bytes.as_ptr().cast()) }
}

#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx512bw,vpclmulqdq,pclmulqdq,sse4.2")]
fn load128(bytes: &[u8]) -> __m128i {
    let bytes: &[u8; 16] = bytes[..16].try_into().expect("16 bytes");
    // SAFETY: `bytes` is a live reference to 16 readable bytes; the load is unaligned.
    unsafe { _mm_loadu_si128(bytes.as_ptr().cast()) }
}

#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx512bw,vpclmulqdq,pclmulqdq,sse4.2")]
fn multipliers512(pair: (u64, u64)) -> __m512i {
    _mm512_broadcast_i32x4(_mm_set_epi64x(pair.1 as i64, pair.0 as i64))
}

/// `acc` moved forward by the distance encoded in `k`, XORed into `next`.
#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx512bw,vpclmulqdq,pclmulqdq,sse4.2")]
fn fold512(acc: __m512i, k: __m512i, next: __m512i) -> __m512i {
    let lo = _mm512_clmulepi64_epi128::<0x00>(acc, k);
    let hi = _mm512_clmulepi64_epi128::<0x11>(acc, k);
    _mm512_ternarylogic_epi64::<0x96>(lo, hi, next)
}

#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx512bw,vpclmulqdq,pclmulqdq,sse4.2")]
fn fold128(acc: __m128i, k: __m128i, next: __m128i) -> __m128i {
    let lo = _mm_clmulepi64_si128::<0x00>(acc, k);
    let hi = _mm_clmulepi64_si128::<0x11>(acc, k);
    _mm_ternarylogic_epi64::<0x96>(lo, hi, next)
}

/// Folds the four 128-bit lanes of `z` (the last 64 bytes) into one.
#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx512bw,vpclmulqdq,pclmulqdq,sse4.2")]
fn lanes_to_128(z: __m512i) -> __m128i {
    // Lane 3 is already in place: its multipliers are zero and it is XORed in unchanged.
    let k = _mm512_set_epi64(
        0,
        0,
        FOLD_16B.1 as i64,
        FOLD_16B.0 as i64,
        FOLD_32B.1 as i64,
        FOLD_32B.0 as i64,
        FOLD_48B.1 as i64,
        FOLD_48B.0 as i64,
    );
    let lo = _mm512_clmulepi64_epi128::<0x00>(z, k);
    let hi = _mm512_clmulepi64_epi128::<0x11>(z, k);
    let t = _mm512_ternarylogic_epi64::<0x96>(lo, hi, _mm512_maskz_mov_epi64(0xC0, z));
    let half = _mm256_xor_si256(
        _mm512_extracti64x4_epi64::<0>(t),
        _mm512_extracti64x4_epi64::<1>(t),
    );
    _mm_xor_si128(
        _mm256_castsi256_si128(half),
        _mm256_extracti128_si256::<1>(half),
    )
}

#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx512bw,vpclmulqdq,pclmulqdq,sse4.2")]
fn update_vector(state: u32, data: &[u8]) -> u32 {
    let mut crc = state;
    let mut rest = data;
    if rest.len() >= 64 {
        let seed = _mm512_zextsi128_si512(_mm_cvtsi32_si128(crc as i32));
        let mut z;
        if rest.len() >= 256 {
            let mut z0 = _mm512_xor_si512(load512(rest), seed);
            let mut z1 = load512(&rest[64..]);
            let mut z2 = load512(&rest[128..]);
            let mut z3 = load512(&rest[192..]);
            rest = &rest[256..];
            if rest.len() >= 256 {
                let k = multipliers512(FOLD_256B);
                while rest.len() >= 256 {
                    z0 = fold512(z0, k, load512(rest));
                    z1 = fold512(z1, k, load512(&rest[64..]));
                    z2 = fold512(z2, k, load512(&rest[128..]));
                    z3 = fold512(z3, k, load512(&rest[192..]));
                    rest = &rest[256..];
                }
            }
            let k128 = multipliers512(FOLD_128B);
            z2 = fold512(z0, k128, z2);
            z3 = fold512(z1, k128, z3);
            z = fold512(z2, multipliers512(FOLD_64B), z3);
        } else {
            z = _mm512_xor_si512(load512(rest), seed);
            rest = &rest[64..];
        }
        if rest.len() >= 64 {
            let k = multipliers512(FOLD_64B);
            while rest.len() >= 64 {
                z = fold512(z, k, load512(rest));
                rest = &rest[64..];
            }
        }
        let mut x = lanes_to_128(z);
        if rest.len() >= 16 {
            let k = _mm_set_epi64x(FOLD_16B.1 as i64, FOLD_16B.0 as i64);
            while rest.len() >= 16 {
                x = fold128(x, k, load128(rest));
                rest = &rest[16..];
            }
        }
        crc = reduce128(x);
    }
    let mut words = rest.chunks_exact(8);
    for word in &mut words {
        let v = u64::from_le_bytes(word.try_into().expect("8 bytes"));
        crc = _mm_crc32_u64(crc as u64, v) as u32;
    }
    for &b in words.remainder() {
        crc = _mm_crc32_u8(crc, b);
    }
    crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn x_pow_mod_reduces_by_the_polynomial() {
        assert_eq!(x_pow_mod(31), 0x8000_0000);
        assert_eq!(x_pow_mod(32), CASTAGNOLI);
        // x^33 = x·P_low, reduced once more because P_low has its top bit clear.
        assert_eq!(x_pow_mod(33), CASTAGNOLI << 1);
        assert_eq!(mul_mod(x_pow_mod(100), x_pow_mod(1000)), x_pow_mod(1100));
    }

    fn sample(len: usize) -> Vec<u8> {
        (0..len as u64)
            .map(|i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8)
            .collect()
    }

    #[test]
    fn every_path_matches_the_portable_kernel() {
        if !is_supported() {
            eprintln!("skipped: CPU lacks AVX-512/VPCLMULQDQ");
            return;
        }
        let data = sample(3 * BIG_MAX_ROUNDS * BIG_ROUND + 1000);
        let portable = |d: &[u8]| !super::super::portable::crc32c_update(!0, d);
        for tuning in Tuning::ALL {
            assert_eq!(!update_tuned(!0, b"123456789", tuning), 0xE306_9283);
            for len in (0..2048).chain([4351, 4352, 4353, 16384, 65536, 65537]) {
                assert_eq!(
                    !update_tuned(!0, &data[..len], tuning),
                    portable(&data[..len]),
                    "{tuning:?} len {len}"
                );
            }
            // Several pieces of the long-buffer hybrid, and a piece boundary inside.
            assert_eq!(
                !update_tuned(!0, &data, tuning),
                portable(&data),
                "{tuning:?}"
            );
            for bpc in [512usize, 1024, 2048, 4096, 100, 8192, 16384, 65536] {
                for chunks in [0usize, 1, 2, 3, 4, 5, 8, 13, 14, 15, 27, 28, 29, 129] {
                    for extra in [0usize, 1, 63] {
                        let len = (chunks * bpc + extra).min(data.len() - 7);
                        let d = &data[7..7 + len];
                        let mut sums = vec![0u8; len.div_ceil(bpc) * 4];
                        chunks_tuned(d, bpc, &mut sums, tuning);
                        for (i, (c, s)) in d.chunks(bpc).zip(sums.chunks_exact(4)).enumerate() {
                            assert_eq!(
                                u32::from_be_bytes(s.try_into().unwrap()),
                                portable(c),
                                "{tuning:?} bpc {bpc} chunks {chunks} extra {extra} chunk {i}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn shift_moves_a_register_over_zeros() {
        if !is_supported() {
            return;
        }
        for rounds in [1usize, 2, 30, BIG_MAX_ROUNDS, BIG_STREAMS * BIG_MAX_ROUNDS] {
            let n = rounds * BIG_STREAM_BYTES;
            let zeros = vec![0u8; n];
            let v = 0xDEAD_BEEF;
            // SAFETY: the CPU supports the kernel (checked above).
            let shifted = unsafe { shift(v, REGION_SHIFT[rounds]) };
            assert_eq!(
                shifted,
                super::super::portable::crc32c_update(v, &zeros),
                "rounds {rounds}"
            );
        }
    }
}
