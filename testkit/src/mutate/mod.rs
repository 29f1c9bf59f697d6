//! Structure-aware mutators for the fuzz targets (libFuzzer's custom-mutator hook, wired in
//! `fuzz/src/lib.rs`).
//!
//! Byte-level mutation rarely keeps a container consistent: lengthening an object name means
//! fixing the directory length in the `.ninfer` prefix, and growing a GGUF string array means
//! writing a thousand well-formed entries. So each mutator parses its input leniently into a
//! model ([`gguf::Model`], [`ninfer::Model`], [`bundle::Model`] for dump bundles), changes one or a few *fields* — counts, lengths,
//! names, offsets, alignments, dimensions, type ids, directory members and values, favouring
//! the boundary values in [`boundary`] — and writes the model back with every length prefix,
//! count and offset consistent again (unless the mutation is a deliberate lie about one of
//! them). An input the model cannot read is left to libFuzzer's byte mutator (the caller's
//! fallback), and so is a share of all calls, so the structure mutators never starve the byte
//! mutations that find everything else.
//!
//! Everything here is a pure function of (input, seed), so a mutation sequence replays exactly
//! and this crate's tests (`tests/fuzz/fuzz_mutators.rs`) can measure what it reaches.

pub mod boundary;
pub mod bundle;
pub mod dict;
pub mod gguf;
pub mod ninfer;

use ninfer_ternary::rng::Rng;

/// The random choices of one mutation.
pub struct Dice(Rng);

impl Dice {
    /// Dice from libFuzzer's per-call seed and the input (so two inputs mutated under one seed
    /// still differ).
    pub fn new(seed: u32, input: &[u8]) -> Dice {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for &b in input.iter().take(256) {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
        Dice(Rng::new(h ^ ((seed as u64) << 17) ^ input.len() as u64))
    }

    /// A uniform draw from `0..n` (`0` when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.0.next_u64() % n as u64) as usize
        }
    }

    /// True with probability `1/n`.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    /// A raw 64-bit draw.
    pub fn u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// One element of `xs` (which must not be empty).
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }

    /// A value near a boundary: one of `table`, sometimes nudged by ±1.
    pub fn boundary(&mut self, table: &[u64]) -> u64 {
        let v = *self.pick(table);
        match self.below(6) {
            0 => v.wrapping_add(1),
            1 => v.wrapping_sub(1),
            _ => v,
        }
    }

    /// A small or boundary length, capped at `cap` (the room the output has left).
    pub fn length(&mut self, cap: usize) -> usize {
        let v = if self.one_in(3) {
            self.below(24) as u64
        } else {
            self.boundary(boundary::LENGTHS)
        };
        (v as usize).min(cap)
    }
}

/// Which mutator a target uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Container {
    /// GGUF files (`gguf_parse`).
    Gguf,
    /// `.ninfer` artifacts (`ninfer_parse`, `ninfer_roundtrip`).
    Ninfer,
    /// Dump bundles (`dumps_parse`).
    Bundle,
}

/// One structure-aware mutation of `input` for `container`: the new bytes (at most
/// `max_size`), or `None` when the input does not parse as the model or the result would not
/// fit, in which case the caller uses libFuzzer's byte mutator.
pub fn mutate(container: Container, input: &[u8], max_size: usize, seed: u32) -> Option<Vec<u8>> {
    let mut dice = Dice::new(seed, input);
    let out = match container {
        Container::Gguf => {
            let mut m = gguf::Model::parse(input)?;
            let rounds = 1 + dice.below(3) * dice.below(2);
            for _ in 0..rounds {
                m.mutate(&mut dice, max_size);
            }
            m.to_bytes()
        }
        Container::Bundle => {
            let mut m = bundle::Model::parse(input)?;
            m.mutate(&mut dice, max_size);
            m.to_bytes()
        }
        Container::Ninfer => {
            let mut m = ninfer::Model::parse(input)?;
            let rounds = 1 + dice.below(3) * dice.below(2);
            for _ in 0..rounds {
                m.mutate(&mut dice, max_size);
            }
            m.to_bytes()
        }
    };
    (out.len() <= max_size && out != input).then_some(out)
}
