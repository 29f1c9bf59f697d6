//! The hot paths besides decode (issue #14, target 6), each with its bound:
//!
//! - `gather/*`: row gathers of a real 27B shape (perm48 at head granularity, perm_row,
//!   attn_q de-interleave), throughput = bytes gathered; bound = `memcpy/copy_from_slice/l2..dram`
//!   of `benches/codec.rs` in the same run (a gather is a copy in another order).
//! - `hadamard/fwht_blocks`: throughput = butterflies (one add + one sub of f64 each), an ops bound.
//! - `fingerprint/fp64_rows`: throughput = bytes hashed (read once); bound = memcpy read traffic.
//! - `gguf_header/*`: the 27B header (851 tensor infos, every metadata key) parsed from a sparse
//!   file of the real length; throughput = header bytes.
//! - `verify_gate/*`: each of the ten gates on the nano artifact (one gate run per iteration).
//! - `corpus/generate_and_write`: the conformance corpus generated and written to a fresh temp
//!   dir; throughput = corpus bytes.
//!
//! Run: `cargo bench --features internals --bench hotpaths` (it reaches the synthesizer, the
//! packer and verifier internals); `scripts/bench-report.py` tabulates the results.

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use ninfer_ternary::spec::HeadTiling;
use ninfer_ternary::synth::model::TernaryType;
use std::hint::black_box;

mod common;
use common::{group, random_bytes};

fn profile(name: &str) -> ninfer_ternary::spec::ModelProfile {
    ninfer_ternary::spec::profile(name).expect("built-in profile")
}

/// Row gathers on 27B shapes in PTQ1_0 rows (hidden 5120 → 1120 bytes per row).
fn gathers(cr: &mut Criterion) {
    use ninfer_ternary::perm::{attn_q_deinterleave, gather_rows, perm_rows};
    let p = profile("bonsai-2-27b");
    let row_bytes = (p.hidden as usize / 128) * 28;
    let mut g = group(cr, "gather");
    // value_z: v_heads x head_v_dim rows, permuted by perm_row.
    let tiling: HeadTiling = p.v_tiling();
    let (hd, rows) = (p.head_v_dim as usize, (p.v_heads * p.head_v_dim) as usize);
    let src = random_bytes(rows * row_bytes, 11);
    g.throughput(Throughput::Bytes(src.len() as u64));
    let order = perm_rows(tiling, hd, rows, "value_z").expect("27B shape");
    g.bench_function(BenchmarkId::new("perm_row", "value_z_27b"), |b| {
        b.iter(|| gather_rows(black_box(&src), row_bytes, &order))
    });
    // perm48 at head granularity: one "row" = a whole head of head_v_dim rows.
    let heads = tiling.head_order();
    g.bench_function(BenchmarkId::new("perm48", "value_z_27b"), |b| {
        b.iter(|| gather_rows(black_box(&src), hd * row_bytes, &heads))
    });
    // The index list itself: throughput = rows indexed (an ops bound).
    g.throughput(Throughput::Elements(rows as u64));
    g.bench_function(BenchmarkId::new("perm_rows_index", "value_z_27b"), |b| {
        b.iter(|| perm_rows(tiling, hd, black_box(rows), "value_z").unwrap())
    });
    // attn_q: query and gate heads interleaved in head_dim-row blocks.
    let qrows = (2 * p.q_heads * p.head_dim) as usize;
    let qsrc = random_bytes(qrows * row_bytes, 12);
    g.throughput(Throughput::Bytes(qsrc.len() as u64));
    let (q, gate) = attn_q_deinterleave(qrows, p.head_dim as usize, "attn_q").expect("27B");
    g.bench_function(BenchmarkId::new("attn_q", "attn_q_27b"), |b| {
        b.iter(|| {
            (
                gather_rows(black_box(&qsrc), row_bytes, &q),
                gather_rows(black_box(&qsrc), row_bytes, &gate),
            )
        })
    });
    g.finish();
}

