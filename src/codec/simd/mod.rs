//! Runtime CPU-feature dispatch for the ternary decoders (PQ2_0 / Q2_0 g64, PTQ1_0, TQ1_0,
//! TQ2_0).
//!
//! The default build targets baseline x86-64 (SSE2) so it stays portable; the wider kernels
//! are compiled with `#[target_feature]` and chosen at run time by `is_x86_feature_detected!`.
//! Every kernel computes a value as the reference's own product `(k − 1)·d` (directly, or as a
//! per-block table `[(k − 1)·d for k in 0..4]` indexed by a lane permute), so each path is
//! bit-identical to the reference by construction; the tests prove it per path.
//!
//! [`ENV_VAR`] (`NINFER_SIMD=scalar|sse2|avx2|avx512|neon`) caps the path for the whole
//! process, read once; [`decode_with`] forces one path for one call (tests and benches).

use crate::codec::Codec;
#[cfg(any(test, feature = "internals"))]
use crate::error::{Error, ErrorClass, Result};
use std::sync::OnceLock;

#[cfg(target_arch = "aarch64")]
mod neon;
#[cfg(target_arch = "x86_64")]
mod x86;

/// Environment variable that caps the dispatched path (e.g. `NINFER_SIMD=sse2`), read once.
pub const ENV_VAR: &str = "NINFER_SIMD";

/// An instruction-set path of the fast ternary decoders, narrowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Path {
    /// Portable Rust (the table / fixed-width loops the compiler vectorises for the build target).
    Scalar,
    /// x86-64 baseline SSE2 intrinsics, 4 lanes.
    Sse2,
    /// AVX2 intrinsics, 8 lanes, variable shifts and a lane permute as the value table.
    Avx2,
    /// AVX-512F intrinsics, 16 lanes.
    Avx512,
    /// aarch64 NEON intrinsics, 4 lanes.
    Neon,
}

impl Path {
    /// Every path, narrowest first.
    pub const ALL: [Path; 5] = [
        Path::Scalar,
        Path::Sse2,
        Path::Avx2,
        Path::Avx512,
        Path::Neon,
    ];

    /// The lower-case name used by [`ENV_VAR`] and the benches.
    pub const fn name(self) -> &'static str {
        match self {
            Path::Scalar => "scalar",
            Path::Sse2 => "sse2",
            Path::Avx2 => "avx2",
            Path::Avx512 => "avx512",
            Path::Neon => "neon",
        }
    }

    /// The path called `name` (as [`Path::name`] spells it).
    pub fn from_name(name: &str) -> Option<Path> {
        Path::ALL.into_iter().find(|p| p.name() == name)
    }

    /// True iff this CPU (and this build's architecture) can run the path.
    pub fn is_available(self) -> bool {
        match self {
            Path::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            Path::Sse2 => true,
            #[cfg(target_arch = "x86_64")]
            Path::Avx2 => {
                std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("f16c")
            }
            #[cfg(target_arch = "x86_64")]
            Path::Avx512 => {
                std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("f16c")
            }
            #[cfg(target_arch = "aarch64")]
            Path::Neon => std::arch::is_aarch64_feature_detected!("neon"),
            #[allow(unreachable_patterns)]
            _ => false,
        }
    }
}

/// The paths this CPU can run, narrowest first (always starts with [`Path::Scalar`]).
pub fn available() -> Vec<Path> {
    Path::ALL.into_iter().filter(|p| p.is_available()).collect()
}

/// The path the fast decoders use: the widest available one, capped by [`ENV_VAR`] when set.
/// An unknown value of the variable is ignored with a warning on stderr (once) rather than
/// failing every decode.
pub fn active() -> Path {
    static ACTIVE: OnceLock<Path> = OnceLock::new();
    *ACTIVE.get_or_init(|| {
        let env = std::env::var(ENV_VAR).ok();
        let (path, warning) = choose(&available(), env.as_deref());
        if let Some(w) = warning {
            eprintln!("warning: {w}");
        }
        path
    })
}

