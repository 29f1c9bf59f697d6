//! The verifier: ten gates (spec/gates.json `steps`, one [`Finding`] each) over a packed
//! folded-ternary `.ninfer` artifact and its source GGUF (spec/verifier.md#gates). Format-generic: geometry always from
//! `row_split_geometry`, block layout from the spec's plane slices, dimensions from the profile.
//!
//! One module per gate; each returns a [`Finding`]. Negative controls run inside their gate on
//! every invocation; a control that survives fails the gate.
//!
//! The entry point is [`verify()`]: artifact and GGUF bytes in, a [`Report`] out (one
//! [`Finding`] per gate, [`report::verdict_line`] for its one-line verdict); an `Err` means the
//! pair could not be judged at all, with the class that says why:
//!
//! ```
//! use ninfer_ternary::gguf::GgufWriter;
//! use ninfer_ternary::{verify, ErrorClass};
//!
//! // A GGUF of no known model profile: the pair cannot be judged (the CLI exits 2).
//! let mut w = GgufWriter::new();
//! w.kv("general.architecture", "llama");
//! let gguf = w.to_bytes(&[]).unwrap();
//! let e = verify::verify("a.ninfer", b"NINFER", "m.gguf", &gguf, verify::Options::default())
//!     .unwrap_err();
//! assert_eq!(e.class(), ErrorClass::PackProfile);
//! assert!(e.to_string().starts_with("[pack.profile] m.gguf"), "{e}");
//! ```

/// `return Err(Error::new(ErrorClass::$class, field, format!(...)))`: the verifier's classed
/// early return (every module below returns [`crate::Result`]).
macro_rules! fail {
    ($class:ident, $field:expr, $($arg:tt)+) => {
        return Err($crate::error::Error::new(
            $crate::error::ErrorClass::$class,
            $field,
            format!($($arg)+),
        ))
    };
}

/// `Error::new(ErrorClass::$class, field, format!(...))` (for `ok_or_else` / `map_err`).
macro_rules! err {
    ($class:ident, $field:expr, $($arg:tt)+) => {
        $crate::error::Error::new($crate::error::ErrorClass::$class, $field, format!($($arg)+))
    };
}