/// The normalized Walsh-Hadamard transform at the 27B block size over 8 tokens of hidden width.
fn hadamard(cr: &mut Criterion) {
    let p = profile("bonsai-2-27b");
    let (block, n) = (p.hadamard_block as usize, 8 * p.hidden as usize);
    let x: Vec<f64> = random_bytes(n, 13)
        .iter()
        .map(|&b| b as f64 - 127.5)
        .collect();
    let mut g = group(cr, "hadamard");
    let butterflies = (n / 2) * block.trailing_zeros() as usize;
    g.throughput(Throughput::Elements(butterflies as u64));
    g.bench_function(
        BenchmarkId::new("fwht_blocks", format!("b{block}_x{n}")),
        |b| {
            b.iter_batched_ref(
                || x.clone(),
                |v| ninfer_ternary::hadamard::fwht_blocks(v, block).unwrap(),
                BatchSize::SmallInput,
            )
        },
    );
    g.finish();
}

/// The verifier's 64-bit row fingerprint over a 27B value_z tensor, row by row.
fn fingerprints(cr: &mut Criterion) {
    use ninfer_ternary::verify::rows::fp64;
    let p = profile("bonsai-2-27b");
    let row_bytes = (p.hidden as usize / 128) * 28;
    let rows = (p.v_heads * p.head_v_dim) as usize;
    let src = random_bytes(rows * row_bytes, 14);
    let mut g = group(cr, "fingerprint");
    g.throughput(Throughput::Bytes(src.len() as u64));
    g.bench_function(BenchmarkId::new("fp64_rows", "value_z_27b"), |b| {
        b.iter(|| {
            black_box(&src)
                .chunks_exact(row_bytes)
                .fold(0u64, |a, r| a ^ fp64(r))
        })
    });
    g.finish();
}

/// The full 27B header (every tensor info, no tensor data) in a sparse temp file of the real
/// file length, memory-mapped: parse touches only the header pages.
fn gguf_header(cr: &mut Criterion) {
    use ninfer_ternary::gguf::{parse, Mode};
    use ninfer_ternary::synth::model::writer_for;
    let p = profile("bonsai-2-27b");
    let (w, _) = writer_for(&p, TernaryType::Ptq1_0, 0).expect("27B writer");
    let header = w.header_bytes().expect("header");
    let len = w.file_len().expect("file length");
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("27b-header.gguf");
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)
        .expect("create");
    std::io::Write::write_all(&mut &f, &header).expect("write header");
    f.set_len(len).expect("sparse length");
    // SAFETY: a private temp file nobody else writes while it is mapped.
    let map = unsafe { memmap2::Mmap::map(&f) }.expect("map");
    let tensors = parse(&map, Mode::Strict).expect("parses").tensors.len();
    assert_eq!(tensors, 851, "the 27B profile's tensor count");
    let mut g = group(cr, "gguf_header");
    g.throughput(Throughput::Bytes(header.len() as u64));
    for (mode, m) in [("strict", Mode::Strict), ("spec", Mode::Spec)] {
        g.bench_function(BenchmarkId::new(format!("parse_{mode}"), "27b_851"), |b| {
            b.iter(|| parse(black_box(&map), m).unwrap().tensors.len())
        });
    }
    g.finish();
}