/// The widest of `available` not above the cap named by `env` (the [`ENV_VAR`] value), and a
/// warning when `env` names no path (then the cap is ignored).
pub(crate) fn choose(available: &[Path], env: Option<&str>) -> (Path, Option<String>) {
    let best = available.iter().copied().max().unwrap_or(Path::Scalar);
    match env {
        None => (best, None),
        Some(v) => match Path::from_name(v.trim()) {
            Some(cap) => (
                available
                    .iter()
                    .copied()
                    .filter(|&p| p <= cap)
                    .max()
                    .unwrap_or(Path::Scalar),
                None,
            ),
            None => (
                best,
                Some(format!(
                    "{ENV_VAR}={v:?} is not one of scalar, sse2, avx2, avx512, neon; using {}",
                    best.name()
                )),
            ),
        },
    }
}

/// True iff `codec` has per-path kernels here (the other codecs ignore the path).
#[cfg(feature = "internals")]
pub const fn has_kernels(codec: Codec) -> bool {
    matches!(
        codec,
        Codec::Pq2_0 | Codec::Q2_0G64 | Codec::Ptq1_0 | Codec::Tq1_0 | Codec::Tq2_0
    )
}

/// Decodes whole blocks with the fast decoder on `path`, whatever [`active`] says, stores as
/// [`Stores::Auto`] picks them: the same length contract as [`Codec::decode`]. Fails with
/// `codec.unsupported` when this CPU cannot run `path`. Codecs without per-path kernels decode with their one fast path.
#[cfg(any(test, feature = "internals"))]
pub fn decode_with(codec: Codec, path: Path, bytes: &[u8], out: &mut [f32]) -> Result<()> {
    decode_with_stores(codec, path, Stores::Auto, bytes, out)
}

/// Output elements decoded per staging step of a streamed decode: 8 KiB, L1-resident.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
const STAGE_ELEMS: usize = 2048;

/// How decoded values reach the output slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stores {
    /// What the dispatched decoders use: [`Stores::Streaming`] for an output of at least
    /// [`STREAM_FROM_BYTES`] on a machine whose [`StorePolicy`] streams, else
    /// [`Stores::Cached`] ([`Stores::resolve`]). Which kind wins at large sizes depends on the
    /// machine (benches/RESULTS.md, rows `decode/*/{path}` against `{path}+stream` at dram): on
    /// the Zen 4 VM ordinary stores were 1.07-1.85x the streamed rate at 80 MiB (the staging
    /// copy costs more than the read-for-ownership it saves); on the Intel Xeon VM of the
    /// 2026-12-02 evening runs streamed stores were 1.04-1.78x the ordinary ones (1.2-3.1x
    /// before the AVX-512 kernels stored aligned lines).
    Auto,
    /// Ordinary stores straight from the kernel.
    Cached,
    /// The kernel writes an L1-resident staging buffer of whole blocks, which is then copied
    /// to the output with non-temporal stores (`movntps`, SSE, baseline x86-64) and an
    /// `sfence`; the values are the kernel's, copied. Other architectures store ordinarily.
    Streaming,
}

/// Output size from which [`Stores::Auto`] may stream: an output this large would mostly have
/// left the caches (the Zen 4 VM's L3 is 32 MiB) before its reader gets to it.
pub const STREAM_FROM_BYTES: usize = 16 << 20;

/// Environment variable that sets the [`StorePolicy`] (`NINFER_STORES=auto|cached|stream`),
/// read once.
pub const STORES_ENV_VAR: &str = "NINFER_STORES";

/// Whether large outputs are streamed under [`Stores::Auto`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StorePolicy {
    /// Ordinary stores at every size.
    Cached,
    /// Non-temporal stores from [`STREAM_FROM_BYTES`] on.
    StreamLarge,
}

