//! Whole-tensor decode on every core: block-aligned chunks, one `crate::pool::workers` worker
//! each (the calling thread the first; a spawn the OS refuses runs its chunk on the calling
//! thread), every chunk through the same fast decoder as [`Codec::decode`] (so the output is
//! the same bytes).

use super::{simd, Codec};
use crate::error::Result;

/// Below this many output elements per thread the spawn costs more than it saves. On the CI VM
/// a scoped spawn + join costs ~100 µs (bench `parallel_overhead/spawn_join`), and two threads
/// first beat one at 4 Mi weights (bench `split_crossover`, 2026-12-02: PQ2_0 0.66x at 2 Mi,
/// 1.44x at 4 Mi; PTQ1_0 0.72x, 1.17x; benches/RESULTS.md). A machine with cheaper spawns
/// loses at most the split of a tensor under 4 Mi weights, a fraction of a millisecond.
pub const MIN_ELEMS_PER_THREAD: usize = 1 << 21;

/// The threshold in force: [`MIN_ELEMS_PER_THREAD`], or the small one tests set so that small
/// inputs split (the output is the same bytes either way, so a concurrent test that sees the
/// lower value is unaffected).
static MIN_ELEMS_NOW: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(MIN_ELEMS_PER_THREAD);

fn min_elems_per_thread() -> usize {
    MIN_ELEMS_NOW.load(std::sync::atomic::Ordering::Relaxed)
}

/// Makes inputs from a few thousand elements split, so that tests exercise the split on small
/// inputs; returns the elements per thread now in force.
#[cfg(test)]
pub(crate) fn split_small_inputs_for_tests() -> usize {
    MIN_ELEMS_NOW.store(1 << 12, std::sync::atomic::Ordering::Relaxed);
    min_elems_per_thread()
}

pub use crate::pool::available_threads as default_threads;

/// Decodes whole blocks like [`Codec::decode`] (same length contract and errors, bit-identical
/// output) split into block-aligned chunks over `threads` scoped threads (`0` = every core).
/// Small inputs stay on the calling thread.
pub fn decode_parallel(codec: Codec, bytes: &[u8], out: &mut [f32], threads: usize) -> Result<()> {
    decode_parallel_with(codec, bytes, out, threads, min_elems_per_thread())
}

/// [`decode_parallel`] with its split threshold given: at most one thread per
/// `min_elems_per_thread` output elements (the benches measure where the split starts to pay
/// with it).
pub fn decode_parallel_with(
    codec: Codec,
    bytes: &[u8],
    out: &mut [f32],
    threads: usize,
    min_elems_per_thread: usize,
) -> Result<()> {
    decode_parallel_stored(
        codec,
        bytes,
        out,
        threads,
        min_elems_per_thread,
        simd::Stores::Auto,
    )
}

/// One worker's share of a parallel decode: its blocks and their output, taken once.
type Chunk<'a> = std::sync::Mutex<Option<(&'a [u8], &'a mut [f32])>>;

/// [`decode_parallel_with`] with the store kind given (`Auto` is resolved once for the whole
/// output), so tests can force each kind on any CPU.
pub(crate) fn decode_parallel_stored(
    codec: Codec,
    bytes: &[u8],
    out: &mut [f32],
    threads: usize,
    min_elems_per_thread: usize,
    stores: simd::Stores,
) -> Result<()> {
    let blocks = codec.check_decode(bytes, out.len())?;
    let threads = if threads == 0 {
        default_threads()
    } else {
        threads
    };
    let by_size = (out.len() / min_elems_per_thread.max(1)).max(1);
    let threads = threads.min(by_size).min(blocks.max(1));
    // Chosen for the whole output: every chunk stores the same way a one-thread decode would.
    let stores = stores.resolve(out.len());
    let path = simd::active();
    if threads <= 1 {
        simd::decode_blocks_stored(codec, path, stores, bytes, out);
        return Ok(());
    }
    let per = blocks.div_ceil(threads);
    let (bb, be) = (codec.block_bytes(), codec.block_elems());
    // Every chunk is whole blocks with its matching output (checked above); worker `i` of the
    // pool takes chunk `i` (the calling thread the first: one spawn fewer per call).
    let chunks: Vec<Chunk<'_>> = bytes
        .chunks(per * bb)
        .zip(out.chunks_mut(per * be))
        .map(|c| std::sync::Mutex::new(Some(c)))
        .collect();
    crate::pool::workers(
        &crate::pool::Budget::new(chunks.len()),
        chunks.len(),
        std::thread::Builder::new,
        |i, _| {
            let chunk = chunks
                .get(i)
                .and_then(|c| c.lock().unwrap_or_else(|p| p.into_inner()).take());
            if let Some((src, dst)) = chunk {
                simd::decode_blocks_stored(codec, path, stores, src, dst);
            }
        },
    );
    Ok(())
}

