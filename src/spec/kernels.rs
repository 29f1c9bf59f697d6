//! Typed view of `spec/kernels.json`: kernel ABIs, acceptance rules, reference kernels and
//! wrong variants (negative controls) of the CUDA kernel conformance checks (`src/cuda/`).

use serde::Deserialize;
use std::collections::BTreeMap;

/// `spec/kernels.json`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelsTable {
    /// Where the kernel ABI comes from (`_source`).
    #[serde(rename = "_source")]
    pub source: String,
    /// What the table is (`_doc`).
    #[serde(rename = "_doc")]
    pub doc: String,
    /// C parameter type → its PTX type and role.
    pub arg_types: BTreeMap<String, KernelArgType>,
    /// The activation and output layout (token-major f32), in words.
    pub activations: String,
    /// When an output passes.
    pub acceptance: KernelAcceptance,
    /// The kernel classes and their ABIs.
    pub classes: Vec<KernelClassSpec>,
    /// The shipped reference kernels.
    pub reference_kernels: Vec<KernelReference>,
    /// Precision modes and their derived bounds.
    pub precision: KernelPrecisionSpec,
    /// The binding vocabulary of ABI sidecars, per class (`_doc` first).
    pub bindings: BTreeMap<String, serde_json::Value>,
    /// The sidecar's schema, in words.
    pub sidecar: String,
    /// The NVRTC compile tier's settings.
    pub compile: KernelCompileSpec,
    /// The host tier's compiler settings.
    pub host: KernelHostSpec,
    /// The out-of-bounds-write guard around output buffers.
    pub guard: KernelGuard,
}

/// How one C parameter type is passed.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelArgType {
    /// Its PTX parameter type (`.u64`, `.u32`).
    pub ptx: String,
    /// What it carries, in words.
    pub role: String,
}

/// The two acceptance rules.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelAcceptance {
    /// Bit-exact classes.
    pub exact: ExactRule,
    /// Classes judged against a rounding-error bound.
    pub bounded: BoundedRule,
}

/// The rule of exact classes.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExactRule {
    /// The rule, in words.
    pub rule: String,
    /// Why it is exact.
    pub why: String,
}

/// The rule of bounded classes: a forward error bound plus an NMSE limit.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoundedRule {
    /// f32 unit roundoff `u`.
    pub unit_roundoff: f64,
    /// The per-output error bound formula.
    pub bound: String,
    /// Where the bound comes from.
    pub bound_why: String,
    /// The largest NMSE that passes.
    pub nmse_max: f64,
    /// The NMSE formula.
    pub nmse: String,
    /// Why that limit.
    pub nmse_why: String,
    /// What a report states per case.
    pub report: String,
    /// The rule's assumption about activations.
    pub activations_note: String,
}

/// One kernel class: its ABI, launch rule and acceptance.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelClassSpec {
    /// The class name.
    pub class: String,
    /// The entry's parameters, in order.
    pub args: Vec<KernelArg>,
    /// How it is launched.
    pub launch: KernelLaunchRule,
    /// `exact` or `bounded`.
    pub acceptance: String,
    /// The weight formats it applies to.
    pub formats: Vec<String>,
}

/// One parameter of a kernel entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelArg {
    /// Its name.
    pub name: String,
    /// Its C type (a key of `arg_types`).
    #[serde(rename = "type")]
    pub ty: String,
    /// The buffer's layout, in words (pointer parameters).
    #[serde(default)]
    pub layout: Option<String>,
}

/// Grid and block dimensions of a class.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelLaunchRule {
    /// Grid x, y, z.
    pub grid: Vec<GridDim>,
    /// Block x, y, z (threads).
    pub block: Vec<u32>,
}

/// One grid dimension of a launch rule: a constant or an expression over the entry's arguments
/// (e.g. `ceil(n / 4)`), kept as written for the ABI document.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum GridDim {
    /// A constant.
    Count(u32),
    /// An expression over the entry's arguments.
    Rule(String),
}

impl std::fmt::Display for GridDim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GridDim::Count(n) => write!(f, "{n}"),
            GridDim::Rule(r) => f.write_str(r),
        }
    }
}

/// A reference kernel shipped with the crate.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelReference {
    /// Its entry point.
    pub entry: String,
    /// Its class.
    pub class: String,
    /// The formats it handles.
    pub formats: Vec<String>,
    /// Its source file under `src/cuda/kernels/`.
    pub source: String,
}