/// Gate `assembly`: the positional audits.
#[cfg(feature = "internals")]
pub mod assembly;
#[cfg(not(feature = "internals"))]
pub(crate) mod assembly;
#[cfg(test)]
mod cold_read_tests;
/// Gate `dense_values`: dense objects recomputed bit for bit.
#[cfg(feature = "internals")]
pub mod dense;
#[cfg(not(feature = "internals"))]
pub(crate) mod dense;
/// A dump directory as one byte string (the `dumps_parse` fuzz target).
#[cfg(feature = "internals")]
pub mod dump_bundle;
#[cfg(all(test, not(feature = "internals")))]
mod dump_bundle;
/// Writes a dump directory atomically.
#[cfg(feature = "internals")]
pub mod dump_dir;
#[cfg(not(feature = "internals"))]
pub(crate) mod dump_dir;
/// Dump formats, their parsers and the reference rotation math.
pub mod dumps;
/// Gate `embedding`: an activation dump against the inverse rotation.
#[cfg(feature = "internals")]
pub mod embedding;
#[cfg(not(feature = "internals"))]
pub(crate) mod embedding;
/// The engine tooling's embedding dump file.
#[cfg(feature = "internals")]
pub mod engine_dump;
#[cfg(not(feature = "internals"))]
pub(crate) mod engine_dump;
/// Findings and the report they make.
#[cfg(feature = "internals")]
pub mod findings;
#[cfg(not(feature = "internals"))]
pub(crate) mod findings;
/// `prism.hadamard.*` metadata against spec/hadamard.json (part of `signs`).
#[cfg(feature = "internals")]
pub mod hadamard_meta;
#[cfg(not(feature = "internals"))]
pub(crate) mod hadamard_meta;
/// The engine tooling's harness dump directories.
#[cfg(feature = "internals")]
pub mod harness;
#[cfg(not(feature = "internals"))]
pub(crate) mod harness;
/// The heap-peak probe the binary installs.
#[cfg(feature = "internals")]
pub mod heap;
#[cfg(not(feature = "internals"))]
pub(crate) mod heap;
/// Gate `inspect`: the container and every mapped object.
#[cfg(feature = "internals")]
pub mod inspect;
#[cfg(not(feature = "internals"))]
pub(crate) mod inspect;
/// Broken artifacts and dumps (spec/gates.json `mutations`).
#[cfg(feature = "internals")]
pub mod mutate;
#[cfg(not(feature = "internals"))]
pub(crate) mod mutate;
/// Gate `engine_oracles`: kernel dumps against the rotation math.
#[cfg(feature = "internals")]
pub mod oracles;
#[cfg(not(feature = "internals"))]
pub(crate) mod oracles;
/// Gate `payload_order`: row-split planes, not interleaved blocks.
#[cfg(feature = "internals")]
pub mod payload_order;
#[cfg(not(feature = "internals"))]
pub(crate) mod payload_order;
/// Gate `provenance`: identity and borrowed objects against the template.
#[cfg(feature = "internals")]
pub mod provenance;
#[cfg(not(feature = "internals"))]
pub(crate) mod provenance;
/// The writer of reference dumps.
#[cfg(feature = "internals")]
pub mod reference;
#[cfg(not(feature = "internals"))]
pub(crate) mod reference;
/// Text and JSON renderings of a report.
pub mod report;
/// Gates `row_order` and `row_order_sweep`.
#[cfg(feature = "internals")]
pub mod row_order;
#[cfg(not(feature = "internals"))]
pub(crate) mod row_order;
/// Row access to artifact objects and GGUF tensors, with fingerprints.
#[cfg(feature = "internals")]
pub mod rows;
#[cfg(not(feature = "internals"))]
pub(crate) mod rows;
/// The verifier's own index arithmetic for the row rules.
#[cfg(feature = "internals")]
pub mod rules;
#[cfg(not(feature = "internals"))]
pub(crate) mod rules;
/// Gate `signs`: sign objects and Hadamard metadata.
#[cfg(feature = "internals")]
pub mod signs;
#[cfg(not(feature = "internals"))]
pub(crate) mod signs;

pub use findings::{Failure, Finding, Report, Stats, Verdict};
/// Registers the binary's allocator peak probe, read by the verifier's stats line.
pub use heap::install as install_peak_probe;

pub use crate::error::{Error, ErrorClass, Result};
use crate::gguf::{self, Gguf, Mode};
use crate::ninfer::Artifact;
use crate::spec::{self, Dim, GateStep, ModelProfile, NumericFormat};
use rows::{ArtifactRows, Blocks, GgufRows};
use std::path::Path;
use std::sync::atomic::Ordering;

/// What `verify` was given besides the artifact and the GGUF.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options<'p> {
    /// The groupwise-int template (opens `provenance`).
    pub template: Option<&'p [u8]>,
    /// Run `row_order_sweep` over every layer.
    pub sweep: bool,
    /// Embedding activation dump directory (opens `embedding`).
    pub dump: Option<&'p Path>,
    /// Kernel-oracle dump directory (opens `engine_oracles`).
    pub oracle_dump: Option<&'p Path>,
    /// Restrict `engine_oracles` to the cases of this object.
    pub oracle_object: Option<&'p str>,
    /// The model profile by name (`--profile`; reduced GGUFs whose hparams do not identify it).
    pub profile: Option<&'p str>,
    /// `--dump-format` (default: a file is the engine's dump, a directory native or harness).
    pub dump_format: Option<DumpFormat>,
    /// The artifact is a minimal one (`pack --minimal`): judge it for the frontend, the sign
    /// table and the one layer [`crate::mapping::minimal_layer`] picks from the source's.
    pub minimal: bool,
}

/// The dump formats of spec/dumps.json, as `--dump-format` / `dump-reference --format` spell
/// them (clap refuses any other spelling before a command runs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum DumpFormat {
    /// This suite's manifest directories (`embedding/`, `oracles/`).
    Native,
    /// The engine's bf16 embedding dump file.
    Engine,
    /// The engine tooling's manifest-less harness directory (kernel oracles).
    Harness,
}

impl DumpFormat {
    /// The command-line spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            DumpFormat::Native => "native",
            DumpFormat::Engine => "engine",
            DumpFormat::Harness => "harness",
        }
    }
}

