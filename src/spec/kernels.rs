//! Typed view of `spec/kernels.json`: kernel ABIs, acceptance rules, reference kernels and
//! wrong variants (negative controls) of the CUDA kernel conformance checks (`src/cuda/`).

use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelsTable {
    #[serde(rename = "_source")]
    pub source: String,
    #[serde(rename = "_doc")]
    pub doc: String,
    pub arg_types: BTreeMap<String, KernelArgType>,
    pub activations: String,
    pub acceptance: KernelAcceptance,
    pub classes: Vec<KernelClassSpec>,
    pub reference_kernels: Vec<KernelReference>,
    pub wrong_variants: Vec<KernelWrongVariant>,
    pub compile: KernelCompileSpec,
    pub host: KernelHostSpec,
    pub guard: KernelGuard,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelArgType {
    pub ptx: String,
    pub role: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelAcceptance {
    pub exact: ExactRule,
    pub bounded: BoundedRule,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExactRule {
    pub rule: String,
    pub why: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoundedRule {
    pub unit_roundoff: f64,
    pub bound: String,
    pub bound_why: String,
    pub nmse_max: f64,
    pub nmse: String,
    pub nmse_why: String,
    pub report: String,
    pub activations_note: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelClassSpec {
    pub class: String,
    pub args: Vec<KernelArg>,
    pub launch: KernelLaunchRule,
    /// `exact` or `bounded`.
    pub acceptance: String,
    pub formats: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelArg {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: String,
    #[serde(default)]
    pub layout: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelLaunchRule {
    pub grid: Vec<GridDim>,
    pub block: Vec<u32>,
}

/// One grid dimension of a launch rule: a constant or an expression over the entry's arguments
/// (e.g. `ceil(n / 4)`), kept as written for the ABI document.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum GridDim {
    Count(u32),
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

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelReference {
    pub entry: String,
    pub class: String,
    pub formats: Vec<String>,
    pub source: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelWrongVariant {
    pub entry: String,
    pub class: String,
    pub format: String,
    pub source: String,
    pub mimics: String,
    pub must_fail: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelCompileSpec {
    pub archs: Vec<String>,
    pub nvrtc: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelHostSpec {
    pub compiler: String,
    pub flags: Vec<String>,
    pub timeout_s: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelGuard {
    pub elems: usize,
    pub bits: String,
    pub rule: String,
}

impl KernelGuard {
    /// The sentinel f32 bit pattern.
    pub fn sentinel(&self) -> u32 {
        u32::from_str_radix(self.bits.trim_start_matches("0x"), 16).unwrap_or(0x7fa5_a5a5)
    }
}

impl KernelsTable {
    pub fn class(&self, name: &str) -> Option<&KernelClassSpec> {
        self.classes.iter().find(|c| c.class == name)
    }
}