impl StorePolicy {
    /// The policy `env` (the [`STORES_ENV_VAR`] value) asks for on a CPU whose vendor string
    /// is `vendor`, and a warning when `env` names no policy. `auto` (or no value) streams on
    /// Intel CPUs, where the streamed rows measured faster, and nowhere else: the Zen 4 rows
    /// measured ordinary stores faster, and an unmeasured CPU keeps the simple kind.
    pub(crate) fn choose(vendor: &str, env: Option<&str>) -> (StorePolicy, Option<String>) {
        let by_cpu = if vendor == "GenuineIntel" {
            StorePolicy::StreamLarge
        } else {
            StorePolicy::Cached
        };
        match env.map(str::trim) {
            None | Some("auto") => (by_cpu, None),
            Some("cached") => (StorePolicy::Cached, None),
            Some("stream") => (StorePolicy::StreamLarge, None),
            Some(v) => (
                by_cpu,
                Some(format!(
                    "{STORES_ENV_VAR}={v:?} is not one of auto, cached, stream; using auto"
                )),
            ),
        }
    }

    /// The policy of this process: the choice for this CPU (Intel streams) and
    /// [`STORES_ENV_VAR`], read once (an unknown value warns on stderr once).
    pub fn active() -> StorePolicy {
        static POLICY: OnceLock<StorePolicy> = OnceLock::new();
        *POLICY.get_or_init(|| {
            let env = std::env::var(STORES_ENV_VAR).ok();
            let (policy, warning) = StorePolicy::choose(&cpu_vendor(), env.as_deref());
            if let Some(w) = warning {
                eprintln!("warning: {w}");
            }
            policy
        })
    }
}

/// The CPU's vendor string (`GenuineIntel`, `AuthenticAMD`, …); empty off x86-64.
pub fn cpu_vendor() -> String {
    #[cfg(target_arch = "x86_64")]
    {
        // CPUID leaf 0 exists on every x86-64 CPU; the vendor is EBX, EDX, ECX in that order.
        #[allow(unused_unsafe)]
        let r = unsafe { std::arch::x86_64::__cpuid(0) };
        let mut v = Vec::with_capacity(12);
        for w in [r.ebx, r.edx, r.ecx] {
            v.extend_from_slice(&w.to_le_bytes());
        }
        String::from_utf8_lossy(&v).into_owned()
    }
    #[cfg(not(target_arch = "x86_64"))]
    String::new()
}

impl Stores {
    /// The lower-case name the benches use (`auto`, `cached`, `stream`).
    #[cfg(any(test, feature = "internals"))]
    pub const fn name(self) -> &'static str {
        match self {
            Stores::Auto => "auto",
            Stores::Cached => "cached",
            Stores::Streaming => "stream",
        }
    }

    /// The concrete kind for an output of `out_elems` f32 values under `policy`: `Auto`
    /// becomes `Streaming` from [`STREAM_FROM_BYTES`] under [`StorePolicy::StreamLarge`], else
    /// `Cached`; the forced kinds stay as they are.
    pub fn resolve_with(self, policy: StorePolicy, out_elems: usize) -> Stores {
        match self {
            Stores::Auto
                if policy == StorePolicy::StreamLarge
                    && out_elems.saturating_mul(4) >= STREAM_FROM_BYTES =>
            {
                Stores::Streaming
            }
            Stores::Auto => Stores::Cached,
            forced => forced,
        }
    }

    /// [`Stores::resolve_with`] under this process's [`StorePolicy::active`].
    pub fn resolve(self, out_elems: usize) -> Stores {
        self.resolve_with(StorePolicy::active(), out_elems)
    }

    /// True iff this kind, for an output of `out_elems` values, writes with non-temporal
    /// stores.
    pub fn streams(self, out_elems: usize) -> bool {
        self.resolve(out_elems) == Stores::Streaming
    }
}