/// [`decode_parallel`] into a new vector (the parallel form of [`Codec::decode_to_vec`]):
/// the allocation is sized by the whole blocks of `bytes`, never by a declared count.
pub fn decode_to_vec_parallel(codec: Codec, bytes: &[u8], threads: usize) -> Result<Vec<f32>> {
    let n = codec.blocks_in(bytes.len())? * codec.block_elems();
    let mut out = super::alloc_f32(n)?;
    decode_parallel(codec, bytes, &mut out, threads)?;
    Ok(out)
}

/// Rows `rows` of a row-major tensor of `k` values per row, decoded by `decode` (a
/// row-independent decoder such as [`super::grouped_int::decode_rows`]) over `threads` scoped
/// threads (`0` = every core): the range is cut into contiguous sub-ranges, each decoded on its
/// own thread, and the pieces are concatenated in order, so the result equals
/// `decode(rows)`. Small ranges stay on the calling thread.
pub fn decode_rows_parallel<F>(
    rows: std::ops::Range<u64>,
    k: u64,
    threads: usize,
    decode: F,
) -> Result<Vec<f32>>
where
    F: Fn(std::ops::Range<u64>) -> Result<Vec<f32>> + Sync,
{
    let threads = if threads == 0 {
        default_threads()
    } else {
        threads
    };
    let n_rows = rows.end.saturating_sub(rows.start);
    let elems = n_rows.saturating_mul(k);
    let by_size = (elems / min_elems_per_thread() as u64).max(1);
    let threads = (threads as u64).min(by_size).min(n_rows.max(1));
    if threads <= 1 {
        return decode(rows);
    }
    let per = n_rows.div_ceil(threads);
    let parts: Vec<Result<Vec<f32>>> = crate::pool::workers(
        &crate::pool::Budget::new(threads as usize),
        threads as usize,
        std::thread::Builder::new,
        |t, _| {
            let t = t as u64;
            let a = rows.start + (t * per).min(n_rows);
            let b = rows.start + ((t + 1) * per).min(n_rows);
            decode(a..b)
        },
    );
    let parts = parts.into_iter().collect::<Result<Vec<_>>>()?;
    let total = parts.iter().map(Vec::len).sum();
    let mut out = Vec::new();
    out.try_reserve_exact(total)
        .map_err(|_| super::memory_error(total))?;
    for p in &parts {
        out.extend_from_slice(p);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorClass;

    /// Deterministic bytes (xorshift) with finite scales where the codec has one.
    fn slab(c: Codec, blocks: usize) -> Vec<u8> {
        let mut s = 0x2545_f491_4f6c_dd1du64;
        let mut b: Vec<u8> = (0..blocks * c.block_bytes())
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                s as u8
            })
            .collect();
        if let Some(so) = c.scale_offset() {
            for blk in b.chunks_exact_mut(c.block_bytes()) {
                blk[so..so + 2].copy_from_slice(&0x2c00u16.to_le_bytes());
            }
        }
        b
    }

    #[test]
    fn parallel_decode_equals_serial_decode_for_every_codec_and_thread_count() {
        let min = split_small_inputs_for_tests();
        for c in Codec::ALL {
            // Enough elements to split 4 ways for every codec, and not a multiple of 3 or 7.
            let blocks = (4 * min).div_ceil(c.block_elems()) + 1;
            let bytes = slab(c, blocks);
            let want = c.decode_to_vec(&bytes).unwrap();
            for threads in [0, 1, 2, 3, 7] {
                let mut got = vec![f32::NAN; want.len()];
                decode_parallel(c, &bytes, &mut got, threads).unwrap();
                assert!(
                    got.iter()
                        .map(|v| v.to_bits())
                        .eq(want.iter().map(|v| v.to_bits())),
                    "{} with {threads} threads",
                    c.name()
                );
            }
        }
    }

    /// Row-range decoders of two registry formats on random payloads big enough to split, at
    /// several thread counts, equal the one-call decode bit for bit (NaN payloads included).
    #[test]
    fn row_parallel_decode_equals_the_serial_row_decode() {
        let (n, k) = (512u64, 512u64);
        assert!(
            n * k >= 3 * split_small_inputs_for_tests() as u64,
            "must split"
        );
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let nv = slab(
            Codec::F32,
            (super::super::nvfp4::geometry(n, k).unwrap().2 / 4) as usize,
        );
        let fp = slab(
            Codec::F32,
            (super::super::fp8_row::geometry(n, k).unwrap().1 / 4) as usize,
        );
        for (what, payload, dec) in [
            (
                "nvfp4",
                &nv,
                super::super::nvfp4::decode_rows as fn(_, _, _, _) -> _,
            ),
            ("fp8_row", &fp, super::super::fp8_row::decode_rows),
        ] {
            for rows in [0..n, 3..n - 5, 7..8, 9..9] {
                let want = dec(n, k, payload, rows.clone()).unwrap();
                for threads in [0, 1, 2, 3, 7] {
                    let got =
                        decode_rows_parallel(rows.clone(), k, threads, |r| dec(n, k, payload, r))
                            .unwrap();
                    assert_eq!(bits(&got), bits(&want), "{what} {rows:?} {threads} threads");
                }
            }
            // Errors of the row decoder come through (rows beyond the tensor).
            let e = decode_rows_parallel(0..n + 1, k, 2, |r| dec(n, k, payload, r)).unwrap_err();
            assert_eq!(e.class(), ErrorClass::CliUsage);
        }
    }

    /// Negative control: a sub-range decoder that ignores where its range starts (a chunk
    /// written from row 0 again) must make the parallel result differ from the serial one.
    #[test]
    fn the_row_comparison_catches_a_misaddressed_chunk() {
        split_small_inputs_for_tests();
        let (n, k) = (512u64, 512u64);
        let fp = slab(
            Codec::F32,
            (super::super::fp8_row::geometry(n, k).unwrap().1 / 4) as usize,
        );
        let dec = |r: std::ops::Range<u64>| super::super::fp8_row::decode_rows(n, k, &fp, r);
        let want = dec(0..n).unwrap();
        let wrong = decode_rows_parallel(0..n, k, 2, |r| dec(0..r.end - r.start)).unwrap();
        assert_eq!(wrong.len(), want.len());
        assert!(want
            .iter()
            .zip(&wrong)
            .any(|(a, b)| a.to_bits() != b.to_bits()));
    }

    #[test]
    fn parallel_decode_keeps_the_length_contract() {
        let c = Codec::Ptq1_0;
        let bytes = slab(c, 3);
        let mut out = vec![0f32; 3 * c.block_elems() - 1];
        let e = decode_parallel(c, &bytes, &mut out, 2).unwrap_err();
        assert_eq!(e.class(), ErrorClass::CodecLength);
        let e = decode_parallel(c, &bytes[..bytes.len() - 1], &mut out, 2).unwrap_err();
        assert_eq!(e.class(), ErrorClass::CodecLength);
        decode_parallel(c, &[], &mut [], 2).unwrap();
    }
}
