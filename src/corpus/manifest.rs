//! `conformance/MANIFEST.json`: the truth beside every corpus file (PROTOCOL.md §2).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// Bumped when the manifest's shape changes.
pub const SCHEMA_VERSION: u32 = 2;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// `y_`: must accept, and the observation must match.
    Accept,
    /// `n_`: must reject.
    Reject,
    /// `i_`: either; an accepted observation must match; never crash.
    Either,
}

impl Outcome {
    pub fn from_name(name: &str) -> Option<Outcome> {
        match name.get(..2) {
            Some("y_") => Some(Outcome::Accept),
            Some("n_") => Some(Outcome::Reject),
            Some("i_") => Some(Outcome::Either),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    pub outcome: Outcome,
    /// Rejects: parse, validate or decode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// Rejects: the `spec/errors.json` class id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    /// Accepts (and `i_` cases the reference accepts): the observation to contain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observation: Option<Value>,
    /// `i_` cases: what the reference reader does (`accept`, or `reject <class>`), for information.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseEntry {
    /// `family/name`, name starting with `y_`, `n_` or `i_`.
    pub id: String,
    /// Path relative to the corpus root.
    pub file: String,
    pub sha256: String,
    pub bytes: u64,
    /// The family (codec, gguf, ninfer, pack, verify). Not a rule layer: see `rule_layer`.
    pub layer: String,
    /// `n_` cases: the rule layer that refuses the input — `mainline`, `loader`,
    /// `recommended` or `spec` (PROTOCOL.md §2.1). Absent on `y_` and `i_` cases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule_layer: Option<String>,
    /// The request kind (codec, gguf, ninfer, rows, pack).
    pub kind: String,
    pub params: Value,
    /// Extra corpus files the case reads (relative paths), passed to adapters as `inputs`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<String>,
    pub features: Vec<String>,
    pub expect: Expect,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub derived_from: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recipe: Option<String>,
    pub spec_refs: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FamilyCount {
    pub cases: usize,
    pub y: usize,
    pub n: usize,
    pub i: usize,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pending {
    pub family: String,
    pub hook: String,
    pub why: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub schema_version: u32,
    pub protocol_version: u32,
    /// `sha256:` of the spec tables the corpus was generated from.
    pub spec_version: String,
    pub generator: String,
    pub families: BTreeMap<String, FamilyCount>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<Pending>,
    pub cases: Vec<CaseEntry>,
}

impl Manifest {
    pub fn load(path: &std::path::Path) -> anyhow::Result<Manifest> {
        let text = crate::fsio::read_input_string(path)?;
        serde_json::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
    }
}