/// Each verifier gate on the nano PTQ1_0 artifact (synthesized and packed in memory once, with
/// reference dumps in a temp dir), plus the whole `verify`.
fn verify_gates(cr: &mut Criterion) {
    use ninfer_ternary::ninfer::Artifact;
    use ninfer_ternary::spec::GateStep;
    use ninfer_ternary::verify::{self, rows::Blocks, Ctx, Options};
    // The nano fixture (synth -> template -> pack, default options), as testkit's `nano::packed`
    // builds it (the testkit crate is not a dependency of this crate: it enables `internals`).
    let nano = profile("bonsai-nano");
    let src =
        ninfer_ternary::synth::model::model_bytes(&nano, TernaryType::Ptq1_0, 1).expect("model");
    let tpl = ninfer_ternary::synth::template::template_bytes(&nano).expect("template");
    let art = ninfer_ternary::pack::pack_bytes(&src, &tpl, &Default::default()).expect("pack");
    let dumps = tempfile::tempdir().expect("temp dir");
    let a = Artifact::parse(&art).expect("artifact");
    verify::dumps::write_reference(&a, dumps.path(), None, 0, Default::default()).expect("dumps");
    let (emb, ora) = (dumps.path().join("embedding"), dumps.path().join("oracles"));
    let opts = Options {
        template: Some(&tpl),
        sweep: true,
        dump: Some(&emb),
        oracle_dump: Some(&ora),
        ..Default::default()
    };
    let gg = ninfer_ternary::gguf::parse(&src, ninfer_ternary::gguf::Mode::Strict).expect("gguf");
    let (profile, layers) =
        ninfer_ternary::mapping::profile::resolve_profile(&gg, None).expect("profile");
    let format = ninfer_ternary::mapping::profile::ternary_format(&gg).expect("format");
    let ta = Artifact::parse(&tpl).expect("template");
    let ctx = Ctx {
        artifact: &a,
        gguf: &gg,
        template: Some(&ta),
        profile,
        layers,
        format,
        blocks: Blocks::for_format(format).expect("blocks"),
        // A full synthetic GGUF: nothing is out of the reduced source's reach.
        out_of_scope: Vec::new(),
        // Not a minimal artifact: every gate runs.
        minimal: None,
        opts,
    };
    let mut g = group(cr, "verify_gate");
    for &step in GateStep::ALL {
        let run = |c: &Ctx<'_>| match step {
            GateStep::Provenance => verify::provenance::run(c),
            GateStep::Inspect => verify::inspect::run(c),
            GateStep::PayloadOrder => verify::payload_order::run(c),
            GateStep::RowOrder => verify::row_order::run(c),
            GateStep::RowOrderSweep => verify::row_order::sweep(c),
            GateStep::Assembly => verify::assembly::run(c),
            GateStep::Signs => verify::signs::run(c),
            GateStep::DenseValues => verify::dense::run(c),
            GateStep::Embedding => verify::embedding::run(c),
            GateStep::EngineOracles => verify::oracles::run(c),
        };
        // Every gate passes on the unmutated artifact: the bench measures the real work.
        let f = run(&ctx).expect("gate runs");
        assert!(
            f.status == verify::Verdict::Pass,
            "{} did not pass: {f:?}",
            step.as_str()
        );
        g.bench_function(BenchmarkId::new(step.as_str(), "nano_ptq1_0"), |b| {
            b.iter(|| run(black_box(&ctx)).unwrap())
        });
    }
    g.bench_function(BenchmarkId::new("all_ten", "nano_ptq1_0"), |b| {
        b.iter(|| verify::verify("a", black_box(&art), "g", &src, opts).unwrap())
    });
    g.finish();
}

/// The conformance corpus generated in memory and written to a fresh temp dir.
fn corpus(cr: &mut Criterion) {
    let total = ninfer_ternary::corpus::generate()
        .expect("corpus")
        .total_bytes();
    let mut g = group(cr, "corpus");
    g.throughput(Throughput::Bytes(total));
    g.bench_function(BenchmarkId::new("generate_and_write", "conformance"), |b| {
        b.iter_batched(
            || tempfile::tempdir().expect("temp dir"),
            |d| {
                ninfer_ternary::corpus::generate()
                    .unwrap()
                    .write(d.path())
                    .unwrap();
                d
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

criterion_group!(
    benches,
    gathers,
    hadamard,
    fingerprints,
    gguf_header,
    verify_gates,
    corpus
);
criterion_main!(benches);