/// [`decode_with`] with the store kind forced too (tests and benches): the same length
/// contract and `codec.unsupported` refusal of a path this CPU cannot run.
#[cfg(any(test, feature = "internals"))]
pub fn decode_with_stores(
    codec: Codec,
    path: Path,
    stores: Stores,
    bytes: &[u8],
    out: &mut [f32],
) -> Result<()> {
    if !path.is_available() {
        return Err(unavailable(codec, path));
    }
    codec.check_decode(bytes, out.len())?;
    decode_blocks_stored(codec, path, stores, bytes, out);
    Ok(())
}

/// The `codec.unsupported` error of a path this CPU cannot run.
#[cfg(any(test, feature = "internals"))]
fn unavailable(codec: Codec, path: Path) -> Error {
    Error::new(
        ErrorClass::CodecUnsupported,
        codec.name(),
        format!(
            "decode path {} is not available on this CPU / architecture (available: {})",
            path.name(),
            available()
                .iter()
                .map(|p| p.name())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    )
}

/// Decodes whole blocks (lengths checked by the caller) on `path` with `stores`.
pub(crate) fn decode_blocks_stored(
    codec: Codec,
    path: Path,
    stores: Stores,
    bytes: &[u8],
    out: &mut [f32],
) {
    if !stores.streams(out.len()) {
        return codec.decode_blocks_on(path, bytes, out);
    }
    #[cfg(target_arch = "x86_64")]
    {
        let (bb, be) = (codec.block_bytes(), codec.block_elems());
        let per = (STAGE_ELEMS / be).max(1);
        // Line-aligned, so the kernels write it without the line writer's permutes.
        #[repr(C, align(64))]
        struct Stage([f32; STAGE_ELEMS]);
        let mut stage = Stage([0f32; STAGE_ELEMS]);
        for (src, dst) in bytes.chunks(per * bb).zip(out.chunks_mut(per * be)) {
            let st = &mut stage.0[..dst.len()];
            codec.decode_blocks_on(path, src, st);
            x86::stream_copy(path, st, dst);
        }
        x86::store_fence();
    }
    #[cfg(not(target_arch = "x86_64"))]
    codec.decode_blocks_on(path, bytes, out)
}

/// Staged base-3 kernel on `path` for stage widths `(W1, W2, WH)`; false when the path has no
/// kernel here (the caller then runs its portable loop).
#[inline]
pub(crate) fn staged<const W1: usize, const W2: usize, const WH: usize>(
    path: Path,
    bytes: &[u8],
    out: &mut [f32],
) -> bool {
    match path {
        #[cfg(target_arch = "x86_64")]
        Path::Sse2 | Path::Avx2 | Path::Avx512 => x86::staged::<W1, W2, WH>(path, bytes, out),
        #[cfg(target_arch = "aarch64")]
        Path::Neon => neon::staged::<W1, W2, WH>(bytes, out),
        _ => false,
    }
}

/// PQ2_0-family kernel (group `G`) on `path`; false when the path has no kernel here.
#[inline]
pub(crate) fn pq2<const G: usize>(path: Path, bytes: &[u8], out: &mut [f32]) -> bool {
    match path {
        #[cfg(target_arch = "x86_64")]
        Path::Sse2 | Path::Avx2 | Path::Avx512 => x86::pq2::<G>(path, bytes, out),
        #[cfg(target_arch = "aarch64")]
        Path::Neon => neon::pq2::<G>(bytes, out),
        _ => false,
    }
}

/// TQ2_0 kernel on `path`; false when the path has no kernel here.
#[inline]
pub(crate) fn tq2(path: Path, bytes: &[u8], out: &mut [f32]) -> bool {
    match path {
        #[cfg(target_arch = "x86_64")]
        Path::Sse2 | Path::Avx2 | Path::Avx512 => x86::tq2(path, bytes, out),
        #[cfg(target_arch = "aarch64")]
        Path::Neon => neon::tq2(bytes, out),
        _ => false,
    }
}

#[cfg(test)]
mod tests;