impl std::fmt::Display for DumpFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Everything a gate needs.
pub struct Ctx<'a> {
    /// The artifact under test.
    pub artifact: &'a Artifact<'a>,
    /// The source GGUF it was packed from.
    pub gguf: &'a Gguf<'a>,
    /// The groupwise-int template (`--template`).
    pub template: Option<&'a Artifact<'a>>,
    /// The model profile of the source.
    pub profile: ModelProfile,
    /// The layers the source GGUF holds (all of the profile's, or a reduced model's subset):
    /// the artifact must hold exactly these.
    pub layers: Vec<u64>,
    /// Global objects the mapping produces that this (reduced) source cannot: it holds no
    /// tensor they are made of (the public reduced test model has no vocabulary). The gates
    /// skip them and say so; a source with every layer has none.
    pub out_of_scope: Vec<String>,
    /// `Some(layer)` for a minimal artifact (`--minimal`): `layers` is that one layer, and
    /// every global object is out of scope too (the minimal artifact holds none).
    pub minimal: Option<u64>,
    /// The ternary format of both files.
    pub format: &'static NumericFormat,
    /// Its ggml block layout.
    pub blocks: Blocks,
    /// What the command line added.
    pub opts: Options<'a>,
}

/// First GDN layer, first attention layer, last GDN layer among `layers` (the profile's, or
/// those a reduced model holds); `Ok(None)` when `layers` holds no layer of that kind (a
/// minimal artifact, or a reduced source of attention layers only), `Err` for an unknown name.
pub fn find_named_layer(p: &ModelProfile, layers: &[u64], which: &str) -> Result<Option<u64>> {
    if !["first_gdn", "last_gdn", "first_attention"].contains(&which) {
        fail!(
            SpecInvalid,
            format!("{{{which}}}"),
            "unknown layer placeholder '{which}' (first_gdn, last_gdn, first_attention)"
        );
    }
    match named_layer(p, layers, which) {
        Ok(l) => Ok(Some(l)),
        Err(_) => Ok(None),
    }
}

/// First GDN layer, first attention layer, last GDN layer among `layers` (the profile's, or
/// those a reduced model holds).
pub(crate) fn named_layer(p: &ModelProfile, layers: &[u64], which: &str) -> Result<u64> {
    let gdn: Vec<u64> = layers
        .iter()
        .copied()
        .filter(|&l| !p.is_attention_layer(l))
        .collect();
    let att: Vec<u64> = layers
        .iter()
        .copied()
        .filter(|&l| p.is_attention_layer(l))
        .collect();
    match which {
        "first_gdn" => gdn.first().copied(),
        "last_gdn" => gdn.last().copied(),
        "first_attention" => att.first().copied(),
        _ => None,
    }
    .ok_or_else(|| {
        err!(
            VerifyInput,
            format!("{{{which}}}"),
            "profile {} has no layer '{which}' among layers {layers:?}",
            p.name
        )
    })
}

