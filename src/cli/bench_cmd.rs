//! `bench-decode`: single-thread decode throughput of our fast paths on a deterministic GGUF
//! (PQ2_0, PTQ1_0, TQ1_0, TQ2_0 slabs of random code bytes with finite scales), written to a
//! file so a peer (scripts/bench_vs_gguf_py.py times gguf-py's numpy dequantize) reads the very
//! same bytes in the same run. Also measures the machine's copy bandwidth. Criterion benches
//! (benches/codec.rs) remain the record; this is the side-by-side comparison.

use crate::codec::Codec;
use crate::gguf::GgufWriter;
use crate::rng::Rng;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

const TYPES: [(Codec, u32); 4] = [
    (Codec::Pq2_0, 142),
    (Codec::Ptq1_0, 143),
    (Codec::Tq1_0, 34),
    (Codec::Tq2_0, 35),
];

/// The block every slab width must be a whole number of: the largest of [`TYPES`]' blocks.
fn widest_block() -> u64 {
    TYPES
        .iter()
        .map(|(c, _)| c.block_elems() as u64)
        .max()
        .unwrap_or(1)
}

/// `--cols` (clap value parser, so a bad width is `cli.usage` before any work): a positive
/// multiple of every format's block, so each slab row is whole blocks of each format.
pub(crate) fn parse_cols(s: &str) -> Result<u64, String> {
    let v: u64 = (s.trim().parse()).map_err(|_| format!("'{s}' is not a column count"))?;
    let b = widest_block();
    if v == 0 || v % b != 0 {
        return Err(format!(
            "{v} columns: each slab row must be whole blocks of every format, a positive \
             multiple of {b} (TQ1_0 / TQ2_0 blocks)"
        ));
    }
    Ok(v)
}

fn slab(c: Codec, elems: usize) -> Vec<u8> {
    let mut b = vec![0u8; elems / c.block_elems() * c.block_bytes()];
    Rng::new(0xbe4c4).fill(&mut b);
    // Every codec in TYPES is a block codec with a scale; a plain one keeps its random bytes.
    let Some(so) = c.scale_offset() else {
        return b;
    };
    for blk in b.chunks_exact_mut(c.block_bytes()) {
        blk[so..so + 2].copy_from_slice(&0x211eu16.to_le_bytes());
    }
    b
}

fn best_of(repeat: usize, mut f: impl FnMut()) -> f64 {
    (0..repeat.max(1))
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

pub fn run(rows: u64, cols: u64, repeat: usize, write: Option<&Path>) -> crate::Result<ExitCode> {
    let elems = rows
        .checked_mul(cols)
        .and_then(|e| usize::try_from(e).ok())
        .ok_or_else(|| {
            crate::Error::new(
                crate::ErrorClass::CliUsage,
                "--rows/--cols",
                format!("{rows} x {cols} weights do not fit in memory's address space"),
            )
        })?;
    let slabs: Vec<Vec<u8>> = TYPES.iter().map(|(c, _)| slab(*c, elems)).collect();
    if let Some(path) = write {
        let mut w = GgufWriter::new();
        w.kv("general.architecture", "bench");
        // Mainline ids only: a mainline reader refuses the whole file at a Prism id (142/143).
        let mainline: Vec<usize> = (0..TYPES.len()).filter(|&i| TYPES[i].1 < 100).collect();
        for &i in &mainline {
            w.tensor(
                &format!("bench.{}", TYPES[i].0.name()),
                &[cols, rows],
                TYPES[i].1,
            )?;
        }
        let data: Vec<&[u8]> = mainline.iter().map(|&i| slabs[i].as_slice()).collect();
        crate::fsio::write_bytes_atomic(path, &w.to_bytes(&data)?)?;
    }
    let mut out = vec![0f32; elems];
    for ((c, _), bytes) in TYPES.iter().zip(&slabs) {
        let mut failed = None;
        let secs = best_of(repeat, || {
            if let Err(e) = c.decode(bytes, &mut out) {
                failed = Some(e);
            }
        });
        if let Some(e) = failed {
            return Err(e);
        }
        println!("{{\"reader\":\"ninfer-ternary\",\"codec\":\"{}\",\"weights\":{elems},\"seconds\":{secs:.6},\"gweights_per_s\":{:.3}}}", c.name(), elems as f64 / secs / 1e9);
    }
    let n = 256usize << 20;
    let mut src = vec![0u8; n];
    Rng::new(1).fill(&mut src);
    let mut dst = vec![0u8; n];
    let secs = best_of(repeat, || {
        std::hint::black_box(&mut dst).copy_from_slice(std::hint::black_box(&src));
        std::hint::black_box(&dst);
    });
    println!("{{\"memcpy_bytes\":{n},\"seconds\":{secs:.6},\"copy_gb_per_s\":{:.2},\"traffic_gb_per_s\":{:.2}}}", n as f64 / secs / 1e9, 2.0 * n as f64 / secs / 1e9);
    Ok(ExitCode::SUCCESS)
}