/// The precision modes (spec/kernels.json `precision`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelPrecisionSpec {
    /// What a mode is.
    #[serde(rename = "_doc")]
    pub doc: String,
    /// The modes.
    pub modes: Vec<KernelPrecisionMode>,
    /// How modes combine.
    pub combine: String,
    /// Unit roundoff of f16 and bf16.
    pub unit_roundoff: BTreeMap<String, f64>,
    /// The exact classes' rule under a narrow output type.
    pub exact_rule: String,
    /// The bounded classes' rule under a mode.
    pub bounded_rule: String,
    /// The NMSE limit under a mode.
    pub nmse_rule: String,
    /// The q8_1 slack term.
    pub q8_1_slack: String,
    /// The negative controls per mode.
    pub negative_controls: String,
}

/// One precision mode.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelPrecisionMode {
    /// Its name on the command line and in sidecars.
    pub mode: String,
    /// The activation type.
    pub x: String,
    /// The output type.
    pub y: String,
    /// When to declare it.
    #[serde(rename = "use")]
    pub use_: String,
}

/// `spec/kernel_variants.json`: the kernels that prove the checker.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelVariantsTable {
    /// What the table is.
    #[serde(rename = "_doc")]
    pub doc: String,
    /// Wrong kernels the checker must catch.
    pub wrong_variants: Vec<KernelWrongVariant>,
    /// Correct kernels written unusually, which the checker must pass.
    pub unusual_correct: Vec<KernelUnusual>,
    /// Shared headers of the variant sources, in words.
    #[serde(default)]
    pub helper_headers: Option<serde_json::Value>,
    /// Per source file, the CUDA features it needs (headers, shuffles, vector types, ...).
    #[serde(default)]
    pub source_needs: Option<serde_json::Value>,
}

/// A deliberately wrong kernel and how it must be caught.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelWrongVariant {
    /// Its entry point.
    pub entry: String,
    /// Its class.
    pub class: String,
    /// The formats it is run on.
    pub formats: Vec<String>,
    /// Its source file under `src/cuda/kernels/`.
    pub source: String,
    /// The kind of bug (value-map, layout, shape, memory, concurrency, precision, arch).
    pub kind: String,
    /// The engine bug it imitates.
    pub mimics: String,
    /// The verdict it must get: `mismatch` or an error class id.
    pub expect: String,
    /// Which case property exposes it.
    pub caught_by: String,
    /// The wrong reading the diagnosis must name, when it imitates one.
    #[serde(default)]
    pub looks_like: Option<String>,
    /// Its ABI sidecar, when not the class ABI.
    #[serde(default)]
    pub abi: Option<serde_json::Value>,
}

/// A correct kernel written unusually.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelUnusual {
    /// Its entry point.
    pub entry: String,
    /// Its class.
    pub class: String,
    /// The formats it handles.
    pub formats: Vec<String>,
    /// Its source file under `src/cuda/kernels/`.
    pub source: String,
    /// What is unusual about it.
    pub what: String,
    /// Its ABI sidecar, when not the class ABI.
    #[serde(default)]
    pub abi: Option<serde_json::Value>,
}

/// The NVRTC compile tier.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelCompileSpec {
    /// Architectures every kernel is compiled for.
    pub archs: Vec<String>,
    /// Which NVRTC, and how it is loaded.
    pub nvrtc: String,
}

/// The host tier's compiler.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelHostSpec {
    /// The C++ compiler (and its override), in words.
    pub compiler: String,
    /// Compiler flags.
    pub flags: Vec<String>,
    /// Per-case time limit in seconds.
    pub timeout_s: u64,
}

/// The guard: NaN-pattern elements around and inside the output buffer before a launch.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelGuard {
    /// Guard elements on each side of the output.
    pub elems: usize,
    /// The sentinel's f32 bit pattern, as hex.
    pub bits: String,
    /// The rule, in words.
    pub rule: String,
}

impl KernelGuard {
    /// The sentinel f32 bit pattern.
    pub fn sentinel(&self) -> u32 {
        u32::from_str_radix(self.bits.trim_start_matches("0x"), 16).unwrap_or(0x7fa5_a5a5)
    }
}

impl KernelsTable {
    /// The class called `name`.
    pub fn class(&self, name: &str) -> Option<&KernelClassSpec> {
        self.classes.iter().find(|c| c.class == name)
    }
}