/// The layer indices an artifact holds (`text/layers/N/...` objects), ascending.
pub fn artifact_layers(a: &Artifact<'_>) -> Vec<u64> {
    let mut out: Vec<u64> = a
        .directory
        .objects
        .iter()
        .filter_map(|o| {
            o.name
                .strip_prefix("text/layers/")?
                .split('/')
                .next()?
                .parse()
                .ok()
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Substitutes `{first_gdn}`, `{first_attention}`, `{last_gdn}` and `{l}` in a spec name.
pub fn resolve_name(p: &ModelProfile, layers: &[u64], s: &str, l: Option<u64>) -> Result<String> {
    let mut out = s.to_string();
    for w in ["first_gdn", "first_attention", "last_gdn"] {
        let key = format!("{{{w}}}");
        if out.contains(&key) {
            out = out.replace(&key, &named_layer(p, layers, w)?.to_string());
        }
    }
    if let Some(l) = l {
        out = out.replace("{l}", &l.to_string());
    }
    Ok(out)
}

/// A profile dimension by number or name.
pub(crate) fn dim(p: &ModelProfile, d: &Dim) -> Result<u64> {
    p.dim(d).ok_or_else(|| {
        err!(
            SpecInvalid,
            "dimension",
            "profile {} lacks dimension {d:?}",
            p.name
        )
    })
}

impl<'a> Ctx<'a> {
    /// Rows of a ternary artifact object, checked to be in the artifact's ternary format.
    pub fn artifact_rows(&self, name: &str) -> Result<ArtifactRows<'a>> {
        if self.artifact.directory.find(name).is_none() {
            fail!(NinferObjectMissing, name, "absent from the artifact");
        }
        let v = self.artifact.row_split(name)?;
        if v.format.name != self.format.name {
            fail!(
                VerifyInput,
                name,
                "is {}, not {}",
                v.format.name,
                self.format.name
            );
        }
        ArtifactRows::new(v, self.blocks)
    }

    /// Rows of a ternary GGUF tensor in the source's format.
    pub fn gguf_rows(&self, name: &str) -> Result<GgufRows<'a>> {
        let t = self
            .gguf
            .tensor(name)
            .ok_or_else(|| err!(GgufTensorMissing, name, "absent from the GGUF"))?;
        GgufRows::new(self.gguf, t, self.format, &self.blocks)
    }

    /// A dimension of the profile.
    pub fn dim(&self, d: &Dim) -> Result<u64> {
        dim(&self.profile, d)
    }

    /// A spec name with its layer placeholders resolved.
    pub fn name(&self, s: &str, l: Option<u64>) -> Result<String> {
        resolve_name(&self.profile, &self.layers, s, l)
    }

    /// Whether `object` is one this artifact is not expected to hold: the reduced source
    /// cannot produce it ([`Ctx::out_of_scope`]), or it is a global object and the artifact is
    /// a minimal one ([`Ctx::minimal`]).
    pub fn is_out_of_scope(&self, object: &str) -> bool {
        self.why_out_of_scope(object).is_some()
    }

    /// Why `object` is out of scope (the words a SKIPPED line prints), `None` when it is not.
    pub fn why_out_of_scope(&self, object: &str) -> Option<String> {
        if self.out_of_scope.iter().any(|o| o == object) {
            return Some(format!(
                "{object} is not in the reduced source (it holds no tensor it is made of)"
            ));
        }
        let l = self.minimal?;
        let layer_prefix = format!("text/layers/{l}/");
        let is_global_produced = object.starts_with("text/")
            && !object.starts_with("text/layers/")
            && !mapping_sign_object(object);
        (is_global_produced
            || (object.starts_with("text/layers/") && !object.starts_with(&layer_prefix)))
        .then(|| format!("{object} is not in a minimal artifact (frontend, sign table, layer {l})"))
    }

    /// The layer a spec placeholder (`first_gdn`, `first_attention`, `last_gdn`) names among
    /// this artifact's layers; `Ok(None)` when they hold none of that kind.
    pub fn named_layer(&self, which: &str) -> Result<Option<u64>> {
        find_named_layer(&self.profile, &self.layers, which)
    }

    /// Why the spec name `s` cannot be resolved in this artifact: it names a placeholder
    /// layer (`{first_gdn}`, ...) of a kind the artifact holds none of. `None` when it can.
    pub fn unresolvable(&self, s: &str) -> Option<String> {
        ["first_gdn", "first_attention", "last_gdn"]
            .into_iter()
            .find(|w| s.contains(&format!("{{{w}}}")) && matches!(self.named_layer(w), Ok(None)))
            .map(|w| self.why_no_layer(w))
    }

    /// Why a placeholder's layer is absent (the words a SKIPPED line prints).
    pub fn why_no_layer(&self, which: &str) -> String {
        let kind = if which.ends_with("_gdn") {
            "Gated-DeltaNet"
        } else {
            "full-attention"
        };
        match self.minimal {
            Some(l) => format!(
                "needs a {kind} layer ({{{which}}}); the minimal artifact holds layer {l} only"
            ),
            None => format!(
                "needs a {kind} layer ({{{which}}}); the reduced source holds layers {:?}",
                self.layers
            ),
        }
    }
}

/// True if `object` is one of the sign objects (spec/mapping.json `sign_objects`), which
/// every artifact holds, minimal ones included.
fn mapping_sign_object(object: &str) -> bool {
    spec::mapping()
        .sign_objects
        .iter()
        .any(|s| s.target == object)
}

/// The produced global objects `g` (holding `layers`) cannot make: a reduced source without
/// the global's tensors. Read from spec/mapping.json through `mapping`, as the packer reads it.
fn out_of_scope(g: &Gguf<'_>, profile: &ModelProfile, layers: &[u64]) -> Vec<String> {
    let can: std::collections::HashSet<String> =
        crate::mapping::producible_objects(profile, layers, &|n| g.tensor(n).is_some())
            .into_iter()
            .map(|o| o.name)
            .collect();
    crate::mapping::produced_objects_in(profile, layers)
        .into_iter()
        .filter(|o| !can.contains(&o.name))
        .map(|o| o.name)
        .collect()
}

/// The ternary format of an artifact's row-split objects (the first ternary one found).
pub(crate) fn artifact_format(a: &Artifact<'_>) -> Option<&'static NumericFormat> {
    a.directory.objects.iter().find_map(|o| {
        let (f, _) = o.format_layout()?;
        spec::get().format(f).filter(|f| f.ternary.is_some())
    })
}

/// The error of an artifact with no ternary object (nothing to verify or dump).
pub(crate) fn no_ternary() -> Error {
    err!(
        VerifyInput,
        "objects",
        "the artifact holds no ternary (PQ2_0_G128 / PTQ1_0_G128) object"
    )
}

/// The profile an artifact has: by its token_embedding shape [vocab, hidden], or, for an
/// artifact without one (a reduced model without vocabulary, a minimal artifact), the one
/// profile whose mapping gives every produced object of the artifact's layers its shape.
pub fn profile_for_artifact(a: &Artifact<'_>) -> Result<ModelProfile> {
    let profiles = || {
        spec::PROFILES
            .iter()
            .filter_map(|(name, _)| spec::profile(name))
    };
    let Some(e) = a.directory.find("text/token_embedding") else {
        return profile_by_layer_shapes(a, profiles());
    };
    let s = e.shape();
    if let Some(p) = profiles().find(|p| s == [p.vocab, p.hidden]) {
        return Ok(p);
    }
    fail!(
        VerifyInput,
        "text/token_embedding",
        "no profile in spec/models has token_embedding shape {s:?}"
    )
}

/// [`profile_for_artifact`] without `text/token_embedding`: the profiles under which every
/// produced object the artifact holds has the mapped shape (and at least one is held).
fn profile_by_layer_shapes(
    a: &Artifact<'_>,
    profiles: impl Iterator<Item = ModelProfile>,
) -> Result<ModelProfile> {
    let layers = artifact_layers(a);
    let mut fits: Vec<ModelProfile> = profiles
        .filter(|p| layers.iter().all(|&l| l < p.n_layers))
        .filter(|p| {
            let mut held = 0;
            let all_fit = crate::mapping::produced_objects_in(p, &layers)
                .iter()
                .all(|o| match a.directory.find(&o.name) {
                    None => true,
                    Some(x) => {
                        held += 1;
                        x.shape() == o.shape.as_slice()
                    }
                });
            all_fit && held > 0
        })
        .collect();
    match fits.len() {
        1 => Ok(fits.remove(0)),
        0 => fail!(
            NinferObjectMissing,
            "text/token_embedding",
            "the artifact has no text/token_embedding, and no profile in spec/models gives its layer objects (layers {layers:?}) their shapes"
        ),
        _ => fail!(
            VerifyInput,
            "text/token_embedding",
            "the artifact has no text/token_embedding, and its layer objects fit several profiles: {}",
            fits.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// The file name part of a path (reports never carry directories).
pub fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.display().to_string())
}

/// The report of an artifact that does not open: `inspect` fails with the reader's error, every
/// other gate is skipped and says why.
fn unopened_findings(e: &Error) -> Vec<Finding> {
    spec::gates()
        .steps
        .iter()
        .map(|s| {
            if s.step == GateStep::Inspect {
                Finding::fail(s.step.as_str(), format!("the artifact does not open: {e}"))
            } else {
                Finding::skip(s.step.as_str(), "the artifact does not open (see inspect)")
            }
        })
        .collect()
}

/// The artifact holds ternary objects of the GGUF's format (else every row comparison would
/// fail with matched=0: an input mistake, not a verdict).
fn same_format(
    a: &Artifact<'_>,
    gformat: &NumericFormat,
    artifact_name: &str,
    gguf_name: &str,
) -> Result<()> {
    let aformat = artifact_format(a).ok_or_else(|| {
        err!(
            VerifyInput,
            artifact_name,
            "{artifact_name} holds no ternary (PQ2_0_G128 / PTQ1_0_G128) object"
        )
    })?;
    if aformat.name != gformat.name {
        fail!(
            VerifyInput,
            "--gguf",
            "format mismatch: {gguf_name} is {} but {artifact_name} holds {}; every row comparison would fail with matched=0. Pass the GGUF the artifact was packed from (--gguf).",
            gformat.name,
            aformat.name
        );
    }
    Ok(())
}

/// The layer a `pack --minimal` artifact of this source holds (`--minimal`).
fn minimal_layer_of(profile: &ModelProfile, layers: &[u64], gguf_name: &str) -> Result<u64> {
    crate::mapping::minimal_layer(profile, layers).ok_or_else(|| {
        err!(
            VerifyInput,
            "--minimal",
            "{gguf_name} holds no full-attention layer (layers {layers:?}), so no minimal artifact can be packed from it"
        )
    })
}

/// Runs every gate. `Err` is a usage/input problem (unreadable GGUF, format mismatch): exit 2.
pub fn verify(
    artifact_name: &str,
    artifact: &[u8],
    gguf_name: &str,
    gguf_bytes: &[u8],
    opts: Options<'_>,
) -> Result<Report> {
    let g = gguf::parse(gguf_bytes, Mode::Strict).map_err(|e| within(e, gguf_name))?;
    let (profile, layers) = crate::mapping::profile::resolve_profile(&g, opts.profile)
        .map_err(|e| within(e, gguf_name))?;
    let gformat = crate::mapping::profile::ternary_format(&g).map_err(|e| within(e, gguf_name))?;
    let template = match opts.template {
        Some(t) => Some(Artifact::parse(t).map_err(|e| within(e, "template"))?),
        None => None,
    };
    let mut report = Report {
        artifact: artifact_name.into(),
        gguf: gguf_name.into(),
        format: gformat.name.clone(),
        profile: profile.name.clone(),
        preamble: Vec::new(),
        findings: Vec::new(),
        stats: Stats::default(),
    };
    // Not a .ninfer at all (no magic, or another container's): an input error, not a verdict
    // on an artifact. Asked of the reader, not read off the error of a full parse.
    crate::ninfer::check_magic(artifact).map_err(|e| within(e, artifact_name))?;
    let a = match Artifact::parse(artifact) {
        Ok(a) => a,
        Err(e) => {
            report.findings = unopened_findings(&e);
            return Ok(report);
        }
    };
    same_format(&a, gformat, artifact_name, gguf_name)?;
    let blocks = Blocks::for_format(gformat)?;
    let (layers, minimal) = match opts.minimal {
        false => (layers, None),
        true => {
            let l = minimal_layer_of(&profile, &layers, gguf_name)?;
            (vec![l], Some(l))
        }
    };
    let ctx = Ctx {
        artifact: &a,
        gguf: &g,
        template: template.as_ref(),
        out_of_scope: out_of_scope(&g, &profile, &layers),
        minimal,
        profile,
        layers,
        format: gformat,
        blocks,
        opts,
    };
    // The byte counters are process-wide: a concurrent verification in the same process would
    // add its reads to this report's (the CLI runs one).
    let read0 = rows::BYTES_READ.load(Ordering::Relaxed);
    let direct0 = crate::fsio::bulk::DIRECT_BYTES.load(Ordering::Relaxed);
    let (findings, gate_seconds) = run_gates(&ctx);
    report.findings = findings;
    report.stats = Stats {
        payload_bytes_read: rows::BYTES_READ
            .load(Ordering::Relaxed)
            .saturating_sub(read0),
        direct_bytes_read: crate::fsio::bulk::DIRECT_BYTES
            .load(Ordering::Relaxed)
            .saturating_sub(direct0),
        gate_seconds,
    };
    Ok(report)
}

/// `e` with `what` (a file, an object) put in front of its field: the context a caller adds.
pub(crate) fn within(e: Error, what: &str) -> Error {
    let field = if e.field().is_empty() {
        what.to_string()
    } else {
        format!("{what}: {}", e.field())
    };
    e.with_field(field)
}

fn guarded(step: &str, f: impl FnOnce() -> Result<Finding>) -> (Finding, f64) {
    let t0 = std::time::Instant::now();
    let out = f().unwrap_or_else(|e| Finding::fail(step, e.to_string()));
    (out, t0.elapsed().as_secs_f64())
}

/// One gate, timed.
fn run_step(ctx: &Ctx<'_>, step: GateStep) -> (Finding, f64) {
    let key = step.as_str();
    match step {
        GateStep::Provenance => guarded(key, || provenance::run(ctx)),
        GateStep::Inspect => guarded(key, || inspect::run(ctx)),
        GateStep::PayloadOrder => guarded(key, || payload_order::run(ctx)),
        GateStep::RowOrder => guarded(key, || row_order::run(ctx)),
        GateStep::RowOrderSweep => guarded(key, || row_order::sweep(ctx)),
        GateStep::Assembly => guarded(key, || assembly::run(ctx)),
        GateStep::Signs => guarded(key, || signs::run(ctx)),
        GateStep::DenseValues => guarded(key, || dense::run(ctx)),
        GateStep::Embedding => guarded(key, || embedding::run(ctx)),
        GateStep::EngineOracles => guarded(key, || oracles::run(ctx)),
    }
}

/// The gates that take longest on a full-scale model, started first so the short ones fill
/// the other cores around them (only the schedule; the report keeps spec order).
const LONG_FIRST: [GateStep; 4] = [
    GateStep::DenseValues,
    GateStep::RowOrderSweep,
    GateStep::Assembly,
    GateStep::Provenance,
];

/// The ten gates of spec/gates.json `steps`, reported in spec order. Five open only with an
/// input (`provenance` a template, `row_order_sweep` `--sweep`, `signs` a folded GGUF,
/// `embedding` and `engine_oracles` a dump); without it they SKIP naming it. The gates are
/// independent reads of the same inputs, so they run concurrently on every core (each gate's
/// finding is computed exactly as it would be alone). Returns the findings and the wall
/// seconds of each gate.
fn run_gates(ctx: &Ctx<'_>) -> (Vec<Finding>, Vec<(String, f64)>) {
    let steps = &spec::gates().steps;
    let mut order: Vec<usize> = (0..steps.len()).collect();
    order.sort_by_key(|&i| {
        LONG_FIRST
            .iter()
            .position(|&s| s == steps[i].step)
            .unwrap_or(LONG_FIRST.len())
    });
    let mut done = crate::pool::queue(
        crate::pool::global(),
        steps.len(),
        order.len(),
        std::thread::Builder::new,
        || (),
        |_, k| {
            let i = order[k];
            let (f, secs) = run_step(ctx, steps[i].step);
            (i, f, secs)
        },
        |_| (),
    );
    done.sort_by_key(|d| d.0);
    let seconds = done
        .iter()
        .map(|(i, _, secs)| (steps[*i].step.as_str().to_string(), *secs))
        .collect();
    (done.into_iter().map(|(_, f, _)| f).collect(), seconds)
}

/// The SKIP finding of a step, naming what opens it (from the spec).
pub(crate) fn skip_naming(step: &str) -> Finding {
    let s = spec::gates().step(step).and_then(|s| s.skip_names.clone());
    Finding::skip(
        step,
        format!("not run: needs {}", s.unwrap_or_else(|| "its input".into())),
    )
}

/// Reads a file of a dump directory, refusing names with path separators.
pub(crate) fn read_dump_file(dir: &Path, name: &str) -> Result<Vec<u8>> {
    if name.is_empty() || name.contains('/') || name.contains('\\') || name == ".." {
        fail!(
            DumpFormat,
            name,
            "dump file name '{name}' must be a plain file name"
        );
    }
    crate::fsio::read_input(&dir.join(name)).map_err(|e| within(e, &format!("dump file {name}")))
}
